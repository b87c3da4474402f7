"""Long tables as users have them (cli:per-query "Sparse votes"): columns in another order, or
under other names given by ``columns`` (``--columns``), read as the canonical
``query,class,count`` table; the refusals name the columns expected and found."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pate_cli
from pate_cli.errors import InputError, OptionError
from pate_cli.inputs import long_table
from pate_cli.inputs.long_table import ColumnMap, column_map

CLASSES = 7


def long_rows(seed: int = 3, queries: int = 40) -> list[tuple[int, int, int, int]]:
    """``(query, class, count, output)`` of the non-zero counts of 30 teachers' votes."""
    rng = np.random.default_rng(seed)
    votes = rng.multinomial(30, [0.6, 0.2, 0.1, 0.1, 0, 0, 0], size=queries)
    votes = np.take_along_axis(votes, rng.permuted(np.tile(np.arange(CLASSES), (queries, 1)),
                                                   axis=1), axis=1)
    return [(q, c, int(votes[q, c]), q // 4) for q in range(queries) for c in range(CLASSES)
            if votes[q, c]]


def write_table(path, header: list[str], order: list[int], rows, separator=","):
    """A long table whose columns are ``header``, cell ``i`` from position ``order[i]`` of
    each ``(query, class, count, output)`` row."""
    lines = [separator.join(header)]
    lines += [separator.join(str(row[i]) for i in order) for row in rows]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def tables(tmp_path):
    rows = long_rows()
    return {
        "canonical": write_table(tmp_path / "canonical.csv", ["query", "class", "count"],
                                 [0, 1, 2], rows),
        "reordered": write_table(tmp_path / "reordered.csv", ["count", "class", "query"],
                                 [2, 1, 0], rows),
        "named": write_table(tmp_path / "named.csv", ["n", "Token", "position"],
                             [2, 1, 0], rows),
        "named.tsv": write_table(tmp_path / "named.tsv", ["position", "token", "n"],
                                 [0, 1, 2], rows, separator="\t"),
        "with output": write_table(tmp_path / "output.csv",
                                   ["query", "class", "count", "output"], [0, 1, 2, 3], rows),
        "named output": write_table(tmp_path / "named_output.csv",
                                    ["seq", "position", "token", "n"], [3, 0, 1, 2], rows),
    }


NAMES = "query=position,class=token,count=n"


def same_votes(first, second) -> None:
    for name in ("indptr", "indices", "data"):
        np.testing.assert_array_equal(getattr(first.votes, name), getattr(second.votes, name))
    assert first.votes.shape == second.votes.shape and first.teachers == second.teachers


def test_columns_in_another_order_need_no_map(tables):
    same_votes(pate_cli.load_votes(tables["reordered"], classes=CLASSES),
               pate_cli.load_votes(tables["canonical"], classes=CLASSES))


@pytest.mark.parametrize("columns", [NAMES, {"query": "position", "class": "token",
                                             "count": "n"},
                                     " Query = Position , CLASS=token,count=N "])
@pytest.mark.parametrize("table", ["named", "named.tsv"])
def test_columns_under_other_names(tables, columns, table):
    same_votes(pate_cli.load_votes(tables[table], classes=CLASSES, columns=columns),
               pate_cli.load_votes(tables["canonical"], classes=CLASSES))


def test_a_named_output_column_groups_queries(tables):
    named = pate_cli.load_votes(tables["named output"], classes=CLASSES,
                                columns=NAMES + ",output=seq")
    plain = pate_cli.load_votes(tables["with output"], classes=CLASSES)
    same_votes(named, plain)
    np.testing.assert_array_equal(named.outputs, plain.outputs)
    assert named.outputs[:5].tolist() == [0, 0, 0, 0, 1]


def test_analyze_takes_columns_as_classes_flows(tables):
    named = pate_cli.analyze(tables["named"], "gnmax", classes=CLASSES, columns=NAMES)
    plain = pate_cli.analyze(tables["canonical"], "gnmax", classes=CLASSES)
    assert named.epsilon == plain.epsilon and named.answered_total == plain.answered_total


def test_a_parquet_table_under_other_names(tables, tmp_path):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    path = tmp_path / "named.parquet"
    pd.read_csv(tables["named"]).to_parquet(path)
    same_votes(pate_cli.load_votes(path, classes=CLASSES, columns=NAMES),
               pate_cli.load_votes(tables["canonical"], classes=CLASSES))
    with pytest.raises(InputError, match=r"a long table needs columns query,class,count .*; "
                       r"missing query,class,count \(its columns: n,token,position\)$"):
        pate_cli.load_votes(path, classes=CLASSES)


def test_classes_on_unrecognised_columns_names_what_was_expected_and_found(tables):
    with pytest.raises(InputError) as raised:
        pate_cli.load_votes(tables["named"], classes=CLASSES)
    assert str(raised.value) == (
        f"{tables['named']}: --classes K reads a long table with columns query,class,count "
        "(in any order, with an optional output; name others with --columns "
        "query=NAME,class=NAME,count=NAME); its header has n,token,position")
    assert "only applies" not in str(raised.value)


def test_a_map_naming_absent_columns_names_them(tables):
    with pytest.raises(InputError, match=r"--classes K reads a long table with columns "
                       r"position,tok,n \(--columns query=position,class=tok,count=n\); "
                       "its header has n,token,position"):
        pate_cli.load_votes(tables["named"], classes=CLASSES,
                            columns="query=position,class=tok,count=n")
    with pytest.raises(InputError, match=r"columns position,token,n,seq \(--columns "):
        pate_cli.load_votes(tables["named"], classes=CLASSES, columns=NAMES + ",output=seq")


def test_a_wide_header_is_shown_in_part(tmp_path):
    path = tmp_path / "dense.csv"
    path.write_text(",".join(f"c{i}" for i in range(40)) + "\n" + ",".join(["1"] * 40) + "\n")
    with pytest.raises(InputError, match=r"its header has c0,c1,c2,c3,c4,c5,c6,c7,\.\.\. "
                                         r"\(40 columns\)$"):
        pate_cli.load_votes(path, classes=CLASSES)


@pytest.mark.parametrize("columns, message", [
    ("query=a,klass=b", "--columns takes ROLE=NAME pairs"),
    ("query", "--columns takes ROLE=NAME pairs"),
    ("query=", "--columns takes ROLE=NAME pairs"),
    ("query=a,query=b", "--columns names the query column twice"),
    ("query=a,class=A", "--columns gives column 'a' two roles"),
])
def test_bad_maps_are_option_errors(columns, message):
    with pytest.raises(OptionError, match=message):
        column_map(columns)


def test_the_map_reads_back_as_written():
    parsed = column_map("count=n,query=position")
    assert parsed == ColumnMap((("query", "position"), ("count", "n")))
    assert str(parsed) == "query=position,count=n" and column_map(str(parsed)) == parsed
    assert parsed["class"] == "class" and parsed.required == ("position", "class", "n")


def test_columns_only_read_long_tables(tables, tmp_path):
    dense = tmp_path / "votes.npy"
    np.save(dense, np.array([[3, 2], [4, 1]]))
    with pytest.raises(OptionError, match="--columns only applies to long sparse tables"):
        pate_cli.load_votes(dense, columns=NAMES)
    with pytest.raises(OptionError, match="--columns only applies"):
        pate_cli.analyze(np.array([[3, 2], [4, 1]]), columns=NAMES)
    with pytest.raises(OptionError, match="--multilabel does not combine with --columns"):
        pate_cli.analyze(tables["named"], multilabel="binary", columns=NAMES)


def shuffled_within_queries(rows, seed: int):
    """The rows with each query's rows in a random order (the table's order of classes
    is free; queries must ascend)."""
    rng = np.random.default_rng(seed)
    out = []
    for query in sorted({row[0] for row in rows}):
        mine = [row for row in rows if row[0] == query]
        out += [mine[i] for i in rng.permutation(len(mine))]
    return out


@settings(max_examples=25, deadline=None)
@given(batch=st.integers(1, 9), seed=st.integers(0, 50), parquet=st.booleans())
def test_a_table_read_in_batches_gives_the_same_votes(batch, seed, parquet, tmp_path_factory):
    """Batches of any size (a query's rows split across them, in any class order) read
    the same CSR arrays and outputs as the whole table at once."""
    folder = tmp_path_factory.mktemp("batches")
    rows = shuffled_within_queries(long_rows(seed, queries=12), seed)
    path = write_table(folder / "t.csv", ["query", "class", "count", "output"], [0, 1, 2, 3],
                       rows)
    if parquet:
        import pandas as pd
        pd.read_csv(path).to_parquet(folder / "t.parquet")
        path = folder / "t.parquet"
    whole = pate_cli.load_votes(str(path), classes=CLASSES)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(long_table, "BATCH_ROWS", batch)
        batched = pate_cli.load_votes(str(path), classes=CLASSES)
    same_votes(whole, batched)
    np.testing.assert_array_equal(whole.outputs, batched.outputs)
    assert whole.votes.indptr[-1] == len(rows)


@pytest.mark.parametrize("batch", [1, 2, 3, 100])
@pytest.mark.parametrize("lines, message", [
    (["0,1,5,0", "0,2,25,0", "1,3,30,0", "0,1,30,0"],
     "line 5 has query 0 after query 1"),
    (["0,1,5,0", "0,2,25,0", "2,3,30,0"], "query 1 has no rows"),
    (["0,1,5,0", "0,2,20,0", "0,1,5,0"], "query 0, class 1 appears twice"),
    (["0,1,5,0", "0,2,20,0", "0,3,5,1"], "line 4: query 0 has two outputs (0 and 1)"),
    (["0,1,5,0", "0,2,25,0", "1,9,30,1"], "line 4: class 9 is outside the vocabulary"),
    (["0,1,5,0", "0,2,25,0", "1,x,30,1"], "column class holds non-numbers (line 4)"),
])
def test_refusals_name_the_line_whatever_the_batches(batch, lines, message, tmp_path,
                                                     monkeypatch):
    path = tmp_path / "bad.csv"
    path.write_text("\n".join(["query,class,count,output", *lines]) + "\n")
    monkeypatch.setattr(long_table, "BATCH_ROWS", batch)
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        pate_cli.load_votes(str(path), classes=CLASSES)
