"""SVT-PATE that a user can use (issue 13 item 5): the note of a run that answers little
and its suggestion, ``--svt-cutoff auto``, and the ``svt`` JSON keys (math:svt)."""

from __future__ import annotations

import math
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

import pate_cli
from pate_cli.accounting.svt_tuning import (
    answers_are_few,
    cutoff_candidates,
    largest_threshold_for,
    noiseless_answers,
)
from pate_cli.errors import OptionError

ROOT = Path(__file__).resolve().parents[2]
MNIST = str(ROOT / "sample_votes/mnist_250_votes.npy")
ADULT = str(ROOT / "sample_votes/adult_250_votes.npy")
LETTER = str(ROOT / "sample_votes/letter_100_votes.npy")


def analyze(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pate_cli.analyze(*args, **kwargs)


def few_note(result) -> str | None:
    notes = [note for note in result.warnings if note.startswith("SVT-PATE answered")]
    assert len(notes) <= 1
    return notes[0] if notes else None


def answered(result) -> int:
    return int(np.count_nonzero(result.label >= 0))


# --- pieces ------------------------------------------------------------------------------

def test_cutoff_candidates_are_about_three_per_decade_up_to_the_queries():
    assert cutoff_candidates(9000) == [1, 2, 3, 5, 7, 10, 15, 20, 30, 50, 70, 100, 150, 200,
                                       300, 500, 700, 1000, 1500, 2000, 3000, 5000, 7000]
    assert cutoff_candidates(1) == [1] and cutoff_candidates(0) == [1]


def test_few_means_under_one_percent_or_none():
    assert answers_are_few(0, 10) and answers_are_few(0, 1)
    assert answers_are_few(89, 9000) and not answers_are_few(90, 9000)
    assert not answers_are_few(1, 100)


def test_noiseless_answers_by_hand():
    d = np.array([5.0, 1.0, 7.0, 0.0, 9.0, 2.0])
    # w = 3: unstable at 1 (1st) and 3 (2nd); cut-off 2 halts before query 3: answers 0, 2.
    assert noiseless_answers(d, 3.0, 2) == 2
    assert noiseless_answers(d, 3.0, 1) == 1       # halts before query 1
    assert noiseless_answers(d, 3.0, 10) == 3      # never halts: 5, 7, 9
    assert noiseless_answers(d, 9.0, 10) == 0      # 9 is not above 9
    # the largest threshold leaving 3 answers with cut-off 10 is just below 5
    w = largest_threshold_for(d, 10, 3)
    assert 4.999 < w < 5 and noiseless_answers(d, w, 10) == 3
    # with cut-off 1, query 3 (d = 0) halts every run with w >= 0: 3 answers at most
    assert 0.999 < largest_threshold_for(d, 1, 3) < 1
    assert largest_threshold_for(d, 1, 4) is None


# --- the few-answers note ------------------------------------------------------------------

@pytest.mark.parametrize("kwargs", [
    dict(svt_scale=2.5, svt_cutoff=100), dict(svt_scale=0.5, svt_cutoff=10),
    dict(svt_scale=0.5, svt_cutoff=100), dict(svt_scale=0.2, svt_cutoff=30),
    dict(svt_scale=1.5, svt_cutoff=5), dict(svt_scale=0.05, svt_cutoff=3),
    dict(target_epsilon=8.0, svt_cutoff=20), dict(target_epsilon=60.0, svt_cutoff=30),
])
def test_the_note_appears_exactly_when_few_queries_are_answered(kwargs):
    result = analyze(MNIST, "svt", queries=2000, **kwargs)
    count = answered(result)
    few = count == 0 or count < 0.01 * 2000
    assert (few_note(result) is not None) == few, (count, result.warnings)
    # and no order-grid note from SVT runs
    assert not any("grid" in note for note in result.warnings)


def suggested(note: str) -> tuple[float | None, float]:
    scale = re.search(r"--svt-scale ([0-9.e+-]+)", note)
    target = re.search(r"--target-epsilon ([0-9.e+-]+)", note)
    return (float(scale.group(1)) if scale else None), float(target.group(1))


@pytest.mark.parametrize("path, kwargs", [
    (MNIST, dict()),                                       # the defaults: 0 answered
    (MNIST, dict(queries=2000, target_epsilon=8.0, svt_cutoff=20)),
    (ADULT, dict(svt_scale=1.4, svt_cutoff=10)),           # 11 of 16281
    (LETTER, dict()),                                      # 100 teachers
])
def test_the_suggested_scale_and_target_really_answer_when_run(path, kwargs):
    result = analyze(path, "svt", **kwargs)
    note = few_note(result)
    assert note is not None and "threshold w = " in note
    assert f"{float(np.max(result.columns['distance'])):g}" in note
    scale, target = suggested(note)
    goal = 1 if answered(result) == 0 else math.ceil(0.01 * result.queries)
    cutoff = result.svt.cutoff
    queries = kwargs.get("queries")
    if scale is not None:
        assert scale < result.svt.scale
        again = analyze(path, "svt", svt_scale=scale, svt_cutoff=cutoff, queries=queries)
        assert answered(again) >= goal
    by_target = analyze(path, "svt", target_epsilon=target, svt_cutoff=cutoff,
                        queries=queries)
    assert answered(by_target) >= goal
    assert by_target.epsilon <= target * (1 + 1e-12)


def test_a_fixed_threshold_above_every_distance_says_to_lower_it():
    result = analyze(MNIST, "svt", queries=500, svt_scale=0.5, svt_threshold=140.0)
    note = few_note(result)
    assert answered(result) == 0 and "lower --svt-threshold below 124" in note


# --- --svt-cutoff auto ---------------------------------------------------------------------

@pytest.mark.parametrize("path, target", [(MNIST, 8.0), (ADULT, 14.3), (MNIST, 30.0)])
def test_cutoff_auto_answers_at_least_as_many_as_every_fixed_cutoff_tried(path, target):
    auto = analyze(path, "svt", target_epsilon=target, svt_cutoff="auto", queries=3000)
    tried = auto.svt.cutoffs_tried
    assert auto.svt.cutoff_from_search and len(tried) >= 10
    assert auto.epsilon == pytest.approx(target, rel=1e-9)
    best = answered(auto)
    for entry in tried:
        fixed = analyze(path, "svt", target_epsilon=target, svt_cutoff=entry["cutoff"],
                        queries=3000)
        assert answered(fixed) == entry["answered"] <= best
        assert fixed.svt.scale == entry["scale"]
    # the chosen run is the fixed run at the chosen cut-off, label for label
    same = analyze(path, "svt", target_epsilon=target, svt_cutoff=auto.svt.cutoff,
                   queries=3000)
    np.testing.assert_array_equal(same.label, auto.label)
    # and it says that the choice looked at the votes
    assert any("--svt-cutoff auto chose cut-off" in note for note in auto.warnings)


def test_cutoff_auto_is_recorded_in_json():
    summary = analyze(MNIST, "svt", target_epsilon=8.0, svt_cutoff="auto").to_dict()
    svt = summary["svt"]
    assert svt["cutoff_from_search"] is True and summary["params"]["svt_cutoff"] == svt["cutoff"]
    assert svt["cutoff"] in [entry["cutoff"] for entry in svt["cutoffs_tried"]]
    assert summary["answered"] == max(entry["answered"] for entry in svt["cutoffs_tried"])


@pytest.mark.parametrize("kwargs", [dict(svt_cutoff="auto"),
                                    dict(svt_cutoff="auto", svt_scale=1.0)])
def test_cutoff_auto_needs_a_target_epsilon(kwargs):
    with pytest.raises(OptionError, match="--svt-cutoff auto needs --target-epsilon"):
        pate_cli.analyze(MNIST, "svt", **kwargs)


# --- the bound in JSON ---------------------------------------------------------------------

def test_json_says_which_bound_and_pure_has_no_order():
    pure = analyze(MNIST, "svt", svt_scale=1.4, svt_cutoff=10, queries=500).to_dict()
    assert pure["svt"]["bound"] == "pure" and pure["order"] is None
    assert pure["epsilon"] == pytest.approx(10 * 2 / 1.4, rel=1e-15)
    line = analyze(MNIST, "svt", svt_scale=2.5, queries=500).to_dict()  # cut-off 100
    assert line["svt"]["bound"] == "rdp" and 1 < line["order"] < 2
    assert line["epsilon"] < 100 * 2 / 2.5
    rho, log_term = 2 * 100 / 2.5**2, math.log(2 / 1e-5)
    closed = rho + 2 * math.sqrt(rho * log_term)  # raised by the 2^-40 rounding margin
    assert closed <= line["epsilon"] == pytest.approx(closed, rel=1e-12)
    assert line["rdp_at_order"]["selection"] == pytest.approx(line["order"] * rho, rel=1e-14)


def test_per_query_cumulative_epsilon_is_the_continuous_guarantee_so_far():
    from pate_cli.accounting.svt import svt_epsilon

    result = analyze(MNIST, "svt", svt_scale=3.0, svt_cutoff=40, queries=300)
    rounds = np.minimum(40, np.cumsum(result.columns["unstable"]) + 1)
    expected, _, _ = svt_epsilon(scale=3.0, rounds=rounds, delta=result.svt.delta1)
    np.testing.assert_allclose(result.epsilon_cumulative, expected, rtol=1e-15)
    assert np.all(np.diff(result.epsilon_cumulative) >= 0)
    assert result.epsilon_cumulative[-1] <= result.epsilon


def test_the_api_issues_the_notes_as_pate_warnings_not_grid_warnings():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pate_cli.analyze(MNIST, "svt", target_epsilon=8.0, svt_cutoff="auto")
    kinds = {type(w.message) for w in caught}
    assert kinds == {pate_cli.PateWarning} and len(caught) == 2
