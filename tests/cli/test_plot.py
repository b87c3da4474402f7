"""pate-plot: every kind renders to PNG/PDF/SVG, bad input exits 2 with one line and leaves
no file behind. That the drawn data are the tables' is tested in tests/outputs/test_figures.py."""

from __future__ import annotations

import json
import struct

import numpy as np
import pandas as pd
import pytest

from pate_cli.inputs.table_pieces import read_table
from tests import SAMPLES

VOTES = SAMPLES / "mnist_250_votes.npy"
SMALL = ["--width", "5", "--height", "3.5", "--dpi", "30"]


def kind_args(kind: str, plot_runs) -> list:
    return {
        "history": ["history", plot_runs["confident"], plot_runs["lnmax"], "--budget", "1"],
        "groups": ["groups", plot_runs["groups"], "--summary", plot_runs["groups_json"]],
        "tradeoff": ["tradeoff", plot_runs["sweep"]],
        "selection": ["selection", VOTES, "-n", "500", "--params", "200,150",
                      "--params", "250,75", "--bins", "8"],
        "partition": ["partition", plot_runs["lnmax"], plot_runs["confident"]],
        "tradeoff-curve": ["tradeoff-curve", plot_runs["confident_json"],
                           plot_runs["lnmax_json"], "--log"],
    }[kind]


KINDS = ("history", "groups", "tradeoff", "selection", "partition", "tradeoff-curve")


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("fmt", ["png", "pdf", "svg"])
def test_every_kind_renders(kind, fmt, plot_runs, tmp_path, cli):
    out = tmp_path / f"figure.{fmt}"
    status, _, err = cli.plot(*kind_args(kind, plot_runs), *SMALL, "-o", out)
    assert (status, err) == (0, "")
    data = out.read_bytes()
    header = {"png": b"\x89PNG\r\n\x1a\n", "pdf": b"%PDF", "svg": b"<?xml"}[fmt]
    assert data.startswith(header) and len(data) > 1000
    assert [p.name for p in tmp_path.iterdir()] == [out.name]  # no temporary left over


@pytest.mark.parametrize("kind", KINDS)
def test_every_kind_renders_on_a_log_axis_without_a_warning(kind, plot_runs, tmp_path, cli):
    """``--logy``: no lower limit of 0 set on the log axis (matplotlib's raw "Attempt to
    set non-positive ylim" was printed for partition), and any warning is one line."""
    import warnings
    out = tmp_path / "log.png"
    with warnings.catch_warnings(record=True) as raw:  # not printed as a "Warning:" line
        warnings.simplefilter("always")
        status, _, err = cli.plot(*kind_args(kind, plot_runs), *SMALL, "--logy", "-o", out)
    assert (status, err, [str(each.message) for each in raw]) == (0, "", [])


@pytest.mark.parametrize("kind", KINDS)
def test_png_size_is_width_height_dpi(kind, plot_runs, tmp_path, cli):
    out = tmp_path / "size.png"
    status = cli.plot(*kind_args(kind, plot_runs), "--width", "4.5", "--height", "3",
                      "--dpi", "60", "-o", out).code
    assert status == 0
    width, height = struct.unpack(">II", out.read_bytes()[16:24])
    assert (width, height) == (270, 180)


def test_same_inputs_same_bytes(plot_runs, tmp_path, cli):
    for name in ("a.svg", "b.svg", "a.png", "b.png"):
        assert cli.plot(*kind_args("history", plot_runs), *SMALL, "-o", tmp_path / name).code == 0
    assert (tmp_path / "a.svg").read_bytes() == (tmp_path / "b.svg").read_bytes()
    assert (tmp_path / "a.png").read_bytes() == (tmp_path / "b.png").read_bytes()


def test_caption_and_delta_from_summaries(plot_runs, tmp_path, cli):
    out = tmp_path / "h.svg"
    status = cli.plot("history", plot_runs["confident"], "--summary", plot_runs["confident_json"],
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


def test_sweep_table_given_to_history(plot_runs, tmp_path, cli):
    err = bad(cli, tmp_path, "history", plot_runs["sweep"], existing=b"old figure")
    assert "pate-sweep table" in err and "expected a per-query table" in err


def test_per_query_table_given_to_tradeoff(plot_runs, tmp_path, cli):
    err = bad(cli, tmp_path, "tradeoff", plot_runs["confident"])
    assert "is a per-query table" in err and "expected a pate-sweep table" in err


def test_missing_column(plot_runs, tmp_path, cli):
    table = tmp_path.parent / "no_cumulative.csv"
    pd.read_csv(plot_runs["confident"]).drop(columns="epsilon_cumulative").to_csv(
        table, index=False)
    err = bad(cli, tmp_path, "history", table)
    assert "no column 'epsilon_cumulative'" in err and "per-query table" in err


def test_summary_given_as_table(plot_runs, tmp_path, cli):
    err = bad(cli, tmp_path, "partition", plot_runs["confident_json"])
    assert "JSON summary" in err and "--summary" in err


def test_groups_needs_an_individualized_table(plot_runs, tmp_path, cli):
    err = bad(cli, tmp_path, "groups", plot_runs["confident"])
    assert "epsilon_cumulative_<group>" in err and "--individualized" in err


def test_groups_unknown_group_in_budgets(plot_runs, tmp_path, cli):
    groups = tmp_path.parent / "other_groups.csv"
    groups.write_text("group,budget\nhigh,1\nnobody,2\n")
    err = bad(cli, tmp_path, "groups", plot_runs["groups"], "--groups", groups)
    assert "'nobody'" in err


def test_tradeoff_without_labels(plot_runs, tmp_path, cli):
    table = tmp_path.parent / "no_labels.csv"
    plot_runs["sweep_frame"].assign(label_accuracy=None, label_accuracy_std=None).to_csv(
        table, index=False)
    err = bad(cli, tmp_path, "tradeoff", table)
    assert "--labels" in err and "--y answered" in err
    out = tmp_path / "answered.png"
    assert cli.plot("tradeoff", table, "--y", "answered", *SMALL, "-o", out).code == 0


@pytest.mark.parametrize("args, words", [
    (["history", "missing.csv"], "no such file"),
    (["selection", VOTES, "--params", "200"], "T,sigma1"),
    (["selection", VOTES], "--params"),
    (["selection", VOTES, "-n", "300", "--params", "200,150", "--params", "1e-300,1e-300"],
     "sigma threshold must lie in"),  # every pair checked, not the first alone
    (["history", "{confident}", "--label", "a", "--label", "b"], "one --label per input"),
    (["bogus"], "No such command"),
])
def test_bad_options(args, words, plot_runs, tmp_path, cli):
    args = [str(a).format(confident=plot_runs["confident"]) for a in args]
    assert words in bad(cli, tmp_path, *args)


def test_bad_output_extension_and_directory(plot_runs, tmp_path, cli):
    status, _, err = cli.plot("history", plot_runs["confident"], "-o", tmp_path / "f.jpg")
    assert status == 2 and ".png, .pdf or .svg" in err and err.count("\n") == 1
    status, _, err = cli.plot("history", plot_runs["confident"], "-o", tmp_path / "no" / "f.png")
    assert status == 2 and "does not exist" in err


def test_parquet_needs_pyarrow_or_reads(plot_runs, tmp_path, cli):
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        table = tmp_path.parent / "t.parquet"
        table.write_bytes(b"PAR1 not really")
        assert "pyarrow" in bad(cli, tmp_path, "history", table)
        return
    table = tmp_path.parent / "t.parquet"
    pd.read_csv(plot_runs["confident"]).to_parquet(table)
    assert cli.plot("history", table, *SMALL, "-o", tmp_path / "p.png").code == 0


@pytest.mark.parametrize("kind", (None, *KINDS))
def test_help_has_examples(kind, cli):
    status, out, _ = cli.plot(*([kind] if kind else []), "--help")
    assert status == 0 and "Examples:" in out and "pate-plot" in out


def test_groups_budgets_from_the_groups_file_and_first_rows(plot_runs, tmp_path, cli):
    out = tmp_path / "g.png"
    status, _, err = cli.plot("groups", plot_runs["groups"], "--groups",
                   SAMPLES / "mnist_250_groups.csv", "-n", "100", "--x", "answered",
                   *SMALL, "-o", out)
    assert (status, err) == (0, "")


def test_no_kind_is_one_line(cli):
    status, _, err = cli.plot()
    assert status == 2 and err.count("\n") == 1 and "Missing command" in err


def test_json_lines_summary_detected_and_read(plot_runs, tmp_path, cli):
    frame = read_table(plot_runs["confident_jsonl"], expected="t")
    csv = read_table(plot_runs["confident"], expected="t")
    np.testing.assert_allclose(frame["epsilon_cumulative"], csv["epsilon_cumulative"])
    lines_summary = tmp_path.parent / "summary_lines.jsonl"
    lines_summary.write_text(json.dumps(json.loads(plot_runs["confident_json"].read_text())) + "\n")
    assert "JSON summary" in bad(cli, tmp_path, "history", lines_summary)


def test_tradeoff_curve_refuses_a_summary_without_attack_risk(plot_runs, tmp_path, cli):
    """An individualized run's summary (null risk), one written before the risk keys, a
    per-query table, a damaged curve: one line, exit 2, the output left as it was."""
    folders = iter(range(10))

    def refused(*args, existing=None):
        folder = tmp_path / str(next(folders))
        folder.mkdir()
        return bad(cli, folder, "tradeoff-curve", *args, existing=existing)

    err = refused(plot_runs["groups_json"], existing=b"old figure")
    assert "no attack risk" in err and "individualized" in err
    assert "docs/explanation/risk.md" in err
    summary = json.loads(plot_runs["confident_json"].read_text())
    older = tmp_path / "older.json"
    older.write_text(json.dumps({k: v for k, v in summary.items()
                                 if k not in ("risk", "risk_data_independent")}))
    assert "no 'risk_data_independent' key" in refused(older)
    assert "JSON summary" in refused(plot_runs["confident"])
    damaged = tmp_path / "damaged.json"
    summary["risk"]["tradeoff"]["tpr"] = summary["risk"]["tradeoff"]["tpr"][:-1]
    damaged.write_text(json.dumps(summary))
    err = refused(plot_runs["confident_json"], damaged)
    assert "'risk' is not an attack risk" in err and "differ in length" in err
    for key, value in (("tpr_at_fpr", "0.1"), ("mu", float("inf")), ("tradeoff", [])):
        broken = json.loads(plot_runs["confident_json"].read_text())
        broken["risk_data_independent"][key] = value
        damaged.write_text(json.dumps(broken))
        assert "'risk_data_independent' is not an attack risk" in refused(damaged)


def test_tradeoff_curve_of_a_bare_summary(plot_runs, tmp_path, cli):
    """Only epsilon, delta and the risk keys: drawn, labelled by the file's name."""
    summary = json.loads(plot_runs["confident_json"].read_text())
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps({key: summary[key] for key in
                                ("epsilon", "delta", "risk", "risk_data_independent")}))
    status, _, err = cli.plot("tradeoff-curve", bare, *SMALL, "-o", tmp_path / "b.png")
    assert (status, err) == (0, "")


def test_tradeoff_curve_options(plot_runs, tmp_path, cli):
    """--label per summary; --delta is not an option (the curve holds at every delta)."""
    assert "one --label per input" in bad(cli, tmp_path, "tradeoff-curve",
                                          plot_runs["confident_json"], "--label", "a",
                                          "--label", "b")
    assert "No such option '--delta'" in bad(cli, tmp_path, "tradeoff-curve",
                                             plot_runs["confident_json"], "--delta", "1e-5")
    out = tmp_path / "curve.svg"
    status, _, err = cli.plot("tradeoff-curve", plot_runs["confident_json"], "--label",
                              "my run", *SMALL, "-o", out)
    assert (status, err) == (0, "")
    text = out.read_text()  # (its data-dependent curve is nowhere tighter: not drawn)
    assert 'id="publishable-0"' in text and 'id="data-dependent-0"' not in text
    assert 'id="gdp-0"' in text and 'id="diagonal"' in text and 'id="reported-0"' in text
    status, _, err = cli.plot("tradeoff-curve", plot_runs["lnmax_json"], *SMALL, "-o", out)
    assert (status, err) == (0, "") and 'id="data-dependent-0"' in out.read_text()
    for both in (["--logy"], ["--logy", "--log"]):  # log-log: no warning about the limits
        status, _, err = cli.plot("tradeoff-curve", plot_runs["confident_json"], *both,
                                  *SMALL, "-o", out)
        assert (status, err) == (0, "")


@pytest.mark.parametrize("kind, table, column, value", [
    ("history", "confident", "epsilon_cumulative", -1.0),
    ("tradeoff", "sweep", "label_accuracy", 5.0)])
def test_a_figure_out_of_its_domain_is_refused(plot_runs, tmp_path, cli, kind, table, column,
                                               value):
    """A negative cumulative epsilon and an accuracy of 5 were drawn."""
    edited = tmp_path.parent / f"edited_{kind}.csv"
    frame = pd.read_csv(plot_runs[table])
    frame.loc[2, column] = value
    frame.to_csv(edited, index=False)
    err = bad(cli, tmp_path, kind, edited)
    assert f"column '{column}' has {value:g}, outside [0, " in err


def test_a_summary_given_to_tradeoff_points_at_tradeoff_curve(plot_runs, tmp_path, cli):
    """It said '(give a summary with --summary)', an option tradeoff does not have."""
    err = bad(cli, tmp_path, "tradeoff", plot_runs["confident_json"])
    assert "--summary" not in err and "pate-plot tradeoff-curve" in err


@pytest.mark.parametrize("kind", ["history", "partition"])
def test_the_table_of_a_run_halted_before_its_first_query_is_drawn(kind, tmp_path, cli):
    """A budget below the first query's cost: the per-query table holds its header alone.
    pate-plot called it 'no rows (expected a per-query table)' and drew nothing; the figure
    is drawn without a line, its caption saying why (as pate-report's)."""
    table, summary, out = tmp_path / "q.csv", tmp_path / "s.json", tmp_path / "f.svg"
    assert cli.analyze(VOTES, "-n", "50", "--budget", "0.01", "--per-query", table,
                       "-f", "json", "-o", summary).code == 0
    assert len(table.read_text().splitlines()) == 1
    status, _, err = cli.plot(kind, table, "--summary", summary, *SMALL, "-o", out)
    assert (status, err) == (0, "")
    assert "no query in the table (the run halted before its first)" in out.read_text()


@pytest.mark.parametrize("kind", ["history", "partition"])
def test_a_table_of_a_header_alone_without_its_summary_is_refused(kind, tmp_path, cli):
    """pate-plot history drew an empty figure of a per-query table without rows (exit 0),
    where tradeoff refuses an empty table: refused in one line, nothing written (a run
    halted before its first query is drawn with its --summary, test above)."""
    table, out = tmp_path / "q.csv", tmp_path / "f.png"
    assert cli.analyze(VOTES, "-n", "50", "--per-query", table).code == 0
    table.write_text(table.read_text().splitlines()[0] + "\n")
    status, _, err = cli.plot(kind, table, *SMALL, "-o", out)
    assert status == 2 and err.count("\n") == 1, err
    assert err.startswith(f"Error: {table}: the table has no rows") and not out.exists()


def test_the_selection_captions_order_is_pate_analyzes(tmp_path, cli):
    """The default order is "chosen by the expected analysis" of the first pair: the one
    pate-analyze --accounting expected picks (review R42: the plot's mechanism lacked M, so
    it was charged the papers' Gaussian threshold curve, order 4 where pate-analyze has 4.5)."""
    import json
    import re

    for pair in ("175,75", "200,150"):
        out = tmp_path / "s.svg"
        assert cli.plot("selection", VOTES, "--params", pair, "--sigma", "40", "-o", out,
                        "-n", "640").code == 0
        shown = float(re.search(r"at order ([0-9.]+)", out.read_text()).group(1))
        threshold, sigma_threshold = pair.split(",")
        run = cli.analyze(VOTES, "-n", "640", "-T", threshold, "--sigma-threshold",
                          sigma_threshold, "--sigma", "40", "--accounting", "expected", "-f",
                          "json")
        assert shown == json.loads(run.out)["order"], pair
