"""pate-plot's per-query tables streamed into the rows the figures draw
(outputs.plot_tables, inputs.table_pieces): the running sums are the whole table's, a
table up to FIGURE_ROWS rows gives the figure it gave read whole (the same SVG bytes), a
longer one is drawn from every k-th row with the table's own stopping points and says so,
bad cells are named by their row in the table, and memory does not grow with the rows."""

from __future__ import annotations

import io
import json
import os
import sys
import threading

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from pate_cli.cli.plot import plot
from pate_cli.errors import InputError
from pate_cli.inputs import readers, table_pieces
from pate_cli.inputs.table_pieces import TablePieces, read_table
from pate_cli.inputs.tables import PER_QUERY
from pate_cli.outputs import captions, figure_data, plot_files, report_files
from pate_cli.outputs import figures as plots
from pate_cli.outputs.figure_data import figure_rows, running_sums
from pate_cli.outputs.files import per_query_stream_chunks
from pate_cli.outputs.plot_tables import Drawing, drawn_table
from tests import SAMPLES
from tests.memory import traced_peak

PARTITION = ("answered", "rdp_selection", "rdp_answer")


def _table(rows: int, seed: int = 0, outputs: int = 0) -> pd.DataFrame:
    """A per-query table of a Confident run with two groups (the columns pate-plot reads;
    values drawn at random: what is checked is where they go, not what they mean)."""
    rng = np.random.default_rng(seed)
    answered = rng.random(rows)
    selection = rng.random(rows) * 1e-3
    answer = rng.random(rows) * 1e-2 * answered
    frame = pd.DataFrame({
        "query": np.arange(rows), "answered": answered,
        "label": np.where(answered > 0.5, rng.integers(0, 10, rows), -1),
        "rdp_selection": selection, "rdp_answer": answer,
        "epsilon_cumulative": np.cumsum(selection + answer) * 40,
        "epsilon_cumulative_a": np.cumsum(selection + answer) * 20,
        "epsilon_cumulative_b": np.cumsum(selection + answer) * 60})
    if outputs:
        frame["output"] = np.sort(rng.integers(0, outputs, rows))
    return frame


def _write(frame: pd.DataFrame, path) -> str:
    """``frame`` written as pate-analyze writes its per-query table (CSV, JSON lines,
    parquet), a chunk at a time."""
    with open(path, "wb") as handle:
        for chunk in per_query_stream_chunks([frame], str(path)):
            handle.write(chunk)
    return str(path)


def _cut(frame: pd.DataFrame, cuts) -> list[pd.DataFrame]:
    edges = [0, *sorted({min(cut, len(frame)) for cut in cuts}), len(frame)]
    return [frame.iloc[lo:hi] for lo, hi in zip(edges[:-1], edges[1:], strict=True)]


@settings(max_examples=100, deadline=None)
@given(values=st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=0, max_size=60),
       cuts=st.lists(st.integers(0, 60), max_size=6))
def test_running_sums_are_the_whole_columns_cumsum(values, cuts):
    frame = pd.DataFrame({"answered": values, "rdp_answer": values[::-1]})
    joined = pd.concat(running_sums(_cut(frame, cuts), ("answered", "rdp_answer")),
                       ignore_index=True)
    for column in ("answered", "rdp_answer"):
        whole = np.cumsum(frame[column].to_numpy(dtype=np.float64))
        sums = joined["cumulative_" + column].to_numpy(dtype=np.float64)
        assert np.array_equal(sums.view(np.int64), whole.view(np.int64))  # the same bits
    np.testing.assert_array_equal(joined["position"], np.arange(len(frame)))


@pytest.mark.parametrize("extension", [".csv", ".tsv", ".jsonl", ".parquet"])
@pytest.mark.parametrize("rows, queries", [(1000, None), (1000, 300), (90, None)])
def test_the_drawn_rows_are_the_whole_tables(tmp_path, monkeypatch, extension, rows,
                                             queries):
    """Against the table read whole (read_table), its sums np.cumsum of whole columns:
    the rows figure_rows keeps of it, with the same floats, every k-th when longer than
    FIGURE_ROWS (here 128), the whole table when not."""
    monkeypatch.setattr(figure_data, "FIGURE_ROWS", 128)
    frame = _table(rows, seed=rows)
    if extension == ".tsv":
        frame.to_csv(tmp_path / "t.tsv", sep="\t", index=False)
        path = str(tmp_path / "t.tsv")
    else:
        path = _write(frame, tmp_path / f"t{extension}")
    budgets = (float(frame["epsilon_cumulative"].iloc[rows // 3]),)
    drawn = drawn_table(path, Drawing(("query", *PARTITION, "epsilon_cumulative"),
                                      sums=PARTITION, queries=queries, budgets=budgets))
    whole = read_table(path, expected=PER_QUERY).iloc[:queries]
    whole = whole[["query", "answered", "rdp_selection", "rdp_answer", "epsilon_cumulative"]]
    whole = whole.assign(**{f"cumulative_{c}": np.cumsum(whole[c].to_numpy()) for c in PARTITION},
                         position=np.arange(len(whole), dtype=np.float64))
    expected = figure_rows([whole], queries=len(whole), budgets=budgets, limit=128)
    pd.testing.assert_frame_equal(drawn[expected.columns], expected)
    shown = len(whole)
    assert drawn.attrs["every"] == -(-shown // 128) and drawn.attrs["queries"] == shown
    assert drawn.attrs["answered"] == pytest.approx(whole["answered"].sum(), rel=1e-12)
    if shown <= 128:  # drawn whole: the table's own rows
        pd.testing.assert_frame_equal(drawn[whole.columns], whole.reset_index(drop=True))
    else:
        assert len(drawn) <= -(-shown // drawn.attrs["every"]) + 2


def _svg(figure) -> bytes:
    return plots.figure_bytes(figure, "svg")


def _history_read_whole(paths, *, x, budget, queries):
    """pate-plot history as it drew before streaming: each table read whole."""
    frames = [read_table(path, expected=PER_QUERY).iloc[:queries] for path in paths]
    names = [os.path.basename(path) for path in paths]
    return plots.history_figure(list(zip(names, frames, strict=True)), delta=1e-5, x=x,
                                budget=budget, style=plots.Style(),
                                caption=captions.runs_caption(names, frames, [None] * 2))


@pytest.mark.parametrize("x, budget, queries", [("query", 2.0, None), ("answered", None, 700),
                                                ("output", 3.0, None)])
def test_a_table_up_to_figure_rows_gives_the_same_svg(tmp_path, x, budget, queries):
    paths = [_write(_table(900, seed=1, outputs=40), tmp_path / "a.csv"),
             _write(_table(600, seed=2, outputs=30).sample(frac=1, random_state=3)
                    .reset_index(drop=True), tmp_path / "b.parquet")]  # asked in any order
    figure = plot_files.plot_history(paths, labels=(), summary_paths=(), x=x, budget=budget,
                                     queries=queries, style=plots.Style(), delta=None)
    assert _svg(figure) == _svg(_history_read_whole(paths, x=x, budget=budget,
                                                    queries=queries))


def test_partition_and_groups_up_to_figure_rows_give_the_same_svg(tmp_path):
    path = _write(_table(800, seed=4), tmp_path / "t.jsonl")
    frame = read_table(path, expected=PER_QUERY).iloc[:500]
    caption = captions.runs_caption(["t.jsonl"], [frame], [None]) + (
        " Selection/answer split in proportion to cumulative RDP at the final order.")
    before = plots.partition_figure([("t.jsonl", frame)], delta=1e-5, caption=caption)
    after = plot_files.plot_partition([path], labels=(), summary_paths=(), queries=500,
                                      style=plots.Style(), delta=None)
    assert _svg(after) == _svg(before)
    groups = tmp_path / "groups.csv"
    groups.write_text("group,budget,share\na,1.5,0.5\nb,4,0.5\n")
    caption = (f"500 queries; epsilon: {captions.figure_note(None, 'figures')}; budgets: a "
               "1.5, b 4")
    before = plots.groups_figure(frame, budgets={"a": 1.5, "b": 4.0}, delta=1e-5,
                                 x="answered", caption=caption)
    after = plot_files.plot_groups(path, groups_path=str(groups), summary_path=None,
                                   x="answered", baseline=True, queries=500,
                                   style=plots.Style(), delta=None)
    assert _svg(after) == _svg(before)


def _line(figure, gid: str):
    (line,) = [line for line in figure.axes[0].lines if line.get_gid() == gid]
    return line.get_xdata(), line.get_ydata()


def _caption(figure) -> str:
    (text,) = [t.get_text() for t in figure.texts if t.get_gid() == "caption"]
    return text.replace("\n", " ")


def test_a_longer_table_is_drawn_from_every_kth_row(tmp_path, monkeypatch):
    """10,000 rows, FIGURE_ROWS 1,000: one row in 10 drawn, and the caption says so; the
    stopping points are the whole table's first rows over the budgets, the caption's
    counts the whole table's, the partition's x and split its cumulative sums."""
    monkeypatch.setattr(figure_data, "FIGURE_ROWS", 1000)
    table = _table(10_000, seed=5)
    path = _write(table, tmp_path / "long.csv")
    budget = float(table["epsilon_cumulative"].iloc[4321]) - 1e-12
    figure = plot_files.plot_history([path], labels=(), summary_paths=(), x="answered",
                                     budget=budget, queries=None, style=plots.Style(),
                                     delta=None)
    stop = int(np.flatnonzero(table["epsilon_cumulative"].to_numpy() > budget)[0])
    assert stop == 4321
    answered = np.cumsum(table["answered"].to_numpy())
    xs, ys = _line(figure, "stop-0")
    assert (xs[0], ys[0]) == (answered[stop], table["epsilon_cumulative"].iloc[stop])
    assert "over budget at query 4321" in figure.axes[0].get_legend().texts[0].get_text()
    text = _caption(figure)
    assert "10,000 queries" in text and "drawn from one query in every 10," in text
    assert f"{table['answered'].sum():,.1f} answered" in text
    xs, ys = _line(figure, "history-0")
    rows = np.union1d(np.r_[np.arange(0, 10_000, 10), 9999], [stop])  # the last, the stop
    np.testing.assert_array_equal(xs, answered[rows])
    np.testing.assert_array_equal(ys, table["epsilon_cumulative"].to_numpy()[rows])

    figure = plot_files.plot_partition([path], labels=(), summary_paths=(), queries=None,
                                       style=plots.Style(), delta=None)
    whole = plots.partition_figure([("long.csv", table)], delta=1e-5)
    full_x, full_y = _line(whole, "total-0")
    xs, ys = _line(figure, "total-0")
    rows = np.r_[np.arange(0, 10_000, 10), 9999]
    np.testing.assert_array_equal(xs, full_x[rows])
    np.testing.assert_array_equal(ys, full_y[rows])
    split = whole.axes[0].collections[0].get_paths()[0].vertices  # the selection area
    drawn = figure.axes[0].collections[0].get_paths()[0].vertices
    assert set(map(tuple, drawn)) <= set(map(tuple, split))

    groups = tmp_path / "groups.csv"
    groups.write_text("group,budget,share\na,1.5,0.5\nb,4,0.5\n")
    figure = plot_files.plot_groups(path, groups_path=str(groups), summary_path=None,
                                    x="query", baseline=True, queries=None,
                                    style=plots.Style(), delta=None)
    for name, budget in (("a", 1.5), ("b", 4.0)):
        first = np.flatnonzero(table[f"epsilon_cumulative_{name}"].to_numpy() > budget)[0]
        assert _line(figure, f"exhausted-{name}")[0][0] == first
    assert "10,000 queries (drawn from one query in every 10," in _caption(figure)


@pytest.mark.parametrize("cell, words", [("x", "has 'x', not a number"), ("", "is empty")])
def test_a_bad_cell_in_a_later_piece_is_named_by_its_row(tmp_path, monkeypatch, cli, cell,
                                                         words):
    monkeypatch.setattr(figure_data, "FIGURE_ROWS", 100)
    table = _table(1000, seed=6).astype({"answered": object, "epsilon_cumulative": object})
    table.loc[345, "answered"] = cell
    table.loc[150, "epsilon_cumulative"] = "y"  # a later column, an earlier row
    path = tmp_path / "bad.csv"
    table.to_csv(path, index=False)
    out = tmp_path / "h.png"
    code, _, text = cli.plot("history", path, "-o", out)
    assert code == 2 and f"bad.csv: row 345: column 'answered' {words}" in text, text
    assert text.count("\n") == 1 and not out.exists()
    code, _, text = cli.plot("history", path, "-n", "140", "-o", out)  # the first rows
    assert code == 0, text


def test_the_summary_is_checked_over_the_whole_table(tmp_path, monkeypatch, cli):
    """-n draws the first rows; the whole table is compared with the summary, piece by
    piece: a table cut short, or changed in its last piece, is not the summary's run."""
    monkeypatch.setattr(figure_data, "FIGURE_ROWS", 64)
    table, summary = tmp_path / "run.csv", tmp_path / "run.json"
    done = cli.analyze(SAMPLES / "mnist_250_votes.npy", "-n", "500", "--per-query", table,
                       "-f", "json", "-o", summary)
    assert done.code == 0, done.err
    out = tmp_path / "h.png"
    assert cli.plot("history", table, "--summary", summary, "-n", "100", "-o", out).code == 0
    frame = pd.read_csv(table)
    changed = frame.copy()
    changed.loc[499, "epsilon_cumulative"] *= 1 + 1e-9
    changed.to_csv(tmp_path / "changed.csv", index=False)
    frame.iloc[:450].to_csv(tmp_path / "short.csv", index=False)
    for name, words in (("changed", "last epsilon_cumulative"), ("short", "450 rows")):
        code, _, text = cli.plot("partition", tmp_path / f"{name}.csv", "--summary",
                                 summary, "-n", "100", "-o", out)
        assert code == 2 and "not from the same run" in text and words in text, text


def test_a_table_read_from_a_fifo(tmp_path, monkeypatch):
    """A FIFO is read once (held whole, as read_table holds it)."""
    monkeypatch.setattr(figure_data, "FIGURE_ROWS", 64)
    data = open(_write(_table(300, seed=7), tmp_path / "t.csv"), "rb").read()
    fifo = tmp_path / "fifo.csv"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_bytes(data))
    writer.start()
    frame = drawn_table(str(fifo), Drawing(("query", "answered", "epsilon_cumulative")))
    writer.join()
    assert frame.attrs["queries"] == 300 and frame.attrs["every"] == 5


@pytest.mark.parametrize("extension", [".csv", ".jsonl", ".parquet"])
def test_a_table_from_a_pipe_without_its_extension(tmp_path, monkeypatch, extension):
    """A table on standard input (``-``) or from a FIFO with no table extension (as
    ``<(command)`` gives, ``/dev/fd/63``) is told by its bytes (parquet's magic, JSON
    lines' brace, else CSV) and read as the file is; an empty one is refused in a line."""
    pytest.importorskip("pyarrow")
    table = _write(_table(300, seed=7), tmp_path / f"t{extension}")
    data = open(table, "rb").read()
    expected = read_table(table, expected=PER_QUERY)
    fifo = tmp_path / "fd63"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_bytes(data))
    writer.start()
    pieces = TablePieces(str(fifo), expected=PER_QUERY)
    writer.join()
    assert pieces.extension == extension
    assert pieces.count_rows() == 300
    pd.testing.assert_frame_equal(pd.concat(list(pieces.pieces(64)), ignore_index=True),
                                  expected)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    monkeypatch.setattr(readers, "_STDIN_READ", readers.weakref.WeakSet())
    pd.testing.assert_frame_equal(read_table("-", expected=PER_QUERY), expected)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b" \n")))
    with pytest.raises(InputError, match="-: the file is empty"):
        read_table("-", expected=PER_QUERY)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"\x93NUMPY\x01\x00")))
    with pytest.raises(InputError, match="-: is binary .npy data, not a table"):
        read_table("-", expected=PER_QUERY)


@settings(max_examples=60, deadline=None)
@given(lines=st.lists(st.sampled_from(["1,2", "3,4", ""]), max_size=12),
       ending=st.sampled_from(["\n", "\r\n"]), last=st.booleans(),
       block=st.integers(1, 8))
def test_rows_counted_as_pandas_reads_them(tmp_path_factory, lines, ending, last, block):
    """The row count (blank lines skipped, CRLF or LF) is the number of rows pandas reads,
    whatever the blocks it is counted in; a last row without its line end (a file cut off)
    is refused (review R14)."""
    path = tmp_path_factory.mktemp("count") / "t.csv"
    path.write_bytes((ending.join(["a,b", *lines]) + (ending if last else "")).encode())
    pieces = TablePieces(str(path), expected=PER_QUERY)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(table_pieces, "_BLOCK", block)
        counted = pieces.count_rows()
    if not last and any(lines) and lines[-1]:
        with pytest.raises(InputError, match="the last row has no line end"):
            list(pieces.pieces(2))
        return
    assert counted == sum(map(len, pieces.pieces(2))) == sum(1 for line in lines if line)


@pytest.mark.parametrize("cut, message", [
    (2, "the last row has no line end"),  # its last cell "8" gone, the comma kept
    (5, "the last row has 11 of the 12 columns"),
])
def test_a_table_cut_off_is_refused(tmp_path, cut, message):
    """A per-query table whose end was cut off (an interrupted copy): one line, never its
    last cells read shortened or missing (review R14 P1)."""
    rows = ["query,plurality,plurality_class,answered,label,log_q,log_pr_answered,"
            "rdp_selection,rdp_answer,epsilon,epsilon_cumulative,order_cumulative",
            *(f"{q},200,3,1,3,-5.5,-0.1,0.01,0.02,0.5,{0.1 * (q + 1):.4f},8" for q in range(3))]
    path = tmp_path / "cut.csv"
    path.write_text("\n".join(rows) + "\n")
    whole = read_table(path, expected=PER_QUERY)
    assert whole["epsilon_cumulative"].iloc[-1] == 0.3
    path.write_bytes(path.read_bytes()[:-cut])
    with pytest.raises(InputError, match=message):
        read_table(path, expected=PER_QUERY)


def test_memory_does_not_grow_with_the_table(tmp_path, monkeypatch):
    """pate-plot history (CSV), partition and groups (parquet) over per-query tables of
    2.5 x 10^4 and 10^5 rows (FIGURE_ROWS 16,384): each peaks within 4 MB on the larger
    of the smaller (measured: 5, 3 and 2.5 MB traced at both sizes; read whole, as before
    this module, 33 -> 133 MB, 9 -> 35 MB and 6 -> 23 MB from 5 x 10^4 to 2 x 10^5 rows,
    about 670, 170 and 110 bytes a row: 50, 13 and 8 MB more at 10^5 than at 2.5 x 10^4,
    and the test fails there)."""
    monkeypatch.setattr(figure_data, "FIGURE_ROWS", 1 << 14)
    groups = tmp_path / "groups.csv"
    groups.write_text("group,budget,share\na,100,0.5\nb,300,0.5\n")

    def peaks(rows, measure=traced_peak) -> list[int]:
        frame = _table(rows, seed=8)
        csv = _write(frame, tmp_path / f"t{rows}.csv")
        parquet = _write(frame, tmp_path / f"t{rows}.parquet")
        small = ["--width", "3", "--height", "2", "--dpi", "40", "-o",
                 str(tmp_path / f"f{rows}.png")]
        found = []
        for args in (["history", csv, "--budget", "200"], ["partition", parquet],
                     ["groups", parquet, "--groups", str(groups)]):
            found.append(measure(lambda args=args: CliRunner().invoke(
                plot, [*args, *small], catch_exceptions=False)))
        return found

    peaks(1_000, measure=lambda run: run())  # imports and caches first, untraced
    for small, large in zip(peaks(25_000), peaks(100_000), strict=True):
        assert large < small + 4 * 2**20, (small, large)


def test_an_empty_table_is_refused_unless_allowed(tmp_path):
    """A table of no rows is refused; with ``allow_empty`` (pate-plot history, partition and
    groups, the report) it is drawn empty when its run's summary says no query was
    processed (a run halted before its first), refused without a summary (pate-plot
    history drew an empty figure of a table of a header alone, exit 0)."""
    path = _write(_table(0).drop(columns=["epsilon_cumulative_a", "epsilon_cumulative_b"]),
                  tmp_path / "empty.csv")
    columns = ("query", "answered", "epsilon_cumulative")
    with pytest.raises(InputError, match="the table has no rows"):
        drawn_table(path, Drawing(columns))
    with pytest.raises(InputError, match="the table has no rows .*drawn with its --summary"):
        drawn_table(path, Drawing(columns, allow_empty=True))
    halted = {"queries": 0, "answered": 0, "epsilon": 0.0}
    frame = drawn_table(path, Drawing(columns, allow_empty=True), summary=halted,
                        summary_path="s.json", index=(index := []))
    assert len(frame) == 0 and frame.attrs["queries"] == 0
    assert np.concatenate(index).size == 0


def test_the_report_of_a_query_indices_run_draws_table_positions(tmp_path, monkeypatch):
    """pate-report --from over a ``--query-indices`` run (not in increasing order) whose
    table is drawn from every k-th row: the x axis is each drawn row's place in the table,
    as pate-plot draws it (up to the last query, 599), the votes are the analysed rows in
    the analysed order (the table's whole query column), and the table's query column is
    the given indices."""
    from pate_cli.cli.analyze import analyze

    indices = np.random.default_rng(9).permutation(3000)[:600]
    (tmp_path / "idx.txt").write_text("\n".join(map(str, indices)) + "\n")
    summary, table = tmp_path / "run.json", tmp_path / "q.csv"
    done = CliRunner().invoke(analyze, [
        str(SAMPLES / "mnist_250_votes.npy"), "--query-indices", str(tmp_path / "idx.txt"),
        "-f", "json", "-o", str(summary), "--per-query", str(table)])
    assert done.exit_code == 0, done.output
    monkeypatch.setattr(figure_data, "FIGURE_ROWS", 50)
    _, frame, rows = report_files.read_run(str(summary), str(table))
    assert frame.attrs["every"] == 12 and frame.attrs["query_increasing"] is False
    xs, label = plots.history_x(frame, "query")
    assert label == "query position (order asked)"
    np.testing.assert_array_equal(xs, frame["position"].to_numpy())
    assert xs[-1] == 599 and np.all(np.diff(xs) > 0)
    np.testing.assert_array_equal(frame["query"].to_numpy(), indices[xs.astype(int)])
    votes = np.load(SAMPLES / "mnist_250_votes.npy")
    np.testing.assert_array_equal(rows, votes[indices])
    plotted = drawn_table(str(table), Drawing(("query", "answered", "epsilon_cumulative")))
    np.testing.assert_array_equal(plotted["position"].to_numpy(), xs)


def test_a_sweep_caption_says_when_its_epsilon_is_unsanitised():
    """A trade-off figure of replay or expected rows draws data-dependent epsilons: its
    caption says they are not for publication; data-independent rows need no such note."""
    from pate_cli.outputs.captions import sweep_caption

    rows = pd.DataFrame({"queries": [300, 300], "sigma": [20.0, 40.0],
                         "accounting": ["data-independent", "replay"]})
    assert sweep_caption(rows).endswith(
        "sweep rows, queries 300, sigma 20-40; epsilon of replay or expected accounting: "
        "data-dependent, unsanitised: not for publication (sweep with --accounting "
        "data-independent for a publishable figure)") and sweep_caption(rows).startswith("2")
    assert "not for publication" not in sweep_caption(rows.iloc[:1])


@pytest.mark.parametrize("name", ["q.json", "q.jsonl", "q.csv"])
def test_a_table_of_blank_lines_is_an_empty_file_whole_or_in_pieces(tmp_path, name):
    """One reader for both (read_table joins the pieces): JSON lines of blank lines, "the
    file is empty" read whole, were an empty table read in pieces."""
    path = tmp_path / name
    path.write_text(" \n\n  \n")
    for read in (lambda: read_table(path, expected=PER_QUERY, allow_empty=True),
                 lambda: list(TablePieces(str(path), expected=PER_QUERY).pieces())):
        with pytest.raises(InputError, match=f"{name}: the file is empty"):
            read()


def test_history_marks_where_a_budget_halted_the_run(tmp_path, cli):
    """A run its budget halted ends within the budget, so no crossing was marked: the
    figure showed the budget line and a curve that stopped, unmarked (review R33). Its last
    query is marked, the legend saying the halt."""
    votes, table, summary = (str(SAMPLES / "mnist_250_votes.npy"), tmp_path / "q.csv",
                             tmp_path / "s.json")
    done = cli.analyze(votes, "-n", "400", "--budget", "1", "--per-query", table, "-f", "json",
                       "-o", summary)
    assert done.code == 0, done.err
    halted = json.load(open(summary))["budget"]["halted_at"]
    assert halted is not None
    frame = pd.read_csv(table)
    figure = plot_files.plot_history([str(table)], labels=(), summary_paths=(str(summary),),
                                     x="query", budget=1.0, queries=None, style=plots.Style(),
                                     delta=None)
    xs, ys = _line(figure, "stop-0")
    assert (xs[0], ys[0]) == (frame["query"].iloc[-1], frame["epsilon_cumulative"].iloc[-1])
    assert ys[0] <= 1.0
    assert (f"halted by its budget before query {halted}"
            in figure.axes[0].get_legend().texts[0].get_text())
    plain = plot_files.plot_history([str(table)], labels=(), summary_paths=(), x="query",
                                    budget=1.0, queries=None, style=plots.Style(), delta=None)
    assert not [line for line in plain.axes[0].lines if line.get_gid() == "stop-0"]
