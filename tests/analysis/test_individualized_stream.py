"""``--individualized`` in bounded memory (issue 27, "groups"): ``per_query=False`` replays
the base run a chunk at a time for the group accounting and keeps no per-query array;
``per_query="stream"`` gives the per-query table (with each group's cumulative epsilon) and
the decisions a chunk at a time. Summaries, tables and decisions are the bytes of the
per-query run's (``per_query=True``, the run that keeps every column)."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pate_cli
from pate_cli.analysis import individualized
from pate_cli.analysis.individualized import (
    HELD_QUERIES,
    analyze_individualized,
    derive_parameters,
)
from pate_cli.analysis.per_query_stream import decisions_of, streamed_decisions
from pate_cli.cli.analyze import analyze as analyze_command
from pate_cli.inputs import PrivacyGroups
from pate_cli.mechanisms import build_mechanism
from pate_cli.outputs.decisions import decisions_chunks
from pate_cli.outputs.files import per_query_bytes, per_query_stream_chunks
from pate_cli.outputs.summary import render
from tests.decision_files import decisions_bytes
from tests.memory import traced_peak

S = "sample_votes/"
VOTES, PRED = S + "mnist_250_votes.npy", S + "mnist_250_predictions.npy"
GROUPS, TGROUPS = S + "mnist_250_groups.csv", S + "mnist_250_teacher_groups.csv"
LABELS, STUDENT = S + "mnist_250_labels.npy", S + "mnist_250_student.npy"

# (votes, mechanism, options) on the shipped samples
SAMPLES = {
    "upsampling": (VOTES, "confident", dict(individualized="upsampling")),
    "upsampling-expected": (VOTES, "confident", dict(individualized="upsampling",
                                                     accounting="expected")),
    "upsampling-independent": (VOTES, "confident", dict(individualized="upsampling",
                                                        accounting="data-independent")),
    "upsampling-gnmax": (VOTES, "gnmax", dict(individualized="upsampling", queries=3000)),
    "weighting": (None, "confident", dict(individualized="weighting", predictions=PRED,
                                          teacher_groups=TGROUPS)),
    "weighting-expected": (None, "confident", dict(individualized="weighting",
                                                   predictions=PRED, teacher_groups=TGROUPS,
                                                   accounting="expected")),
    "vanishing": (None, "confident", dict(individualized="vanishing", predictions=PRED,
                                          teacher_groups=TGROUPS, queries=500)),
    "vanishing-expected": (None, "confident", dict(individualized="vanishing",
                                                   predictions=PRED, teacher_groups=TGROUPS,
                                                   accounting="expected", queries=600)),
    "interactive": (VOTES, "interactive", dict(individualized="upsampling", student=STUDENT,
                                               queries=1500)),
    "interactive-expected": (VOTES, "interactive", dict(individualized="upsampling",
                                                        student=STUDENT,
                                                        accounting="expected")),
}


def _analysed(votes, name, options, per_query):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pate_cli.analyze(votes, name, per_query=per_query, **options)


@pytest.mark.parametrize("case", sorted(SAMPLES))
def test_samples_give_the_per_query_runs_bytes(case, tmp_path):
    votes, name, options = SAMPLES[case]
    options = {"queries": 2500, **options, "groups": GROUPS, "labels": LABELS}
    table = _analysed(votes, name, options, True)
    totals = _analysed(votes, name, options, False)
    stream = _analysed(votes, name, {**options, "chunk_size": 250}, "stream")
    summary = json.dumps(table.to_dict())
    assert json.dumps(totals.to_dict()) == summary == json.dumps(stream.to_dict())
    assert table.groups.stopped_at is not None  # the stop is exercised
    # no per-query array kept
    assert totals.counts is not None and totals.table is None and totals.frames is None
    frames = list(stream.iter_frames())
    assert len(frames) > 1  # pieces of 250 rows
    whole = table.to_frame()
    for extension in ("csv", "parquet", "jsonl"):
        path = str(tmp_path / f"q.{extension}")
        assert b"".join(per_query_stream_chunks(iter(frames), path)) == \
            per_query_bytes(whole, path), extension
    decisions = decisions_of(table)
    assert len(decisions) == table.groups.stopped_at
    for extension in ("csv", "jsonl"):
        path = str(tmp_path / f"d.{extension}")
        streamed = b"".join(decisions_chunks(
            streamed_decisions(stream), path, name))
        assert streamed == decisions_bytes(decisions, path)
    assert decisions_bytes(decisions_of(stream), str(tmp_path / "d.npz")) == \
        decisions_bytes(decisions, str(tmp_path / "d.npz"))


def test_pate_analyze_streams_groups(monkeypatch, tmp_path):
    """The command asks for totals only, or for the stream with --per-query or
    --write-decisions, and prints the summary of the API's run."""
    seen = []
    original = individualized.analyze_votes

    def spy(*args, **kwargs):
        seen.append(kwargs.get("per_query", True))
        return original(*args, **kwargs)

    monkeypatch.setattr(individualized, "analyze_votes", spy)
    args = ["--predictions", PRED, "-n", "1500", "--individualized", "weighting", "--groups",
            GROUPS, "--teacher-groups", TGROUPS, "--labels", LABELS, "-f", "json"]
    runner = CliRunner()
    plain = runner.invoke(analyze_command, args, catch_exceptions=False)
    streamed = runner.invoke(analyze_command, [*args, "--per-query", str(tmp_path / "q.csv"),
                                               "--write-decisions", str(tmp_path / "d.csv")],
                             catch_exceptions=False)
    assert plain.exit_code == streamed.exit_code == 0, plain.output + streamed.output
    assert seen == [False, True]  # with the table, the base run keeps its pairs
    assert plain.stdout == streamed.stdout
    table = _analysed(None, "confident", dict(
        predictions=PRED, queries=1500, individualized="weighting", groups=GROUPS,
        teacher_groups=TGROUPS, labels=LABELS), True)
    assert plain.stdout == render(table.to_dict(), "json")
    assert (tmp_path / "q.csv").read_bytes() == per_query_bytes(table.to_frame(), "q.csv")
    assert (tmp_path / "d.csv").read_bytes() == decisions_bytes(decisions_of(table), "d.csv")


@st.composite
def runs(draw):
    """Random votes and predictions, two or three groups and a run's settings
    (``analyze_individualized``'s arguments)."""
    queries = draw(st.integers(1, 150))
    classes = draw(st.integers(2, 6))
    teachers = draw(st.integers(6, 40))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    concentration = draw(st.sampled_from([0.1, 0.5, 3.0]))
    probs = rng.dirichlet(np.full(classes, concentration), size=queries)
    predictions = np.stack([rng.choice(classes, size=teachers, p=p) for p in probs])
    votes = np.stack([np.bincount(row, minlength=classes) for row in predictions])
    count = draw(st.integers(2, 3))
    budgets = np.array(draw(st.lists(st.sampled_from([0.5, 1.0, 2.0, 3.0, 8.0]),
                                     min_size=count, max_size=count)))
    groups = PrivacyGroups(names=tuple(f"g{g}" for g in range(count)), budgets=budgets)
    teacher_groups = rng.integers(count, size=teachers)
    variant = draw(st.sampled_from(["upsampling", "weighting", "vanishing"]))
    sigma = draw(st.floats(0.05, 0.5)) * teachers
    name = draw(st.sampled_from(["gnmax", "confident", "interactive"]))
    if name == "gnmax":
        mechanism = build_mechanism(name, teachers=teachers, sigma=sigma)
    else:
        mechanism = build_mechanism(
            name, teachers=teachers, sigma=sigma,
            threshold=draw(st.floats(0.3, 0.9)) * teachers,
            sigma_threshold=draw(st.floats(0.05, 0.5)) * teachers)
    parameters = derive_parameters(groups, variant=variant, teacher_groups=teacher_groups)
    options = dict(predictions=predictions, teacher_groups=teacher_groups, classes=classes,
                   labels=rng.integers(classes, size=queries),
                   accounting=draw(st.sampled_from(["replay", "expected",
                                                    "data-independent"])),
                   seed=draw(st.integers(0, 2**31)),
                   queries=draw(st.one_of(st.none(), st.integers(1, queries))),
                   chunk_size=draw(st.sampled_from([None, 3, 16, 64])))
    if name == "interactive":
        options["student"] = rng.dirichlet(np.full(classes, 0.3), size=queries)
    return votes.astype(np.float64), mechanism, parameters, options


def _decisions(result):
    found = decisions_of(result)
    return [np.asarray(getattr(found, key)).tolist() for key in ("query", "outcome", "label")]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(run=runs(), workers=st.sampled_from([1, 2]))
def test_totals_and_stream_equal_the_per_query_run(run, workers):
    votes, mechanism, parameters, options = run

    def analysed(per_query, **extra):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return analyze_individualized(votes, mechanism, parameters, per_query=per_query,
                                          **options, **extra)
    try:
        table = analysed(True)
    except ValueError as error:  # a vanishing query no teacher takes part in
        assert "no teacher takes part" in str(error)
        with pytest.raises(ValueError, match="no teacher takes part"):
            analysed(False)
        return
    totals = analysed(False, workers=workers)
    stream = analysed("stream", workers=workers)
    assert json.dumps(totals.to_dict()) == json.dumps(table.to_dict())
    assert json.dumps(stream.to_dict()) == json.dumps(table.to_dict())
    assert stream.to_frame().to_csv() == table.to_frame().to_csv()
    assert _decisions(stream) == _decisions(table)


def test_memory_does_not_grow_with_the_queries(tmp_path):
    """Votes drawn from 200 distinct rows of a memory-mapped file: from 10^5 to 2 x 10^5
    queries, the totals-only individualized run's peak grows by no more than the base
    run's own (its counting window fills) and 2 MB; keeping each group's cumulative
    epsilon per query, and the base run's columns, grew it by some 45 MB. (Both runs are
    longer than the ``HELD_QUERIES`` a group pass may hold, a constant.)"""
    rng = np.random.default_rng(6)
    distinct = rng.multinomial(250, np.full(10, 0.1), size=200).astype(np.int16)
    groups = PrivacyGroups(names=("a", "b", "c"), budgets=np.array([50.0, 100.0, 150.0]))

    def peak(queries, **extra):
        path = tmp_path / f"votes{queries}.npy"
        np.save(path, distinct[rng.integers(0, 200, size=queries)])
        # one thread: how many chunks threads hold at once depends on the machine's load
        return traced_peak(lambda: _analysed(str(path), "confident", dict(
            threshold=150, sigma_threshold=40, sigma=20, chunk_size=1000, workers=1, **extra),
            False))

    individual = dict(individualized="upsampling", groups=groups)
    peak(2_000, **individual)  # first-call work
    assert HELD_QUERIES < 100_000
    small, large = peak(100_000, **individual), peak(200_000, **individual)
    base_small, base_large = peak(100_000), peak(200_000)
    assert large - small < (base_large - base_small) + 2 * 2**20, (small, large, base_small,
                                                                  base_large)


@pytest.mark.parametrize("case", ["upsampling-expected", "weighting", "interactive"])
def test_without_true_labels_the_answer_noise_is_not_drawn(case, monkeypatch):
    """The group pass counts released labels and outcomes, which do not need the noisy
    argmax: without true labels to score, it is not drawn, and every other figure is the
    scored run's."""
    from pate_cli.mechanisms import aggregators

    votes, name, options = SAMPLES[case]
    options = {"queries": 1500, **options, "groups": GROUPS}
    scored = _analysed(votes, name, {**options, "labels": LABELS}, False)
    drawn: list[bool] = []
    real = aggregators.noisy_labels
    monkeypatch.setattr(aggregators, "noisy_labels",
                        lambda *args, draw=True, **kw: drawn.append(draw)
                        or real(*args, draw=draw, **kw))
    bare = _analysed(votes, name, options, False)
    assert drawn and not any(drawn)
    summary, other = scored.to_dict(), bare.to_dict()
    assert summary.pop("label_accuracy") is not None and other.pop("label_accuracy") is None
    for part in (summary, other):  # the labels file and what it scores
        part.pop("accuracy_by_outcome", None)
        part["files"].pop("labels", None)
    assert json.dumps(summary) == json.dumps(other)
