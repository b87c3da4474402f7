"""Figures (``pate_cli.outputs.figures``, ``figure_data``): the drawn data are the tables'
(lines, bars and areas read back from the matplotlib objects)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import pate_cli
from pate_cli.accounting.selection import selection_bins
from pate_cli.inputs.table_pieces import read_table
from pate_cli.outputs import figure_data
from pate_cli.outputs import figures as plots
from pate_cli.outputs.figure_style import Style
from pate_cli.outputs.plot_files import plot_groups
from pate_cli.outputs.report_figures import groups_plot
from tests import SAMPLES

VOTES = SAMPLES / "mnist_250_votes.npy"


def lines(figure, prefix: str) -> dict:
    return {line.get_gid(): line for axes in figure.axes for line in axes.get_lines()
            if (line.get_gid() or "").startswith(prefix)}


def test_history_lines_are_the_epsilon_cumulative_column(plot_runs):
    frames = [read_table(plot_runs[name], expected="t") for name in ("confident", "lnmax")]
    figure = plots.history_figure([("a", frames[0]), ("b", frames[1])], delta=1e-6,
                                  budget=1.0)
    drawn = lines(figure, "history-")
    for number, frame in enumerate(frames):
        line = drawn[f"history-{number}"]
        np.testing.assert_array_equal(line.get_ydata(), frame["epsilon_cumulative"])
        np.testing.assert_array_equal(line.get_xdata(), frame["query"])
        stop = np.flatnonzero(frame["epsilon_cumulative"].to_numpy() > 1.0)[0]
        marker = lines(figure, f"stop-{number}")[f"stop-{number}"]
        assert marker.get_xdata()[0] == frame["query"][stop]
    assert lines(figure, "budget")["budget"].get_ydata()[0] == 1.0
    assert "delta$ = 1e-6" in figure.axes[0].get_ylabel()


def test_history_jsonl_and_answered_axis(plot_runs):
    frame = read_table(plot_runs["confident_jsonl"], expected="t")
    figure = plots.history_figure([("a", frame)], delta=1e-5, x="answered")
    line = lines(figure, "history-0")["history-0"]
    np.testing.assert_array_equal(line.get_xdata(), np.cumsum(frame["answered"]))
    np.testing.assert_allclose(line.get_ydata(), plot_runs["confident_result"].epsilon_cumulative)


def test_groups_lines_budgets_and_exhaustion(plot_runs):
    frame = read_table(plot_runs["groups"], expected="t")
    summary = json.loads(plot_runs["groups_json"].read_text())
    budgets = {row["group"]: row["budget"] for row in summary["groups"]}
    halts = {row["group"]: row["exhausted_at"] for row in summary["groups"]}
    halts[""] = summary["baseline"]["stopped_at"]
    # from the table alone: the first query after which a group exceeds, at or after the
    # run's halt (under replay the run halts before a query whose full charge would)
    alone = lines(plots.groups_figure(frame, budgets=budgets, delta=1e-5), "")
    assert alone["stop"].get_xdata()[0] >= summary["stopped_at"]
    assert alone["stop"].get_label().startswith("a budget first exceeded at query")
    figure = plots.groups_figure(frame, budgets=budgets, delta=1e-5, halts=halts)
    drawn = lines(figure, "")
    for row in summary["groups"]:
        name = row["group"]
        np.testing.assert_array_equal(drawn[f"group-{name}"].get_ydata(),
                                      frame[f"epsilon_cumulative_{name}"])
        assert drawn[f"budget-{name}"].get_ydata()[0] == row["budget"]
        assert drawn[f"budget-{name}"].get_color() == drawn[f"group-{name}"].get_color()
        if row["exhausted_at"] is not None:
            assert drawn[f"exhausted-{name}"].get_xdata()[0] == row["exhausted_at"]
    assert drawn["stop"].get_xdata()[0] == summary["stopped_at"]
    assert drawn["baseline-stop"].get_xdata()[0] == summary["baseline"]["stopped_at"]
    # The same number and words as the text summary: the first query not released.
    assert drawn["stop"].get_label() == f"labelling stops before query {summary['stopped_at']}"
    assert drawn["baseline"].get_label().endswith(
        f"stops before query {summary['baseline']['stopped_at']}")



@pytest.mark.parametrize("command", ["pate-plot", "pate-report"])
def test_the_groups_figure_marks_the_summarys_halts(plot_runs, command):
    """``pate-plot groups --summary`` and pate-report mark the run's own halts (the
    summary's), which the table's cumulative columns alone do not give under replay."""
    summary = json.loads(plot_runs["groups_json"].read_text())
    figure = (plot_groups(plot_runs["groups"], groups_path=None,
                          summary_path=plot_runs["groups_json"], x="query", baseline=True,
                          queries=None, style=Style(), delta=None)
              if command == "pate-plot"
              else groups_plot(summary, read_table(plot_runs["groups"], expected="t")))
    drawn = lines(figure, "")
    assert drawn["stop"].get_xdata()[0] == summary["stopped_at"]
    for row in summary["groups"]:
        if row["exhausted_at"] is not None:
            assert drawn[f"exhausted-{row['group']}"].get_xdata()[0] == row["exhausted_at"]

def test_selection_bars_are_the_bins(plot_runs):
    """The bars and dots are the bins' numbers (accounting.selection; its tests check
    them against independent values)."""
    votes = np.load(VOTES)[:500].astype(np.float64)
    params = [(200.0, 150.0), (250.0, 75.0)]
    data = selection_bins(votes, teachers=250, params=params, sigma=40, order=8, bins=8)
    figure = plots.selection_figure(data, params=params, sigma=40, order=8)

    def heights(gid):
        return [bar.get_height() for bar in figure.axes[0].patches if bar.get_gid() == gid]

    np.testing.assert_array_equal(heights("bars-all"), data.queries)
    np.testing.assert_array_equal(heights("bars-answered_0"), data.answered[0])
    np.testing.assert_array_equal(heights("bars-answered_1"), data.answered[1])
    centers = [bar.get_x() + bar.get_width() / 2 for bar in figure.axes[0].patches
               if bar.get_gid() == "bars-answered_0"]
    np.testing.assert_allclose(centers, data.center, rtol=0, atol=1e-9)
    cost = figure.axes[1].get_lines()[0]
    assert figure.axes[1].get_yscale() == "log"
    shown = np.isfinite(data.cost) & (data.cost > 0)
    np.testing.assert_array_equal(cost.get_ydata(), data.cost[shown])
    np.testing.assert_array_equal(cost.get_xdata(), data.center[shown])
    rdp = pate_cli.rdp_gnmax(pate_cli.log_q_gnmax(votes, sigma=40), sigma=40, orders=[8])[:, 0]
    plurality = votes.max(axis=1)
    inside = (plurality[:, None] >= data.left) & (plurality[:, None] < data.right)
    expected = (rdp @ inside) / inside.sum(axis=0)
    np.testing.assert_allclose(cost.get_ydata(), expected[shown], rtol=1e-12)


def test_partition_areas_sum_to_the_total(plot_runs):
    frame = read_table(plot_runs["confident"], expected="t")
    answered, total, selection, answer = figure_data.partition_split(frame)
    np.testing.assert_allclose(selection + answer, total, rtol=1e-12)
    assert np.all(selection >= 0) and np.all(answer >= 0) and selection[-1] > 0
    share = frame["rdp_selection"].sum() / (frame["rdp_selection"].sum()
                                            + frame["rdp_answer"].sum())
    assert selection[-1] == pytest.approx(total[-1] * share)
    lnmax = read_table(plot_runs["lnmax"], expected="t")
    figure = plots.partition_figure([("LNMax", lnmax), ("Confident", frame)], delta=1e-6)
    areas = {c.get_gid(): c.get_paths()[0].vertices for c in figure.axes[0].collections}
    n = len(frame)
    def edges(vertices):  # fill_between(x, y1, y2): start, y1 forwards, end, y2 backwards
        return vertices[1:n + 1], vertices[n + 2:2 * n + 2][::-1]

    floor, top = edges(areas["selection-1"])
    np.testing.assert_array_equal(floor[:, 1], 0.0)
    np.testing.assert_allclose(top[:, 1], selection)
    bottom, top = edges(areas["answer-1"])
    np.testing.assert_allclose(bottom[:, 1], selection)  # answer area stacked on selection
    np.testing.assert_allclose(top[:, 1], total)  # ... up to the total
    np.testing.assert_array_equal(top[:, 0], answered)
    assert "selection-0" not in areas  # LNMax has no selection step: a line only
    np.testing.assert_array_equal(lines(figure, "total-0")["total-0"].get_ydata(),
                                  lnmax["epsilon_cumulative"])


def test_tradeoff_curves_sorted_with_error_bars(plot_runs):
    sweep = plot_runs["sweep_frame"]
    curves = plots.tradeoff_curves(sweep)
    assert [label for label, _ in curves] == ["GNMax", "LNMax"]
    np.testing.assert_array_equal(curves[0][1]["epsilon"], [2.0, 3.0, 5.0])
    figure = plots.tradeoff_figure(sweep, delta=1e-5)
    drawn = {c.get_label(): c for c in figure.axes[0].containers}
    gnmax = drawn["GNMax"]
    np.testing.assert_array_equal(gnmax.lines[0].get_ydata(), [0.8, 0.9, 0.95])
    assert gnmax.has_xerr and gnmax.has_yerr
    assert not drawn["LNMax"].has_xerr  # all-zero std: no error bars
    assert plots.point_labels(curves[0][1]) == ["$\\sigma$=60", "$\\sigma$=40",
                                                "$\\sigma$=20"]


def test_tradeoff_by_teachers_labels(plot_runs):
    sweep = plot_runs["sweep_frame"]
    labels = [label for label, _ in plots.tradeoff_curves(sweep, by="teachers")]
    assert labels == ["LNMax, M = 100 teachers", "GNMax, M = 250 teachers"]
    one = sweep[sweep["mechanism"] == "gnmax"]
    assert [label for label, _ in plots.tradeoff_curves(one, by="teachers")] == [
        "M = 250 teachers"]


def zigzag_sweep():
    import pandas as pd
    # Grid order: sigma 10..60. Epsilon does not fall with the noise (data-dependent).
    return pd.DataFrame({
        "file": "v.npy", "mechanism": "gnmax", "sigma": [10, 20, 30, 40, 50, 60],
        "threshold": None, "sigma_threshold": None, "laplace_scale": None,
        "teachers": 250, "epsilon": [6.0, 2.0, 4.0, 3.0, 2.0, 1.0],
        "label_accuracy": [0.97, 0.90, 0.85, 0.93, 0.88, 0.80],
        "answered": [100, 90, 95, 80, 90, 70]})


def test_frontier_mask_matches_the_definition():
    rng = np.random.default_rng(3)
    for _ in range(50):
        eps = rng.integers(0, 6, 12).astype(float)
        score = rng.integers(0, 6, 12).astype(float)
        beaten = [any(e2 <= e and s2 >= s and (e2 < e or s2 > s)
                      for e2, s2 in zip(eps, score, strict=True))
                  for e, s in zip(eps, score, strict=True)]
        np.testing.assert_array_equal(figure_data.frontier_mask(eps, score), ~np.array(beaten))
    assert figure_data.frontier_mask([], []).shape == (0,)


@pytest.mark.parametrize("y, frontier, dominated", [
    ("label_accuracy", [(1.0, 0.80), (2.0, 0.90), (3.0, 0.93), (6.0, 0.97)],
     [(2.0, 0.88), (4.0, 0.85)]),
    # Equal points (sigma 20 and 50) both stay on the frontier.
    ("answered", [(1.0, 70), (2.0, 90), (2.0, 90), (4.0, 95), (6.0, 100)], [(3.0, 80)]),
])
def test_tradeoff_line_is_the_pareto_frontier(y, frontier, dominated):
    figure = plots.tradeoff_figure(zigzag_sweep(), delta=1e-5, y=y)
    curve = figure.axes[0].containers[0].lines[0]
    assert list(zip(curve.get_xdata(), curve.get_ydata(), strict=True)) == frontier
    dots = lines(figure, "dominated-")["dominated-0"]
    assert sorted(zip(dots.get_xdata(), dots.get_ydata(), strict=True)) == dominated
    assert dots.get_linestyle() == "None" and dots.get_alpha() < 1
    texts = [text.get_text() for text in figure.axes[0].texts]
    assert len(texts) == len(frontier)  # only the frontier points are annotated
    if y == "label_accuracy":
        assert texts == ["$\\sigma$=60", "$\\sigma$=20", "$\\sigma$=40", "$\\sigma$=10"]


@pytest.mark.parametrize("labels", [
    ["a", "b", "c", "d"],
    [f"Confident-GNMax, data-independent (RDP figure over budget at query {n})"
     for n in (463, 1164, 552, 12)]])
def test_a_legend_above_the_plot_fits_the_figure_s_width(labels):
    """Entries above the plot go in two columns where they fit, else one: long labels
    (a budget crossing named in each) ran past both edges of the figure."""
    import pandas as pd

    frame = pd.DataFrame({"query": np.arange(5), "epsilon_cumulative": np.linspace(0, 4, 5)})
    figure = plots.history_figure([(label, frame) for label in labels], delta=1e-5, budget=3.0)
    figure.draw_without_rendering()
    legend = figure.legends[0]
    assert legend.get_window_extent().width <= figure.bbox.width
    assert legend._ncols == (2 if labels[0] == "a" else 1)


def test_a_caption_quotes_the_bound_for_any_run_the_summary_leads_with():
    """Where the PLD bound for any run is the smaller, the caption quotes it first, as the
    summary and the report do (it quoted 8.9509 by RDP beside a published 7.6708)."""
    from pate_cli.outputs.captions import figure_note

    summary = {"accounting": "data-independent", "epsilon": 5.4606, "epsilon_method": "pld",
               "mechanism": "confident", "epsilon_data_independent_worst": 8.95081,
               "epsilon_data_independent_worst_pld": 7.67071}
    note = figure_note(summary)
    assert note.endswith("not a bound (every query answered: 7.6708, PLD, and 8.9509, RDP)")
    summary["epsilon_data_independent_worst_pld"] = None
    assert figure_note(summary).endswith("(every query answered: 8.9509, RDP)")


def test_a_long_legend_label_wraps_on_a_narrow_figure_and_the_budget_is_not_rounded_down():
    """At 4 inches a budget-crossing label ran off the figure; a budget of 3.8486103 read
    3.84861 beside a published 3.8486102825 within it."""
    import pandas as pd

    label = "GNMax (RDP figure over budget at query 277; published PLD epsilon 2.9433 within it)"
    frame = pd.DataFrame({"query": np.arange(5), "epsilon_cumulative": np.linspace(0, 5, 5)})
    figure = plots.history_figure([(label, frame)], delta=1e-5, budget=3.8486103,
                                  style=Style(width=4.0))
    figure.draw_without_rendering()
    texts = [text.get_text() for text in figure.axes[0].get_legend().get_texts()]
    assert "\n" in texts[0] and texts[0].replace("\n", " ").startswith(label)
    assert texts[1] == "budget $\\varepsilon$ = 3.8487"  # rounded up as the figures held to it


def test_a_published_figure_within_the_budget_prints_as_the_budget_line_does():
    """Both rounded up at four decimals (the budget via limit_text): 3.8487 within 3.8487,
    not the full 3.8486102825387287 beside a budget read at :g."""
    text, within = figure_data.budget_crossing("GNMax", "at query 277", 3.8486103,
                                               figure_data.Headline(3.8486102825387287))
    assert within and text.endswith("published PLD epsilon 3.8487 within it)")
