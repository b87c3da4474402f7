"""Individualized headlines (math:individualized): each group reports what it spent at the halt."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pate_cli import analyze
from pate_cli.accounting.gnmax import rdp_gnmax
from pate_cli.accounting.threshold import rdp_threshold
from pate_cli.analysis import individualized
from pate_cli.inputs.groups import PrivacyGroups
from tests import SAMPLES

ORDERS = np.array([2.0, 3.0, 5.0, 8.0, 14.0, 20.0, 32.0, 50.0, 100.0])


def votes_from(seed: int, queries: int, classes: int = 4, teachers: int = 60) -> np.ndarray:
    rng = np.random.default_rng(seed)
    strength = rng.uniform(0, 5, queries)
    logits = rng.normal(size=(queries, classes)) * strength[:, None]
    p = np.exp(logits - logits.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    return np.array([rng.multinomial(teachers, row) for row in p], dtype=float)


def groups_of(budgets) -> PrivacyGroups:
    return PrivacyGroups(names=tuple(f"g{i}" for i in range(len(budgets))),
                         budgets=np.asarray(budgets, dtype=float))


def halts_by_hand(frame, rows, *, sigma, sigma_threshold, delta, replay):
    """Each group's halt, a query at a time: before query i if the sums charged before it
    plus its full charge (its answer step counted, under replay) convert above the
    group's budget (math:costs; classic conversion, selection curves uncapped)."""
    log_q = frame["log_q"].to_numpy()
    log_pr = frame["log_pr_answered"].to_numpy()
    weight = frame["answered"].to_numpy(dtype=float)
    offset = np.log(1 / delta) / (ORDERS - 1)
    halts = []
    for row in rows:
        scale = row["sensitivity"]
        selection = rdp_threshold(log_pr, sigma_threshold=sigma_threshold / scale,
                                  orders=ORDERS)
        answer = rdp_gnmax(log_q, sigma=sigma / scale, orders=ORDERS)
        spent, halt = np.zeros(ORDERS.size), None
        for i in range(log_q.size):
            full = selection[i] + (answer[i] if replay else weight[i] * answer[i])
            if np.min(spent + full + offset) > row["budget"]:
                halt = i
                break
            spent = spent + selection[i] + weight[i] * answer[i]
        halts.append(halt)
    return halts


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**16), queries=st.integers(5, 150),
       budgets=st.lists(st.sampled_from([0.5, 1.0, 1.5, 2.0, 3.0]), min_size=1, max_size=3),
       accounting=st.sampled_from(["replay", "expected"]))
def test_every_group_spends_at_most_its_budget(seed, queries, budgets, accounting):
    votes = votes_from(seed, queries)
    result = analyze(votes, "confident", threshold=40.0, sigma_threshold=10.0, sigma=6.0,
                     individualized="upsampling", groups=groups_of(budgets), orders=ORDERS,
                     accounting=accounting, seed=seed, screening="gaussian", per_query=True)
    rows = result.groups.groups
    stop = result.groups.stopped_at
    for row in rows:
        assert row["epsilon"] <= row["budget"]
        assert row["epsilon"] <= row["epsilon_if_continued"]
        column = result.columns[f"epsilon_cumulative_{row['group']}"]
        spent = 0.0 if stop == 0 else column[(queries if stop is None else stop) - 1]
        assert row["epsilon"] == spent
    if accounting == "replay":  # the stop does not reveal the outcome of its query
        halts = halts_by_hand(result.to_frame(), rows, sigma=6.0, sigma_threshold=10.0,
                              delta=result.delta, replay=True)
        assert [row["exhausted_at"] for row in rows] == halts
    else:  # the expected charge does not depend on the outcome
        for row in rows:
            over = np.flatnonzero(result.columns[f"epsilon_cumulative_{row['group']}"]
                                  > row["budget"])
            assert row["exhausted_at"] == (int(over[0]) if over.size else None)
    assert result.epsilon == max(row["epsilon"] for row in rows)
    if stop is not None:
        assert np.all(result.label[stop:] == -1)
        assert stop == min(r["exhausted_at"] for r in rows if r["exhausted_at"] is not None)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**16), queries=st.integers(5, 150),
       budget=st.sampled_from([0.5, 1.0, 2.0, 4.0, 8.0]), groups=st.integers(1, 3),
       accounting=st.sampled_from(["replay", "expected"]))
def test_equal_budgets_halt_as_a_plain_budget_run(seed, queries, budget, groups, accounting):
    """Equal budgets: the groups halt where a plain run with that --budget halts (it checks
    each query's full charge before drawing its noise)."""
    votes = votes_from(seed, queries)
    params = dict(threshold=40.0, sigma_threshold=10.0, sigma=6.0, orders=ORDERS, seed=seed,
                  accounting=accounting)
    result = analyze(votes, "confident", individualized="upsampling",
                     groups=groups_of([budget] * groups), **params)
    plain = analyze(votes, "confident", **params)
    halted = analyze(votes, "confident", budget=budget, **params)
    stop = None if halted.queries == queries else halted.queries
    assert result.groups.stopped_at == stop
    upto = queries if stop is None else stop
    spent = 0.0 if upto == 0 else plain.epsilon_cumulative[upto - 1]
    assert spent == halted.epsilon
    for row in result.groups.groups:
        assert row["epsilon"] == spent and row["exhausted_at"] == stop
        # the individualized accounting's running sum: the plain run's last cumulative row
        assert row["epsilon_if_continued"] == plain.epsilon_cumulative[-1]
    assert result.epsilon == spent
    np.testing.assert_array_equal(result.label[:upto], plain.label[:upto])


def test_a_teacher_that_has_not_taken_part_does_not_halt_the_run(tmp_path):
    """Vanishing with a budget below the conversion of zero sums (0.01 < log(1e5) / 499):
    a teacher of that group that has not yet taken part has spent nothing and does not
    halt the run, whatever the chunk (it halted at query 0 in chunks of 4,096 queries,
    at 343 in chunks of 7); the group halts at its first teacher's first query, 1296."""
    (tmp_path / "g.csv").write_text("group,budget,share\nhigh,0.01,0.34\naverage,2.0,0.432\n"
                                    "low,3.0,0.228\n")
    found = set()
    for chunk_size in (7, 100, 4096):
        result = analyze(None, predictions=str(SAMPLES / "mnist_250_predictions.npy"),
                         teacher_groups=str(SAMPLES / "mnist_250_teacher_groups.csv"),
                         individualized="vanishing", groups=str(tmp_path / "g.csv"),
                         queries=1400, chunk_size=chunk_size, workers=1)
        found.add((result.groups.stopped_at, result.groups.labels_released,
                   tuple(row["exhausted_at"] for row in result.groups.groups)))
    assert found == {(343, 204, (1296, 343, 403))}


def test_weights_summing_above_the_teachers_widen_the_threshold_steps_range():
    """``--weights group-size`` (Algorithm 2 as printed) gives weights summing far above
    the teacher count: a row of weighted votes can then exceed it, so the threshold step's
    exact curve takes M = the total weight (not 250), and the run says so."""
    import warnings

    import pate_cli

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = analyze(None, predictions=str(SAMPLES / "mnist_250_predictions.npy"),
                         teacher_groups=str(SAMPLES / "mnist_250_teacher_groups.csv"),
                         individualized="weighting", weights="group-size",
                         groups=str(SAMPLES / "mnist_250_groups.csv"), queries=50)
    import pandas as pd

    sizes = pd.read_csv(SAMPLES / "mnist_250_teacher_groups.csv")["group"].value_counts()
    total = sum(row["weight"] * sizes[row["group"]] for row in result.groups.groups)
    assert result.teachers == pytest.approx(total, rel=1e-12) and total > 250 * 80
    assert any(isinstance(w.message, pate_cli.PateWarning) and "--weights" in str(w.message)
               for w in caught)
    # the threshold step's exact curve takes that M: as a run told M outright
    told = analyze(None, predictions=str(SAMPLES / "mnist_250_predictions.npy"),
                   teacher_groups=str(SAMPLES / "mnist_250_teacher_groups.csv"),
                   individualized="weighting", weights="group-size", teachers=result.teachers,
                   groups=str(SAMPLES / "mnist_250_groups.csv"), queries=50,
                   threshold=200.0, sigma_threshold=150.0, sigma=40.0)  # not scaled to M
    for key in ("epsilon_data_independent", "epsilon_data_independent_if_continued"):
        assert [row[key] for row in result.groups.groups] == [
            row[key] for row in told.groups.groups]
    assert result.epsilon_data_independent == told.epsilon_data_independent


@pytest.mark.parametrize("accounting", ["replay", "expected", "data-independent"])
def test_the_summarys_data_independent_figure_is_the_largest_groups(accounting):
    """The JSON's top-level ``epsilon_data_independent`` was the uniform run's (2.4149 under
    data-independent accounting, below the run's epsilon 2.9574, where the text printed
    group low's 2.9575): it is the largest group's at the halt, the uniform run's under
    ``baseline``."""
    from pate_cli.outputs.summary_json import summary_dict

    result = analyze(str(SAMPLES / "mnist_250_votes.npy"), "confident", queries=300,
                     individualized="upsampling", accounting=accounting,
                     groups=str(SAMPLES / "mnist_250_groups.csv"))
    summary = summary_dict(result)
    groups = [row["epsilon_data_independent"] for row in summary["groups"]]
    assert summary["epsilon_data_independent"] == max(groups) >= summary["epsilon"]
    assert summary["order_data_independent"] is None
    assert summary["epsilon_data_independent_worst"] == max(  # the largest group's bound
        row["epsilon_data_independent_worst"] for row in summary["groups"])
    assert result.epsilon_data_independent == summary["epsilon_data_independent"]  # the API's
    uniform = analyze(str(SAMPLES / "mnist_250_votes.npy"), "confident", queries=300,
                      accounting=accounting)  # sensitivity 1 for all, no halt
    assert summary["baseline"]["epsilon_data_independent"] == (  # the RDP figure, as groups'
        uniform.epsilon_rdp if uniform.data_independent_method == "pld"
        else uniform.epsilon_data_independent)
    assert summary["baseline"]["order_data_independent"] == uniform.order_data_independent
    assert (summary["baseline"]["epsilon_data_independent_worst"]
            == uniform.epsilon_data_independent_worst)


def test_no_rdp_split_is_reported_for_an_individualized_run():
    """JSON ``rdp_at_order`` and the report's "RDP at the best order" gave the uniform run's
    sums over every query (0.764 + 2.8742 at order 8.5 on the MNIST sample, which convert to
    5.17, not the 2.9751 group c spent at the halt): no run's split, so none is given."""
    from pate_cli.outputs.report_content import report_content
    from pate_cli.outputs.summary_json import summary_dict

    summary = summary_dict(analyze(str(SAMPLES / "mnist_250_votes.npy"), "confident",
                                   queries=300, individualized="upsampling",
                                   groups=str(SAMPLES / "mnist_250_groups.csv")))
    assert summary["rdp_at_order"] is None
    rows = [row["name"] for row in report_content(summary)["accounting"]]
    assert "accountant of the data-dependent \u03b5" in rows
    assert "RDP at the best order" not in rows
    plain = summary_dict(analyze(str(SAMPLES / "mnist_250_votes.npy"), "confident",
                                 queries=300))
    assert "RDP at the best order" in [row["name"] for row in report_content(plain)["accounting"]]


def test_a_report_states_the_largest_groups_figure_from_an_older_summary_too(tmp_path):
    """A summary written before the baseline held the uniform run's figures (they were the
    top level's): the report states the largest group's figure at the halt from its rows,
    and the uniform run's from the top level, as it does for today's summaries."""
    from pate_cli.outputs.report_content import report_content
    from pate_cli.outputs.summary_json import summary_dict

    summary = summary_dict(analyze(str(SAMPLES / "mnist_250_votes.npy"), "confident",
                                   queries=300, individualized="upsampling",
                                   groups=str(SAMPLES / "mnist_250_groups.csv")))
    older = {**summary, "baseline": dict(summary["baseline"]),  # nor each group's bound
             "groups": [{key: value for key, value in row.items()
                         if key != "epsilon_data_independent_worst"}
                        for row in summary["groups"]]}
    for key in ("epsilon_data_independent", "order_data_independent",
                "epsilon_data_independent_worst"):
        older[key] = older["baseline"].pop(key)
    largest = max(row["epsilon_data_independent"] for row in summary["groups"])
    uniform = summary["baseline"]["epsilon_data_independent"]
    # today's: the uniform run's bound for any run first (Confident: every query answered)
    any_run = summary["baseline"]["epsilon_data_independent_worst"]
    bound = max(row["epsilon_data_independent_worst"] for row in summary["groups"])
    for shown_summary, figures in ((summary, [bound, largest, any_run]),
                                   (older, [largest, uniform])):
        shown = [(figure["label"], float(figure["value"]))
                 for figure in report_content(shown_summary)["key_figures"]
                 if "data-independent" in figure["label"]]
        assert [value for _, value in shown[:len(figures)]] == figures
        assert shown[0][0].endswith("for any run (the largest; every query answered)"
                                    if shown_summary is summary else
                                    "at the halt (the largest: the replay's answers, not a "
                                    "bound)")


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**16), queries=st.integers(1, 400),
       budgets=st.lists(st.sampled_from([0.3, 1.0, 2.5, 6.0, 40.0]), min_size=1, max_size=4),
       variant=st.sampled_from(["upsampling", "weighting"]),
       mechanism=st.sampled_from(["gnmax", "confident"]),
       accounting=st.sampled_from(["replay", "expected"]),
       screening=st.sampled_from(["gaussian", "exact"]),
       conversion=st.sampled_from(["classic", "improved"]))
def test_orders_spared_change_no_figure(seed, queries, budgets, variant,
                                        mechanism, accounting, screening, conversion):
    """A run held to its end sums each sensitivity at the orders that can still give a
    figure (``GroupRun.prepare``), its table's pass at those below each group's final
    figure: summary and table are, byte for byte, those of the run added as it comes at
    every order (held queries 0, no table ceilings)."""
    votes = votes_from(seed, queries, teachers=50)
    rng = np.random.default_rng(seed)
    predictions = np.array([rng.permutation(np.repeat(np.arange(4), row.astype(int)))
                            for row in votes]) if variant == "weighting" else None
    options = dict(individualized=variant, groups=groups_of(budgets), accounting=accounting,
                   seed=seed, conversion=conversion, chunk_size=int(rng.integers(7, 90)))
    if variant == "weighting":
        names = np.array(groups_of(budgets).names)
        assigned = np.concatenate([np.arange(len(budgets)),  # every group has a teacher
                                   rng.integers(0, len(budgets), 50 - len(budgets))])
        options.update(predictions=predictions, teacher_groups=names[assigned])
    noise = (dict(sigma=4.0) if mechanism == "gnmax" else
             dict(threshold=30.0, sigma_threshold=8.0, sigma=4.0, screening=screening))

    def summary():
        result = analyze(None if predictions is not None else votes, mechanism, **noise,
                         **options, per_query=True)
        return result.to_dict(), result.to_frame().to_csv()

    spared = summary()
    with pytest.MonkeyPatch.context() as patch:
        # held until some chunk takes it past the limit, then added as it comes
        patch.setattr(individualized, "HELD_QUERIES", int(rng.integers(1, queries + 1)))
        assert summary() == spared
        patch.setattr(individualized, "HELD_QUERIES", 0)
        patch.setattr(individualized, "_table_ceilings", lambda rows: None)
        assert summary() == spared


def test_table_ceilings_leave_out_what_they_cannot_bound():
    """A group's final figure not finite: its sensitivity gets no ceiling (not 0); a
    vanishing run (no group has one sensitivity): none at all."""
    rows = ({"budget": 2.0, "sensitivity": 1.0, "epsilon_if_continued": 1.5},
            {"budget": 1.0, "sensitivity": 3.0, "epsilon_if_continued": float("nan")},
            {"budget": 4.0, "sensitivity": 3.0, "epsilon_if_continued": 0.5},
            {"budget": 4.0, "sensitivity": 2.0, "epsilon_if_continued": float("inf")})
    assert individualized._table_ceilings(rows) == {1.0: 1.5}
    assert individualized._table_ceilings(
        ({"budget": 2.0, "sensitivity": None, "epsilon_if_continued": 1.5},)) is None
