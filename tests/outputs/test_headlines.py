"""What a report's headline publishes, for the run kinds a review found misreadable: the
smooth-sensitivity release as an estimate beside the bound, a data-independent search's
figure first, every headline naming its accountant, the budget section saying which
figure the budget holds, and the figures a review found rounded or labelled wrongly."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import pate_cli
from pate_cli.accounting.smooth_sensitivity.bounds import (
    dep_gnmax,
    log_q0_gnmax,
    smooth_sensitivity,
)
from pate_cli.analysis.added_figures import any_run_epsilon
from pate_cli.analysis.run import reports_any_run_bound
from pate_cli.outputs.captions import runs_caption
from pate_cli.outputs.report_content import report_content
from pate_cli.outputs.report_statement import halt_from_votes, number
from pate_cli.outputs.risk_figure import curve_lines
from pate_cli.outputs.summary_json import summary_dict
from tests import SAMPLES

VOTES = str(SAMPLES / "mnist_250_votes.npy")


def _head(**options) -> tuple[dict, dict]:
    summary = summary_dict(pate_cli.analyze(VOTES, **options))
    return summary, report_content(summary)["headline"]


def test_a_sanitised_release_is_an_estimate_beside_the_bound():
    summary, head = _head(queries=640, smooth_sensitivity=True, seed=8)
    smooth = summary["smooth_sensitivity"]
    # seed 8 draws the release below the data-dependent figure it estimates
    assert smooth["sanitized_epsilon"] < summary["epsilon"]
    text = head["text"]
    assert "satisfies" not in text  # no guarantee is claimed for the release
    assert "a differentially private estimate of that cost" in text
    assert "not an upper bound" in text
    assert "The data-independent bound, which holds for any run, is ε = 3.9268" in text
    assert head["published"] == smooth["sanitized_epsilon"]
    assert "not a bound" in head["warning"]


def test_a_data_independent_search_leads_the_headline():
    summary, head = _head(mechanism="gnmax", sigma=40, queries=640,
                          accounting="data-independent", tuning="poisson:10")
    tuned = summary["tuning"]["epsilon_tuned"]
    assert tuned > summary["epsilon"]
    text = head["text"]
    first = text.index("ε = ")
    assert text[first:].startswith(f"ε = {number(tuned, rounding='up')} at δ")
    assert "the run alone: ε = 3.8487 by the Gaussian steps' privacy-loss" in text
    assert head["published"] == tuned and head["led_by_search"]
    assert text.count("Including the hyperparameter search") == 0  # said once, first
    figures = {row["key"]: row["label"] for row in report_content(summary)["key_figures"]}
    assert figures["tuning.epsilon_tuned"].endswith("(published)")
    assert figures["epsilon"].endswith("one run without the search")


@pytest.mark.parametrize("options, accountant", [
    (dict(mechanism="gnmax", sigma=40, accounting="data-independent"),
     "by the Gaussian steps' privacy-loss distribution"),
    (dict(mechanism="exponential", eta=0.05), "by the Rényi DP accountant at order"),
    (dict(mechanism="svt", svt_scale=100.0, svt_cutoff=1000), "by the Rényi DP accountant"),
    (dict(mechanism="svt", svt_scale=0.5, svt_cutoff=10), "by the pure-DP bound"),
])
def test_every_headline_names_its_accountant(options, accountant):
    _, head = _head(queries=300, **options)
    assert accountant in head["text"]


def _budget(**options) -> dict:
    summary = summary_dict(pate_cli.analyze(VOTES, **options))
    return report_content(summary)["budget"]


def test_the_budget_section_says_which_figure_the_budget_holds():
    replay = _budget(queries=2000, budget=2.0)
    assert ("holds the run's data-dependent ε (the Rényi DP accountant; unsanitised), not the "
            "data-independent bound") in replay["note"]
    assert replay["remaining"] == "5.07e-05"  # 5.0777e-05, rounded down: never more left
    counted = _budget(budget=3.0, accounting="data-independent")
    assert "figure of those answers" in counted["note"] and "not a bound" in counted["note"]
    assert counted["remaining_label"] == "Left on the run's answers (not a bound)"
    held = _budget(mechanism="gnmax", sigma=40, budget=3.0, accounting="data-independent")
    # the same halt on any votes: the budget holds the bound (found on its RDP figure,
    # the PLD figure published)
    assert held["note"].startswith("The halt was decided on the Rényi DP figure")


def test_the_remaining_budget_rounds_down_at_any_size():
    assert number(5.0777090207843045e-05, rounding="down") == "5.07e-05"
    assert number(5.0777090207843045e-05, rounding="up") == "5.08e-05"
    assert number(1.2399e7, rounding="down") == "1.23e+07"


def test_an_added_curve_is_named_in_the_headline(tmp_path):
    curve = tmp_path / "extra.csv"
    curve.write_text("order,rdp\n2,0.1\n500,25\n")
    _, head = _head(queries=300, mechanism="gnmax", sigma=40, add_rdp=str(curve))
    assert "composed with the RDP curve added before the first query" in head["text"]


def test_a_multilabel_caption_counts_labels():
    frame = pd.DataFrame({"query": [0, 1], "answered": [3.0, 2.0],
                          "epsilon_cumulative": [0.1, 0.2]})
    summary = {"mechanism": "gnmax", "params": {"sigma": 5.0}, "accounting": "replay",
               "multilabel": {"variant": "binary", "labels": 3}}
    assert "5 labels answered" in runs_caption(["run"], [frame], [summary])
    del summary["multilabel"]
    assert "5 answered" in runs_caption(["run"], [frame], [summary])


def test_a_plotted_curve_without_the_search_is_not_called_publishable():
    summary = summary_dict(pate_cli.analyze(VOTES, "gnmax", sigma=40, queries=640,
                                            accounting="data-independent",
                                            tuning="poisson:10"))
    label = curve_lines(summary)[0].label
    assert "not publishable" in label and "--tuning" in label
    plain = summary_dict(pate_cli.analyze(VOTES, "gnmax", sigma=40, queries=640,
                                          accounting="data-independent"))
    assert curve_lines(plain)[0].label.startswith("publishable")


def test_log_q0_is_found_to_the_float_and_the_smooth_sensitivity_is_raised():
    sigma, order = 40.0, 14.0
    found = log_q0_gnmax(sigma=sigma, order=order)
    # dep(log q0) = order / sigma^2: the root to the float's precision (an mpmath root at
    # 50 digits; scipy's default xtol left it some 4e-13 off)
    assert found == pytest.approx(-3.40297241739848, rel=0, abs=2e-14)
    value = float(dep_gnmax([found], sigma=sigma, order=order)[0])
    assert math.isclose(value, order / sigma**2, rel_tol=1e-12)
    assert smooth_sensitivity([0.5], [0.1])[0] > 0.5  # raised by the rounding margin


@pytest.mark.parametrize("accounting", ["replay", "expected", "data-independent"])
@pytest.mark.parametrize("params", [{"sigma": 40.0}, {"threshold": 200.0, "sigma": 40.0}])
def test_the_report_reads_the_analysis_rule_for_halts_the_votes_decide(accounting, params):
    """report_statement restates run.reports_any_run_bound on the JSON (it stays free of
    numpy for --help): the two must agree."""
    summary = {"params": params, "accounting": accounting}
    assert halt_from_votes(summary) == reports_any_run_bound("threshold" in params, accounting,
                                                             halts=True)


def test_an_output_halt_is_named_by_its_output():
    votes = str(SAMPLES / "tokens_stdlib.npz")
    summary = summary_dict(pate_cli.analyze(votes, "gnmax", sigma=16.0, budget=5.0,
                                            halt_at="output"))
    budget = report_content(summary)["budget"]
    completed = summary["outputs"]["completed"]
    assert budget["halt"].startswith(f"halted before output {completed} (0-based; its first "
                                     f"query is {summary['budget']['halted_at']})")


@pytest.mark.parametrize("variant", ["tau:1", "powerset"])
def test_a_label_set_run_reports_its_bound_for_any_run_under_expected_accounting(variant):
    """As binary runs do (json.md: expected accounting always reports it): every query is
    answered, so the data-independent figure is that bound."""
    predictions = np.random.default_rng(3).integers(0, 2, size=(200, 25, 4))
    expected = pate_cli.analyze(None, "gnmax", sigma=20.0, multilabel=variant,
                                predictions=predictions, accounting="expected")
    if variant.startswith("tau"):  # its PLD figure where smaller, as its headline
        assert any_run_epsilon(expected) == expected.epsilon_data_independent
    else:
        assert expected.epsilon_data_independent_worst == expected.epsilon_data_independent
    replay = pate_cli.analyze(None, "gnmax", sigma=20.0, multilabel=variant,
                              predictions=predictions)
    assert replay.epsilon_data_independent_worst is None


def test_a_reports_search_rows_name_which_figure_is_the_bound():
    """Under data-independent accounting with a selection step the search's figure composes
    the replay's answers; its row and the bound's had the same label (5.824 beside 7.6558)."""
    import numpy as np

    import pate_cli
    from pate_cli.outputs.report_content import tuning_view
    from tests import SAMPLES

    votes = np.load(SAMPLES / "mnist_250_votes.npy")[:400]
    summary = pate_cli.analyze(votes, tuning="poisson:10", accounting="data-independent",
                               per_query=False).to_dict()
    rows = {row["name"]: row["value"] for row in tuning_view(summary)["rows"]}
    assert len(rows) == 4
    assert rows["\u03b5 with the search (data-independent, the replay's answers: not a "
                "bound)"].startswith("5.82")
    assert rows["\u03b5 with the search (data-independent bound for any run)"] == "7.6558"
