"""A summary and a per-query table from different runs are refused (issue 30 item 4).

``pate-report --from a.json --per-query b.csv`` and ``pate-plot KIND ... --summary`` must
not draw one run's curve under another's figures: exit 2 and one line naming what differs.
The same run's pair passes, also within the rounding of its sums (1e-12 relative, or 2 n 2^-53
for n queries) on the epsilon.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from pate_cli.outputs.run_match import RunTotals
from tests import SAMPLES

VOTES = str(SAMPLES / "mnist_250_votes.npy")


def run_difference(summary: dict, frame: pd.DataFrame) -> str | None:
    """What ``RunTotals`` finds differs, the table counted in whole, and the same found
    with the table counted in pieces (as pate-plot streams it), cut anywhere: in 2, 3 and
    7 pieces, and row by row up to 1,000 rows (a longer table in 1,000 pieces: the
    tolerance's 40,000-row tables took 6 s row by row)."""
    found = RunTotals(summary).add(frame).difference()
    for count in (2, 3, 7, min(len(frame), 1_000)):
        totals = RunTotals(summary)
        for piece in np.array_split(np.arange(len(frame)), count):
            totals.add(frame.iloc[piece])
        assert totals.difference() == found, count
    return found


def _run(cli, tmp_path, name: str, *args) -> tuple[str, str]:
    table, summary = tmp_path / f"{name}.csv", tmp_path / f"{name}.json"
    result = cli.analyze(VOTES, *args, "--per-query", table, "-f", "json", "-o", summary)
    assert result.code == 0, result.err
    return str(table), str(summary)


def _written(folder, name: str, *args) -> tuple[str, str]:
    """``_run`` through the entry point, for a fixture shared by the module's tests."""
    from pate_cli.cli.analyze import main

    table, summary = folder / f"{name}.csv", folder / f"{name}.json"
    with pytest.raises(SystemExit) as done:
        main([VOTES, *args, "--per-query", str(table), "-f", "json", "-o", str(summary)])
    assert done.value.code == 0
    return str(table), str(summary)


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict:
    """Five runs' tables and summaries, written once for the module (the tests only read
    them)."""
    folder = tmp_path_factory.mktemp("runs")
    return {
        "replay": _written(folder, "replay", "-n", "300"),
        "seed": _written(folder, "seed", "-n", "300", "--seed", "5"),
        "expected": _written(folder, "expected", "-n", "300", "--accounting", "expected"),
        "gnmax": _written(folder, "gnmax", "-m", "gnmax", "--sigma", "40", "-n", "200"),
        "groups": _written(folder, "groups", "-n", "400", "--individualized",
                           "upsampling", "--groups", str(SAMPLES / "mnist_250_groups.csv")),
    }


def _refused(result, *words):
    assert result.code == 2, result.err
    lines = result.err.strip().splitlines()
    assert len(lines) == 1, result.err
    assert "not from the same run" in lines[0]
    for word in words:
        assert word in lines[0], lines[0]


@pytest.mark.parametrize(("summary", "table", "words"), [
    ("replay", "seed", ("epsilon_cumulative",)),        # another seed: other decisions
    ("replay", "expected", ("epsilon_cumulative",)),    # another accounting
    ("replay", "gnmax", ("200 rows", "300 queries")),   # another mechanism and length
    ("groups", "replay", ("rows",)),
    ("replay", "groups", ("rows",)),
])
def test_report_refuses_another_runs_table(cli, tmp_path, runs, summary, table, words):
    result = cli.report("--from", runs[summary][1], "--per-query", runs[table][0],
                        "-o", tmp_path / "r.md")
    _refused(result, *words)
    assert not (tmp_path / "r.md").exists()


@pytest.mark.parametrize("name", ["replay", "expected", "gnmax", "groups"])
def test_report_takes_its_own_runs_table(cli, tmp_path, runs, name):
    table, summary = runs[name]
    result = cli.report("--from", summary, "--per-query", table, "-o", tmp_path / "r.md")
    assert result.code == 0, result.err


def test_plots_refuse_another_runs_table(cli, tmp_path, runs):
    out = tmp_path / "h.png"
    _refused(cli.plot("history", runs["seed"][0], "--summary", runs["replay"][1], "-o", out))
    _refused(cli.plot("history", runs["replay"][0], runs["seed"][0], "--summary",
                      runs["replay"][1], "--summary", runs["replay"][1], "-o", out))
    _refused(cli.plot("partition", runs["expected"][0], "--summary", runs["replay"][1],
                      "-o", out))
    # -n keeps the first rows to draw; the whole table is still checked against the run
    _refused(cli.plot("history", runs["seed"][0], "--summary", runs["replay"][1], "-n", "10",
                      "-o", out))
    assert not out.exists()
    other = _run(cli, tmp_path, "other_groups", "-n", "400", "--individualized",
                 "upsampling", "--groups", str(SAMPLES / "mnist_250_groups.csv"),
                 "--sigma", "60")
    _refused(cli.plot("groups", other[0], "--summary", runs["groups"][1], "-o", out),
             "group")
    assert cli.plot("history", runs["replay"][0], runs["seed"][0], "--summary",
                    runs["replay"][1], "--summary", runs["seed"][1], "-o", out).code == 0
    assert cli.plot("groups", runs["groups"][0], "--summary", runs["groups"][1], "-n", "50",
                    "-o", out).code == 0


def test_each_carried_figure_is_compared(runs):
    table, path = runs["replay"]
    summary = json.loads(open(path).read())
    frame = pd.read_csv(table)
    assert run_difference(summary, frame) is None
    close = frame.copy()
    close.loc[close.index[-1], "epsilon_cumulative"] *= 1 + 1e-14  # within the tolerance
    assert run_difference(summary, close) is None
    far = frame.copy()
    far.loc[far.index[-1], "epsilon_cumulative"] *= 1 + 1e-9
    assert "epsilon_cumulative" in run_difference(summary, far)
    moved = frame.copy()
    moved["query"] = moved["query"] + 1
    assert "query column" in run_difference(summary, moved)
    answered = frame.copy()
    answered.loc[0, "answered"] = 1 - answered.loc[0, "answered"]
    assert "answers" in run_difference(summary, answered)
    labels = frame.copy()
    labels.loc[labels["label"].isna().idxmax(), "label"] = 3
    assert "labels" in run_difference(summary, labels)
    assert "rows" in run_difference(summary, frame.iloc[:-1])


def test_groups_compared_at_the_halt_and_at_the_end(runs):
    table, path = runs["groups"]
    summary = json.loads(open(path).read())
    frame = pd.read_csv(table)
    assert run_difference(summary, frame) is None
    group = summary["groups"][0]["group"]
    column = f"epsilon_cumulative_{group}"
    end = frame.copy()
    end.loc[end.index[-1], column] *= 1.001
    assert "epsilon_if_continued" in run_difference(summary, end)
    if summary["stopped_at"]:
        halt = frame.copy()
        halt.loc[summary["stopped_at"] - 1, column] *= 1.001
        assert "'s epsilon " in run_difference(summary, halt)
    assert "individualized" in run_difference(
        summary, frame.drop(columns=[c for c in frame.columns
                                     if c.startswith("epsilon_cumulative_")]))


def test_query_indices_are_distinct_rows_across_pieces():
    """With --query-indices the query column must be distinct rows below the vote file's
    length: one bit per row marks the rows seen, so a repeat in a later piece is found."""
    summary = {"queries": 6, "query_indices": True, "input": {"queries": 20}}
    frame = pd.DataFrame({"query": [5, 0, 19, 7, 3, 12]})
    assert run_difference(summary, frame) is None
    for query in ([5, 0, 19, 7, 3, 5], [5, 0, 20, 7, 3, 12], [5, -1, 19, 7, 3, 12],
                  [5, 0.5, 19, 7, 3, 12]):
        assert "distinct rows" in run_difference(summary, pd.DataFrame({"query": query}))
    unbounded = {**summary, "input": {}}  # no length: the bits grow with the largest row
    assert run_difference(unbounded, frame.assign(query=[5, 0, 90, 7, 3, 1000])) is None
    assert "distinct" in run_difference(unbounded, frame.assign(query=[5, 0, 90, 7, 3, 90]))


def test_the_tolerance_grows_with_the_terms_of_a_running_sum():
    """A table's last cumulative epsilon is a running sum of its rows' curves, the
    summary's the same sum formed from distinct statistics: n terms allow 2 n 2^-53
    relative (a 10^6-query expected run's differed by 5e-12), never less than 1e-12."""
    def summary_and_table(rows: int, relative: float):
        summary = {"queries": rows, "epsilon": 2.0, "epsilon_rdp": 2.0}
        frame = pd.DataFrame({"query": np.arange(rows),
                              "epsilon_cumulative": np.full(rows, 2.0 * (1 + relative))})
        return summary, frame

    assert run_difference(*summary_and_table(10, 5e-13)) is None
    assert "epsilon_cumulative" in run_difference(*summary_and_table(10, 5e-12))
    # 2 x 40,000 x 2^-53 = 8.9e-12: a long table's drift passes, a larger one does not
    assert run_difference(*summary_and_table(40_000, 5e-12)) is None
    assert "epsilon_cumulative" in run_difference(*summary_and_table(40_000, 2e-11))


def test_a_long_run_s_own_pair_passes(cli, tmp_path):
    """200,000 queries: the table's running figure carries its raise for that many terms
    (numerics.summed_margin) beside the summary's table-formed one; their pair was refused
    ('not from the same run': 4.6e-11 apart against a 4.4e-11 tolerance)."""
    votes = tmp_path / "long.npy"  # equal rows: their sums drift one way
    np.save(votes, np.tile(np.array([[8, 2, 0]], np.int16), (200_000, 1)))
    table, summary = tmp_path / "q.csv", tmp_path / "s.json"
    result = cli.analyze(votes, "--accounting", "expected", "--per-query", table, "-f", "json",
                         "-o", summary)
    assert result.code == 0, result.err
    assert run_difference(json.loads(summary.read_text()), pd.read_csv(table)) is None


def test_a_binary_multilabel_run_s_own_pair_passes(cli, tmp_path):
    """A binary multi-label table sums each query's labels' rows: 5,000 queries of 10 labels
    are 50,000 terms, and its pair was refused ('not from the same run': 74.0129254657535
    against 74.01292546503754, 9.7e-12 apart; review R25)."""
    predictions = tmp_path / "p.npy"  # every label an even split: equal curves, one-way drift
    votes = np.zeros((5000, 20, 10), np.int8)
    votes[:, :10, :] = 1
    np.save(predictions, votes)
    table, summary = tmp_path / "q.csv", tmp_path / "s.json"
    result = cli.analyze("--predictions", predictions, "--multilabel", "binary", "-m", "gnmax",
                         "--sigma", "40", "--per-query", table, "-f", "json", "-o", summary)
    assert result.code == 0, result.err
    assert run_difference(json.loads(summary.read_text()), pd.read_csv(table)) is None
