"""Each privacy group's data-independent bound for any run (an aggregator with a selection step).

A group's figure at the halt composes the replay's answers up to a halt the votes decide:
neither is a bound. Every requested query selected and answered at the group's sensitivity
is (``epsilon_data_independent_worst`` of each group row): what pate-report publishes per
group, what each group's attack risk rests on; it does not depend on the seed.
"""

from __future__ import annotations

import math

import pytest

import pate_cli
from pate_cli.orders import default_orders
from pate_cli.outputs.report_content import report_content
from pate_cli.outputs.summary_json import summary_dict
from tests import SAMPLES

VOTES = str(SAMPLES / "mnist_250_votes.npy")
GROUPS = str(SAMPLES / "mnist_250_groups.csv")
RUN = dict(queries=1000, threshold=200.0, sigma_threshold=150.0, sigma=40.0,
           screening="gaussian", groups=GROUPS)


@pytest.mark.parametrize("accounting", ["replay", "expected", "data-independent"])
def test_each_groups_bound_against_dp_accounting(accounting):
    """Upsampling factor D: both steps' Gaussians with the noise divided by D, 1000 times
    (the improved conversion, dp_accounting's)."""
    dp = pytest.importorskip("dp_accounting")
    result = pate_cli.analyze(VOTES, "confident", individualized="upsampling",
                              accounting=accounting, conversion="improved", **RUN)
    for row in result.groups.groups:
        d = row["sensitivity"]
        accountant = dp.rdp.RdpAccountant(orders=default_orders().tolist())
        accountant.compose(dp.GaussianDpEvent(40.0 / math.sqrt(2.0) / d), 1000)
        accountant.compose(dp.GaussianDpEvent(150.0 / d), 1000)
        independent = accountant.get_epsilon(1e-5)
        bound = row["epsilon_data_independent_worst"]
        assert bound >= independent and bound == pytest.approx(independent, rel=1e-11)
        # the replay's answers give less, at the halt and over every query: not bounds
        assert row["epsilon_data_independent"] <= row[
            "epsilon_data_independent_if_continued"] < bound


def test_a_sensitivity_one_group_is_bounded_as_the_uniform_run():
    summary = summary_dict(pate_cli.analyze(VOTES, "confident", individualized="upsampling",
                                            **RUN))
    first = next(row for row in summary["groups"] if row["sensitivity"] == 1)
    assert first["epsilon_data_independent_worst"] == (
        summary["baseline"]["epsilon_data_independent_worst"])


def test_weighting_and_interactive_have_bounds_vanishing_and_independent_gnmax_none():
    predictions = dict(predictions=str(SAMPLES / "mnist_250_predictions.npy"),
                       teacher_groups=str(SAMPLES / "mnist_250_teacher_groups.csv"),
                       groups=GROUPS, queries=600)
    weighted = pate_cli.analyze(None, "confident", individualized="weighting", **predictions)
    for row in weighted.groups.groups:  # D = the group's weight
        assert row["epsilon_data_independent_worst"] > row["epsilon_data_independent"]
    vanishing = pate_cli.analyze(None, "confident", individualized="vanishing", **predictions)
    assert all(row["epsilon_data_independent_worst"] is None  # null: always a key
               for row in vanishing.groups.groups)
    # GNMax: under data-independent accounting every query costs the same whatever the
    # votes, so the stop is the same on any votes and the figure at the halt is the bound
    gnmax = pate_cli.analyze(VOTES, "gnmax", individualized="upsampling", queries=600,
                             groups=GROUPS, accounting="data-independent")
    assert all(row["epsilon_data_independent_worst"] is None for row in gnmax.groups.groups)
    assert all(row["risk"] is not None for row in summary_dict(gnmax)["groups"])  # at the halt
    # under replay the stop is found on data-dependent figures: a bound over every query
    replayed = pate_cli.analyze(VOTES, "gnmax", individualized="upsampling", queries=600,
                                groups=GROUPS)
    assert replayed.groups.stopped_at is not None
    for row, fixed in zip(replayed.groups.groups, gnmax.groups.groups, strict=True):
        assert row["epsilon_data_independent_worst"] > row["epsilon_data_independent"]
        assert row["epsilon_data_independent_worst"] >= fixed["epsilon_data_independent"]
    vanishing = pate_cli.analyze(None, "gnmax", individualized="vanishing", **predictions)
    assert all(row["risk"] is None for row in summary_dict(vanishing)["groups"])
    interactive = pate_cli.analyze(VOTES, "interactive", individualized="upsampling",
                                   student=str(SAMPLES / "mnist_250_student.npy"), queries=600,
                                   groups=GROUPS)
    assert all(row["epsilon_data_independent_worst"] > row["epsilon_data_independent"]
               for row in interactive.groups.groups)


def test_the_report_publishes_each_groups_bound_whatever_the_seed():
    published = set()
    for seed in range(3):
        summary = summary_dict(pate_cli.analyze(VOTES, "confident", seed=seed,
                                                individualized="upsampling", **RUN))
        head = report_content(summary)["headline"]
        assert "hold whatever a run answers and wherever it halts" in head["text"]
        bounds = tuple(row["epsilon_data_independent_worst"] for row in summary["groups"])
        for row, bound in zip(summary["groups"], bounds, strict=True):
            assert f"for group {row['group']}" in head["text"]
            for fpr, tpr in row["risk"]["tpr_at_fpr"].items():  # the (bound, delta) pair's
                fpr = float(fpr)
                assert tpr == pytest.approx(min(1.0, math.exp(bound) * fpr + 1e-5,
                                                1 - math.exp(-bound) * (1 - 1e-5 - fpr)),
                                            rel=1e-9)
        assert "not bounds" in head["text"] and "No per-group bound" not in head["text"]
        published.add(bounds)
    assert len(published) == 1


def test_the_top_level_bound_and_the_gates_are_the_largest_groups(cli, tmp_path):
    """Review H4: the JSON top level held no bound (null) while the text led with group c's
    115.0548; --max-epsilon 50 passed a data-independent run (it tested the halt's 2.9575)
    and pate-report --max-epsilon 10 passed a report that publishes 115.0548."""
    import json

    args = (VOTES, "--individualized", "upsampling", "--groups", GROUPS, "-n", "1000")
    summary = json.loads(cli.analyze(*args, "-f", "json").out)
    bounds = [row["epsilon_data_independent_worst"] for row in summary["groups"]]
    assert summary["epsilon_data_independent_worst"] == max(bounds)
    from pate_cli.outputs.report_statement import epsilon_text
    largest = epsilon_text(max(bounds))  # rounded up, as the report prints it
    gated = cli.analyze(*args, "--accounting", "data-independent", "--max-epsilon",
                        str(max(bounds) - 0.01))
    assert gated.code == 3 and "epsilon for any run" in gated.err
    report = cli.report(*args, "-o", tmp_path / "r.md", "--max-epsilon", "10")
    assert report.code == 3 and "published epsilon (group " in report.err
    assert cli.report(*args, "-o", tmp_path / "s.md", "--max-epsilon",
                      str(max(bounds) + 0.01)).code == 0
    assert largest in (tmp_path / "s.md").read_text()
    older = dict(summary, groups=[{key: value for key, value in row.items()
                                   if key != "epsilon_data_independent_worst"}
                                  for row in summary["groups"]])
    (tmp_path / "old.json").write_text(json.dumps(older))
    refused = cli.report("--from", tmp_path / "old.json", "-o", tmp_path / "o.md")
    assert refused.code == 2 and "written before summaries held the bound" in refused.err


def test_vanishing_with_a_selection_step_publishes_no_group_risk():
    """Its figures at the halt count the replay's answers: no bound, so no risk either."""
    result = pate_cli.analyze(None, "confident", individualized="vanishing", queries=600,
                              predictions=str(SAMPLES / "mnist_250_predictions.npy"),
                              teacher_groups=str(SAMPLES / "mnist_250_teacher_groups.csv"),
                              groups=GROUPS)
    summary = summary_dict(result)
    assert all(row["risk"] is None for row in summary["groups"])
    risk = report_content(summary)["risk"]["missing"]
    assert "vanishing forms no bound for any run" in risk
    assert "no bound for any run is formed" in report_content(summary)["headline"]["warning"]


def test_an_expected_report_calls_each_groups_bound_a_bound_not_an_average():
    summary = summary_dict(pate_cli.analyze(VOTES, "confident", individualized="upsampling",
                                            accounting="expected", **RUN))
    text = report_content(summary)["headline"]["text"]
    assert "(1000 queries, expected accounting)" in text and "average run" not in text


@pytest.mark.parametrize("queries", [3000, 20_000])
@pytest.mark.parametrize("mechanism", ["gnmax", "confident"])
def test_a_groups_figures_print_in_order_where_its_curves_are_the_bound(queries, mechanism):
    """Votes spread evenly: each query's data-dependent curve is the data-independent one, so
    the exact figures are equal and the prints differ by rounding alone. The running sums'
    figures carry the raise for their terms (past 4,080 queries, more than the bound's own),
    and at 3,000 Confident queries the two sums' rounding differed: a group's data-dependent
    epsilon printed 5.4e-14 above its bound (both raised to it, as a plain run's is)."""
    import numpy as np

    from pate_cli.analysis import analyze_individualized, derive_parameters
    from pate_cli.inputs import PrivacyGroups
    from pate_cli.mechanisms import ConfidentGNMax, GNMax

    votes = np.full((queries, 10), 25.0)
    aggregator = (GNMax(sigma=40.0) if mechanism == "gnmax"
                  else ConfidentGNMax(threshold=200.0, sigma_threshold=150.0, sigma=40.0))
    parameters = derive_parameters(PrivacyGroups(names=("a", "b"), budgets=np.array(
        [1e9, 2e9])), variant="upsampling")
    for accounting in ("replay", "expected"):
        result = analyze_individualized(votes, aggregator, parameters, accounting=accounting,
                                        teachers=250.0, delta=1e-5, per_query=False)
        for row in result.groups.groups:
            assert row["epsilon"] <= row["epsilon_data_independent"]
            assert row["epsilon_if_continued"] <= row["epsilon_data_independent_if_continued"]
            assert (row["epsilon_data_independent_if_continued"]
                    <= row["epsilon_data_independent_worst"])
        assert result.epsilon <= result.epsilon_data_independent
        assert result.epsilon_data_independent <= result.epsilon_data_independent_worst
