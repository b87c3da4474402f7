"""pate-plot: every kind renders to PNG/PDF/SVG, the drawn data are the tables', bad input
exits 2 with one line and leaves no file behind."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

import pate_cli
from pate_cli.analysis.serialize import per_query_frame, summary_dict
from pate_cli.inputs.tables import read_table
from pate_cli.outputs import figure_data
from pate_cli.outputs import figures as plots
from pate_cli.outputs.files import per_query_bytes
from pate_cli.outputs.summary import render
from tests import SAMPLES

VOTES = SAMPLES / "mnist_250_votes.npy"
SMALL = ["--width", "5", "--height", "3.5", "--dpi", "30"]


def write_run(directory: Path, name: str, result, extension: str = ".csv") -> tuple[Path, Path]:
    table = directory / f"{name}{extension}"
    table.write_bytes(per_query_bytes(per_query_frame(result), str(table)))
    summary = directory / f"{name}.json"
    summary.write_text(render(summary_dict(result), "json"))
    return table, summary


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Small per-query tables and summaries: Confident, LNMax, an individualized run."""
    directory = tmp_path_factory.mktemp("runs")
    votes = pate_cli.load_votes(VOTES)
    confident = pate_cli.analyze(votes, "confident", queries=300, delta=1e-6)
    lnmax = pate_cli.analyze(votes, "lnmax", queries=200, delta=1e-6)
    parameters = pate_cli.derive_parameters(pate_cli.load_groups(SAMPLES / "mnist_250_groups.csv"),
                                            variant="upsampling")
    groups = pate_cli.analyze_individualized(
        votes.votes, pate_cli.ConfidentGNMax(threshold=200, sigma_threshold=150, sigma=40),
        parameters, queries=400, source=votes)
    paths = {}
    for name, result in (("confident", confident), ("lnmax", lnmax), ("groups", groups)):
        paths[name], paths[f"{name}_json"] = write_run(directory, name, result)
    paths["confident_jsonl"], _ = write_run(directory, "confident_lines", confident, ".jsonl")
    sweep = pd.DataFrame({
        "file": "v.npy", "mechanism": ["gnmax", "gnmax", "gnmax", "lnmax", "lnmax"],
        "sigma": [40, 20, 60, None, None], "threshold": None, "sigma_threshold": None,
        "laplace_scale": [None, None, None, 20, 40], "queries": 100,
        "teachers": [250, 250, 250, 100, 100], "answered": [100, 100, 100, 100, 100],
        "answered_std": 0.0, "epsilon": [3.0, 5.0, 2.0, 7.0, 4.0],
        "epsilon_std": [0.1, 0.0, 0.2, 0.0, 0.0], "order": 10,
        "epsilon_data_independent": 20.0, "label_accuracy": [0.9, 0.95, 0.8, 0.85, 0.7],
        "label_accuracy_std": [0.01, 0.0, 0.02, 0.0, 0.0], "repeats": 3, "seed": 0})
    paths["sweep"] = directory / "sweep.csv"
    sweep.to_csv(paths["sweep"], index=False)
    paths["sweep_frame"] = sweep
    paths["groups_result"] = groups
    paths["confident_result"] = confident
    return paths


def kind_args(kind: str, runs) -> list:
    return {
        "history": ["history", runs["confident"], runs["lnmax"], "--budget", "1"],
        "groups": ["groups", runs["groups"], "--summary", runs["groups_json"]],
        "tradeoff": ["tradeoff", runs["sweep"]],
        "selection": ["selection", VOTES, "-n", "500", "--params", "200,150",
                      "--params", "250,75", "--bins", "8"],
        "partition": ["partition", runs["lnmax"], runs["confident"]],
    }[kind]


KINDS = ("history", "groups", "tradeoff", "selection", "partition")


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("fmt", ["png", "pdf", "svg"])
def test_every_kind_renders(kind, fmt, runs, tmp_path, cli):
    out = tmp_path / f"figure.{fmt}"
    status, _, err = cli.plot(*kind_args(kind, runs), *SMALL, "-o", out)
    assert (status, err) == (0, "")
    data = out.read_bytes()
    header = {"png": b"\x89PNG\r\n\x1a\n", "pdf": b"%PDF", "svg": b"<?xml"}[fmt]
    assert data.startswith(header) and len(data) > 1000
    assert [p.name for p in tmp_path.iterdir()] == [out.name]  # no temporary left over


@pytest.mark.parametrize("kind", KINDS)
def test_png_size_is_width_height_dpi(kind, runs, tmp_path, cli):
    out = tmp_path / "size.png"
    status = cli.plot(*kind_args(kind, runs), "--width", "4.5", "--height", "3",
                      "--dpi", "60", "-o", out).code
    assert status == 0
    width, height = struct.unpack(">II", out.read_bytes()[16:24])
    assert (width, height) == (270, 180)


def test_same_inputs_same_bytes(runs, tmp_path, cli):
    for name in ("a.svg", "b.svg", "a.png", "b.png"):
        assert cli.plot(*kind_args("history", runs), *SMALL, "-o", tmp_path / name).code == 0
    assert (tmp_path / "a.svg").read_bytes() == (tmp_path / "b.svg").read_bytes()
    assert (tmp_path / "a.png").read_bytes() == (tmp_path / "b.png").read_bytes()


def lines(figure, prefix: str) -> dict:
    return {line.get_gid(): line for axes in figure.axes for line in axes.get_lines()
            if (line.get_gid() or "").startswith(prefix)}


def test_history_lines_are_the_epsilon_cumulative_column(runs):
    frames = [read_table(runs[name], expected="t") for name in ("confident", "lnmax")]
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


def test_history_jsonl_and_answered_axis(runs):
    frame = read_table(runs["confident_jsonl"], expected="t")
    figure = plots.history_figure([("a", frame)], delta=1e-5, x="answered")
    line = lines(figure, "history-0")["history-0"]
    np.testing.assert_array_equal(line.get_xdata(), np.cumsum(frame["answered"]))
    np.testing.assert_allclose(line.get_ydata(), runs["confident_result"].epsilon_cumulative)


def test_groups_lines_budgets_and_exhaustion(runs):
    frame = read_table(runs["groups"], expected="t")
    summary = json.loads(runs["groups_json"].read_text())
    budgets = {row["group"]: row["budget"] for row in summary["groups"]}
    figure = plots.groups_figure(frame, budgets=budgets, delta=1e-5)
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


def test_selection_bars_are_the_counts(runs):
    votes = np.load(VOTES)[:500].astype(np.float64)
    params = [(200.0, 150.0), (250.0, 75.0)]
    data = figure_data.selection_bins(votes, teachers=250, params=params, sigma=40, order=8,
                                bins=8)
    plurality = votes.max(axis=1)
    inside = (plurality[:, None] >= data["left"].to_numpy()) & (
        plurality[:, None] < data["right"].to_numpy())
    assert np.all(inside.sum(axis=1) == 1)  # every query in exactly one bin
    np.testing.assert_array_equal(data["all"], inside.sum(axis=0))
    for number, (threshold, sigma_threshold) in enumerate(params):
        pr = norm.sf((threshold - plurality) / sigma_threshold)
        np.testing.assert_allclose(data[f"answered_{number}"], pr @ inside, rtol=1e-10)
    figure = plots.selection_figure(data, params=params, sigma=40, order=8)
    def heights(gid):
        return [bar.get_height() for bar in figure.axes[0].patches if bar.get_gid() == gid]

    np.testing.assert_array_equal(heights("bars-all"), data["all"])
    np.testing.assert_allclose(heights("bars-answered_1"), data["answered_1"])
    cost = figure.axes[1].get_lines()[0]
    assert figure.axes[1].get_yscale() == "log"
    rdp = pate_cli.rdp_gnmax(pate_cli.log_q_gnmax(votes, sigma=40), sigma=40, orders=[8])[:, 0]
    expected = (rdp @ inside) / inside.sum(axis=0)
    shown = np.isfinite(expected) & (expected > 0)
    np.testing.assert_allclose(cost.get_ydata(), expected[shown], rtol=1e-12)


def test_partition_areas_sum_to_the_total(runs):
    frame = read_table(runs["confident"], expected="t")
    answered, total, selection, answer = figure_data.partition_split(frame)
    np.testing.assert_allclose(selection + answer, total, rtol=1e-12)
    assert np.all(selection >= 0) and np.all(answer >= 0) and selection[-1] > 0
    share = frame["rdp_selection"].sum() / (frame["rdp_selection"].sum()
                                            + frame["rdp_answer"].sum())
    assert selection[-1] == pytest.approx(total[-1] * share)
    lnmax = read_table(runs["lnmax"], expected="t")
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


def test_tradeoff_curves_sorted_with_error_bars(runs):
    sweep = runs["sweep_frame"]
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


def test_tradeoff_by_teachers_labels(runs):
    sweep = runs["sweep_frame"]
    labels = [label for label, _ in plots.tradeoff_curves(sweep, by="teachers")]
    assert labels == ["LNMax, M = 100 teachers", "GNMax, M = 250 teachers"]
    one = sweep[sweep["mechanism"] == "gnmax"]
    assert [label for label, _ in plots.tradeoff_curves(one, by="teachers")] == [
        "M = 250 teachers"]


def test_caption_and_delta_from_summaries(runs, tmp_path, cli):
    out = tmp_path / "h.svg"
    status = cli.plot("history", runs["confident"], "--summary", runs["confident_json"],
                      *SMALL, "-o", out).code
    assert status == 0
    text = out.read_text()
    assert "threshold=200" in text or "threshold=200" in text.replace("\n", "")


def bad(cli, tmp_path, *args, existing: bytes | None = None) -> str:
    out = tmp_path / "out.png"
    if existing is not None:
        out.write_bytes(existing)
    status, _, err = cli.plot(*args, "-o", out)
    assert status == 2, err
    assert err.count("\n") == 1 and err.startswith("Error: ") and "Traceback" not in err
    if existing is None:
        assert not out.exists()
    else:
        assert out.read_bytes() == existing
    assert sorted(p.name for p in tmp_path.iterdir()) == ([out.name] if existing else [])
    return err


def test_sweep_table_given_to_history(runs, tmp_path, cli):
    err = bad(cli, tmp_path, "history", runs["sweep"], existing=b"old figure")
    assert "pate-sweep table" in err and "expected a per-query table" in err


def test_per_query_table_given_to_tradeoff(runs, tmp_path, cli):
    err = bad(cli, tmp_path, "tradeoff", runs["confident"])
    assert "is a per-query table" in err and "expected a pate-sweep table" in err


def test_missing_column(runs, tmp_path, cli):
    table = tmp_path.parent / "no_cumulative.csv"
    pd.read_csv(runs["confident"]).drop(columns="epsilon_cumulative").to_csv(table, index=False)
    err = bad(cli, tmp_path, "history", table)
    assert "no column 'epsilon_cumulative'" in err and "per-query table" in err


def test_summary_given_as_table(runs, tmp_path, cli):
    err = bad(cli, tmp_path, "partition", runs["confident_json"])
    assert "JSON summary" in err and "--summary" in err


def test_groups_needs_an_individualized_table(runs, tmp_path, cli):
    err = bad(cli, tmp_path, "groups", runs["confident"])
    assert "epsilon_cumulative_<group>" in err and "--individualized" in err


def test_groups_unknown_group_in_budgets(runs, tmp_path, cli):
    groups = tmp_path.parent / "other_groups.csv"
    groups.write_text("group,budget\nhigh,1\nnobody,2\n")
    err = bad(cli, tmp_path, "groups", runs["groups"], "--groups", groups)
    assert "'nobody'" in err


def test_tradeoff_without_labels(runs, tmp_path, cli):
    table = tmp_path.parent / "no_labels.csv"
    runs["sweep_frame"].assign(label_accuracy=None, label_accuracy_std=None).to_csv(
        table, index=False)
    err = bad(cli, tmp_path, "tradeoff", table)
    assert "--labels" in err and "--y answered" in err
    out = tmp_path / "answered.png"
    assert cli.plot("tradeoff", table, "--y", "answered", *SMALL, "-o", out).code == 0


@pytest.mark.parametrize("args, words", [
    (["history", "missing.csv"], "no such file"),
    (["selection", VOTES, "--params", "200"], "T,sigma1"),
    (["selection", VOTES], "--params"),
    (["history", "{confident}", "--label", "a", "--label", "b"], "one --label per input"),
    (["bogus"], "No such command"),
])
def test_bad_options(args, words, runs, tmp_path, cli):
    args = [str(a).format(confident=runs["confident"]) for a in args]
    assert words in bad(cli, tmp_path, *args)


def test_bad_output_extension_and_directory(runs, tmp_path, cli):
    status, _, err = cli.plot("history", runs["confident"], "-o", tmp_path / "f.jpg")
    assert status == 2 and ".png, .pdf or .svg" in err and err.count("\n") == 1
    status, _, err = cli.plot("history", runs["confident"], "-o", tmp_path / "no" / "f.png")
    assert status == 2 and "does not exist" in err


def test_parquet_needs_pyarrow_or_reads(runs, tmp_path, cli):
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        table = tmp_path.parent / "t.parquet"
        table.write_bytes(b"PAR1 not really")
        assert "pyarrow" in bad(cli, tmp_path, "history", table)
        return
    table = tmp_path.parent / "t.parquet"
    pd.read_csv(runs["confident"]).to_parquet(table)
    assert cli.plot("history", table, *SMALL, "-o", tmp_path / "p.png").code == 0


@pytest.mark.parametrize("kind", (None, *KINDS))
def test_help_has_examples(kind, cli):
    status, out, _ = cli.plot(*([kind] if kind else []), "--help")
    assert status == 0 and "Examples:" in out and "pate-plot" in out


def test_groups_budgets_from_the_groups_file_and_first_rows(runs, tmp_path, cli):
    out = tmp_path / "g.png"
    status, _, err = cli.plot("groups", runs["groups"], "--groups",
                   SAMPLES / "mnist_250_groups.csv", "-n", "100", "--x", "answered",
                   *SMALL, "-o", out)
    assert (status, err) == (0, "")


def test_no_kind_is_one_line(cli):
    status, _, err = cli.plot()
    assert status == 2 and err.count("\n") == 1 and "Missing command" in err


def test_json_lines_summary_detected_and_read(runs, tmp_path, cli):
    frame = read_table(runs["confident_jsonl"], expected="t")
    csv = read_table(runs["confident"], expected="t")
    np.testing.assert_allclose(frame["epsilon_cumulative"], csv["epsilon_cumulative"])
    lines_summary = tmp_path.parent / "summary_lines.jsonl"
    lines_summary.write_text(json.dumps(json.loads(runs["confident_json"].read_text())) + "\n")
    assert "JSON summary" in bad(cli, tmp_path, "history", lines_summary)
