"""The rows a report's figures draw (outputs.figure_data.figure_rows): the whole table up
to a limit, else every k-th row with each output's last and the first over each budget,
whatever the pieces the table streams in; and pate-report's memory does not grow with the
number of queries."""

from __future__ import annotations

import numpy as np
import pandas as pd
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

import pate_cli
from pate_cli.cli.report import report
from pate_cli.outputs import figure_data
from pate_cli.outputs.figure_data import figure_rows
from pate_cli.outputs.report_figures import figure_budgets, report_figures
from tests.memory import traced_peak


def _table(rows: int, outputs: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    ids = np.sort(rng.integers(0, outputs, size=rows))
    return pd.DataFrame({
        "query": np.arange(rows), "answered": rng.random(rows),
        "epsilon_cumulative": np.cumsum(rng.random(rows)),
        "epsilon_cumulative_a": np.cumsum(rng.random(rows)) / 2, "output": ids})


def _pieces(table: pd.DataFrame, cuts: list[int]):
    edges = [0, *sorted({min(cut, len(table)) for cut in cuts}), len(table)]
    return [table.iloc[lo:hi] for lo, hi in zip(edges[:-1], edges[1:], strict=True)]


@settings(max_examples=150, deadline=None)
@given(rows=st.integers(1, 400), outputs=st.integers(1, 50), seed=st.integers(0, 99),
       cuts=st.lists(st.integers(0, 400), max_size=8), limit=st.integers(1, 500),
       budgets=st.lists(st.floats(0, 150), max_size=3))
def test_the_kept_rows(rows, outputs, seed, cuts, limit, budgets):
    table = _table(rows, outputs, seed)
    budgets = tuple(budgets)
    kept = figure_rows(_pieces(table, cuts), queries=rows, budgets=budgets, limit=limit)
    whole = figure_rows([table], queries=rows, budgets=budgets, limit=limit)
    pd.testing.assert_frame_equal(kept, whole)  # whatever the pieces
    every = -(-rows // limit)
    assert kept.attrs["every"] == every
    if rows <= limit:
        pd.testing.assert_frame_equal(kept, table.reset_index(drop=True))
        return
    queries = set(kept["query"])
    expected = set(range(0, rows, every)) | {rows - 1}
    expected |= set(table.groupby("output").tail(1)["query"])  # each output's last
    for column in ("epsilon_cumulative", "epsilon_cumulative_a"):
        for budget in budgets:
            over = np.flatnonzero(table[column].to_numpy() > budget)
            expected |= set(over[:1].tolist())  # the first over each budget
    assert queries == expected
    assert np.all(np.diff(kept["query"].to_numpy()) > 0)  # in table order, each once


def test_a_long_run_is_drawn_from_every_kth_query(tmp_path, monkeypatch):
    votes = np.random.default_rng(3).multinomial(250, np.full(10, 0.1), size=1000)
    np.save(tmp_path / "votes.npy", votes)
    options = dict(threshold=30, sigma_threshold=10, sigma=6, accounting="expected")
    result = pate_cli.analyze(str(tmp_path / "votes.npy"), per_query="stream", **options)
    summary = result.to_dict()
    frame = figure_rows(result.iter_frames(), queries=result.queries,
                        budgets=figure_budgets(summary), limit=100)
    figures = dict(report_figures(summary, frame))
    (caption,) = [text.get_text().replace("\n", " ") for text in figures["history"].texts
                  if text.get_gid() == "caption"]
    every = -(-result.queries // 100)
    assert f"Drawn from one query in every {every} of the {result.queries:,}" in caption
    whole = dict(report_figures(summary, result.to_frame()))["history"]
    (full,) = [text.get_text().replace("\n", " ") for text in whole.texts
               if text.get_gid() == "caption"]
    assert "Drawn from" not in full and caption.startswith(full)
    # the command draws the same rows
    monkeypatch.setattr(figure_data, "FIGURE_ROWS", 100)
    done = CliRunner().invoke(report, [
        str(tmp_path / "votes.npy"), "-T", "30", "--sigma-threshold", "10", "--sigma", "6",
        "--budget", "50", "-o", str(tmp_path / "r.md")])
    assert done.exit_code == 0, done.output


def test_report_memory_does_not_grow_with_the_queries(tmp_path, monkeypatch):
    """Votes drawn from 200 distinct rows (so the run's own tables stay small): the
    report over 4 x 10^5 queries peaks within 16 MB of the one over 2 x 10^5 (45 and 41 MB,
    measured; with the per-query columns the report held before, 88 MB and 187 MB at
    2 and 6 x 10^5 queries: about 50 MB more at 4 x 10^5)."""
    monkeypatch.setattr(figure_data, "FIGURE_ROWS", 1 << 12)
    rng = np.random.default_rng(4)
    distinct = rng.multinomial(250, np.full(10, 0.1), size=200).astype(np.int16)

    def peak(queries, measure=traced_peak):
        path = tmp_path / f"votes{queries}.npy"
        np.save(path, distinct[rng.integers(0, 200, size=queries)])
        args = [str(path), "--accounting", "expected", "-T", "30", "--sigma-threshold",
                "10", "--sigma", "6", "-o", str(tmp_path / f"r{queries}.md")]
        return measure(lambda: CliRunner().invoke(report, args, catch_exceptions=False))

    peak(2_000, measure=lambda run: run())  # imports and caches first, untraced
    small, large = peak(200_000), peak(400_000)
    assert large < small + 16 * 2**20, (small, large)


def test_report_from_a_summary_reads_its_table_in_pieces(tmp_path, monkeypatch):
    """pate-report --from SUMMARY --per-query TABLE over 5 x 10^4 and 2 x 10^5 queries
    (FIGURE_ROWS 4,096, the selection figure's chunks 6,553 rows): the larger peaks
    within 4 MB of the smaller (the table read a piece at a time into the rows its figures
    draw; measured: 6.0 and 7.2 MB), where reading it whole grew with it (7.0 and 35 MB at
    5 x 10^4 and 4 x 10^5, about 80 bytes a row: some 12 MB more at 2 x 10^5, and the test
    fails there), and the caption says the rows are thinned."""
    from pate_cli.accounting import selection
    from pate_cli.cli.analyze import analyze

    monkeypatch.setattr(figure_data, "FIGURE_ROWS", 1 << 12)
    monkeypatch.setattr(selection, "READ_VALUES", 1 << 16)
    rng = np.random.default_rng(5)
    distinct = rng.multinomial(250, np.full(10, 0.1), size=200).astype(np.int16)
    options = ["--accounting", "expected", "-T", "30", "--sigma-threshold", "10",
               "--sigma", "6"]

    def peak(queries, measure=traced_peak):
        votes = tmp_path / f"votes{queries}.npy"
        np.save(votes, distinct[rng.integers(0, 200, size=queries)])
        summary, table = tmp_path / f"s{queries}.json", tmp_path / f"t{queries}.parquet"
        done = CliRunner().invoke(analyze, [str(votes), *options, "-f", "json", "-o",
                                            str(summary), "--per-query", str(table)])
        assert done.exit_code == 0, done.output
        out = tmp_path / f"from{queries}.md"
        args = ["--from", str(summary), "--per-query", str(table), "-o", str(out)]
        return measure(lambda: CliRunner().invoke(report, args, catch_exceptions=False)), out

    peak(2_000, measure=lambda run: run())  # imports and caches first, untraced
    (small, _), (large, written) = peak(50_000), peak(200_000)
    assert large < small + 4 * 2**20, (small, large)
    caption = (written.parent / "from200000_files" / "history.svg").read_text()
    assert "Drawn from one query in every 49 of the 200,000" in caption
