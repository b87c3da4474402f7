"""Hostile inputs that used to give a number silently wrong (issue "Hostile inputs and
faults"): a first CSV row of quoted numbers taken for a header, text that is not UTF-8
read with replacement characters, fractional round bounds truncated, and results that
depended on the memory layout of the vote file.

Expected values are written out by hand or come from the same votes in another layout.
"""

from __future__ import annotations

import io
import json

import numpy as np
import pytest

import pate_cli
from pate_cli.inputs import load_groups, load_rounds, load_votes
from pate_cli.inputs.table_pieces import read_table
from pate_cli.inputs.tables import SWEEP
from tests.inputs import error_of


@pytest.fixture
def cli(cli):
    """``cli(*args, stdin=b"...")``: pate-analyze in process; ``(code, out, err)``."""
    return cli.analyze


# --- a first row of quoted numbers is data --------------------------------------------------

@pytest.mark.parametrize("text, rows", [
    ('"30","20"\n"25","25"\n', [[30, 20], [25, 25]]),
    ('"30", "20"\n25,25\n', [[30, 20], [25, 25]]),
    ("'x','y'\n30,20\n", [[30, 20]]),  # single quotes are not CSV quoting: a header
    ('"a","b"\n"30","20"\n', [[30, 20]]),
    ('a,b\n30,20\n', [[30, 20]]),
    ('30,20\n25,25\n', [[30, 20], [25, 25]]),
])
def test_a_header_is_a_first_row_with_no_number_once_unquoted(tmp_path, text, rows):
    path = tmp_path / "votes.csv"
    path.write_text(text)
    assert load_votes(path).votes.tolist() == rows


def test_quoted_numbers_in_a_tsv_first_row_are_data(tmp_path):
    path = tmp_path / "votes.tsv"
    path.write_text('"30"\t"20"\n"25"\t"25"\n')
    assert load_votes(path).votes.tolist() == [[30, 20], [25, 25]]


def test_quoted_numbers_on_stdin_keep_the_first_row(cli):
    result = cli("-", "-m", "gnmax", "-f", "json", stdin=b'"30","20"\n"25","25"\n')
    assert result.code == 0, result.err
    assert json.loads(result.out)["input"]["queries"] == 2


# --- UTF-8 with a byte-order mark, and bytes that are not UTF-8 ------------------------------

BOM = b"\xef\xbb\xbf"


@pytest.mark.parametrize("body, rows", [
    (b"30,20\n25,25\n", [[30, 20], [25, 25]]),
    (b'"30","20"\n25,25\n', [[30, 20], [25, 25]]),
    (b"a,b\n30,20\n", [[30, 20]]),
])
def test_utf8_with_a_byte_order_mark_reads_like_utf8(tmp_path, body, rows):
    path = tmp_path / "votes.csv"
    path.write_bytes(BOM + body)
    assert load_votes(path).votes.tolist() == rows


def test_byte_order_mark_on_stdin(cli):
    result = cli("-", "-m", "gnmax", "-f", "json", stdin=BOM + b"30,20\n25,25\n")
    assert result.code == 0, result.err
    assert json.loads(result.out)["input"]["queries"] == 2


def test_byte_order_mark_before_a_groups_header(tmp_path):
    path = tmp_path / "groups.csv"
    path.write_bytes(BOM + b"group,budget\na,1.5\nb,3\n")
    groups = load_groups(path)
    assert groups.names == ("a", "b") and groups.budgets.tolist() == [1.5, 3.0]


@pytest.mark.parametrize("body", ["group,budget\nhigh,1.0,0.34\nlow,3.0,0.66\n",
                                  "group,budget\nhigh,1.0,\nlow,3.0,\n"])
def test_a_groups_row_wider_than_its_header_is_refused(tmp_path, body):
    """A forgotten ``share`` header (or a trailing comma) made pandas take each row's first
    cell as an index: the groups became 1.0 and 3.0 with budgets 0.34 and 0.66, exit 0
    (review R32). Rows as wide as the header, or quoted commas, still read."""
    path = tmp_path / "groups.csv"
    path.write_text(body)
    assert error_of(load_groups, path) == (
        f"{path}: line 2 has 3 fields but the header has 2 (group,budget)")
    path.write_text('group,budget\n"high, with a comma",1.0\nlow,3\n')
    assert load_groups(path).names == ("high, with a comma", "low")
    path.write_text("group,budget,Budget\na,1,2\n")  # (pandas named the second budget.1)
    assert error_of(load_groups, path) == (
        f"{path}: the column 'budget' is named twice in the header")


def test_a_rounds_row_wider_than_its_header_is_refused(tmp_path):
    path = tmp_path / "rounds.csv"
    path.write_text("rows,mechanism\n0:100,confident,\n100:200,gnmax,\n")
    assert "line 2 has 3 fields but the header has 2 (rows,mechanism)" in error_of(
        load_rounds, path)


def test_byte_order_mark_before_a_sweep_table_header(tmp_path):
    path = tmp_path / "sweep.csv"
    path.write_bytes(BOM + b"file,mechanism,epsilon,epsilon_std,repeats\nv.npy,gnmax,1,0,1\n")
    assert list(read_table(path, expected=SWEEP).columns)[0] == "file"


@pytest.mark.parametrize("name", ["votes.csv", "votes.tsv"])
def test_bytes_that_are_not_utf8_are_refused_naming_the_file(tmp_path, name):
    path = tmp_path / name
    path.write_bytes(b"30,20\n2\xe95,25\n")  # Latin-1 e-acute inside a number
    assert error_of(load_votes, path) == (
        f"{path}: is not UTF-8 text (byte 0xe9 on line 2); save it as UTF-8")


def test_utf16_text_is_refused_as_such(tmp_path):
    path = tmp_path / "votes.csv"
    path.write_bytes("30,20\n25,25\n".encode("utf-16"))
    assert error_of(load_votes, path) == f"{path}: is UTF-16 text, not UTF-8 (save it as UTF-8)"


def test_bytes_that_are_not_utf8_on_stdin_exit_2(cli):
    result = cli("-", stdin=b"30,20\n\xff25,25\n")
    assert result.code == 2
    assert result.err.strip() == ("Error: <stdin>: is not UTF-8 text (byte 0xff on line 2); "
                                  "save it as UTF-8")


def test_text_inputs_other_than_votes_refuse_bytes_that_are_not_utf8(tmp_path):
    rounds = tmp_path / "rounds.csv"
    rounds.write_bytes(b"rows,mechanism\n0:10,gnm\xe4x\n")
    assert error_of(load_rounds, rounds) == (
        f"{rounds}: is not UTF-8 text (byte 0xe4 on line 2); save it as UTF-8")
    labels = tmp_path / "labels.csv"
    labels.write_bytes(b"0\n\x811\n")
    votes = tmp_path / "votes.csv"
    votes.write_text("30,20\n25,25\n")
    assert error_of(load_votes, votes, labels=labels) == (
        f"{labels}: is not UTF-8 text (byte 0x81 on line 2); save it as UTF-8")


# --- round bounds are integers ----------------------------------------------------------------

def rounds_file(tmp_path, text, name="rounds.csv"):
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize("rows, bound, value", [
    ("0.5:10", "start", "0.5"), ("1e3:2000", "start", "1e3"), ("0:10.0", "stop", "10.0"),
    ("0:1e1", "stop", "1e1"), ("0x0:10", "start", "0x0"),
])
def test_fractional_or_exponent_round_bounds_are_refused(tmp_path, rows, bound, value):
    path = rounds_file(tmp_path, f"rows,mechanism\n0:5,gnmax\n{rows},gnmax\n")
    assert error_of(load_rounds, path) == (
        f"{path}: round 1: rows {rows!r}: {bound} {value!r} is not an integer row number")


def test_integer_round_bounds_are_read_exactly(tmp_path):
    path = rounds_file(tmp_path, "rows,mechanism\n0:1000,confident\n1000:9000,gnmax\n")
    first, second = load_rounds(path)
    assert list(first["rows"]) == list(range(1000))
    assert second["rows"][0] == 1000 and second["rows"][-1] == 8999
    assert len(second["rows"]) == 8000


@pytest.mark.parametrize("rows, shown", [
    ("[0.5, 1, 2]", "row 0.5 (entry 0)"), ("[0, 1e3]", "row 1000.0 (entry 1)"),
    ("[0, 2.0]", "row 2.0 (entry 1)"), ('[0, "3"]', "row '3' (entry 1)"),
    ("[true]", "row True (entry 0)"),
])
def test_json_row_lists_hold_integers_only(tmp_path, rows, shown):
    path = rounds_file(tmp_path, f'[{{"rows": {rows}, "mechanism": "gnmax"}}]', "r.json")
    assert error_of(load_rounds, path) == (
        f"{path}: round 0: {shown} is not an integer row number")


def test_json_rounds_accept_integer_lists_and_ranges(tmp_path):
    path = rounds_file(tmp_path, '[{"rows": [3, 1, 2], "mechanism": "gnmax"},'
                                 ' {"rows": "1000:1003", "mechanism": "gnmax"}]', "r.json")
    first, second = load_rounds(path)
    assert list(first["rows"]) == [3, 1, 2] and list(second["rows"]) == [1000, 1001, 1002]


def test_json_round_svt_cutoff_is_not_truncated(tmp_path):
    path = rounds_file(tmp_path, '[{"rows": "0:5", "mechanism": "svt", "svt_cutoff": 2.5}]',
                       "r.json")
    assert error_of(load_rounds, path) == f"{path}: round 0: svt_cutoff 2.5 is not an integer"


def test_a_fractional_round_bound_exits_2_on_the_command_line(cli, tmp_path):
    votes = tmp_path / "votes.csv"
    votes.write_text("30,20\n" * 20)
    path = rounds_file(tmp_path, '[{"rows": [0.5, 3], "mechanism": "gnmax"}]', "r.json")
    result = cli(votes, "--rounds", path)
    assert result.code == 2
    assert result.err.strip() == (
        f"Error: {path}: round 0: row 0.5 (entry 0) is not an integer row number")


# --- the same votes give the same bytes, whatever the file layout ----------------------------

def layout_votes(queries: int, classes: int, teachers: int, seed: int) -> np.ndarray:
    """Votes with uneven agreement over many classes (row sums where order matters)."""
    rng = np.random.default_rng(seed)
    shares = rng.dirichlet(np.full(classes, 0.3), size=queries)
    return np.stack([rng.multinomial(teachers, p) for p in shares]).astype(np.int64)


def npy_bytes(array) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


@pytest.fixture(scope="module")
def layouts(tmp_path_factory):
    """``{case: [(name, path or "-", stdin bytes or None), ...]}`` for two vote sets: the
    same votes as C and Fortran .npy, Fortran .npz, .csv, .tsv, and CSV / Fortran NPY
    bytes on standard input."""
    cases = {}
    for case, shape in {"wide": (200, 16, 300, 0), "ten": (300, 10, 250, 1)}.items():
        votes = layout_votes(*shape)
        folder = tmp_path_factory.mktemp(case)
        fortran = np.asfortranarray(votes)
        assert fortran.flags.f_contiguous and not fortran.flags.c_contiguous
        np.save(folder / "c.npy", votes)
        np.save(folder / "f.npy", fortran)
        np.savez(folder / "f.npz", votes=fortran)
        np.savetxt(folder / "v.csv", votes, fmt="%d", delimiter=",")
        np.savetxt(folder / "v.tsv", votes, fmt="%d", delimiter="\t")
        text = (folder / "v.csv").read_bytes()
        cases[case] = [(name, folder / name, None)
                       for name in ("c.npy", "f.npy", "f.npz", "v.csv", "v.tsv")]
        cases[case] += [("stdin csv", "-", text), ("stdin fortran npy", "-", npy_bytes(fortran))]
    return cases


@pytest.mark.parametrize("accounting", ["replay", "expected"])
@pytest.mark.parametrize("case, options", [
    ("wide", ["-m", "gnmax", "--sigma", "13"]),
    ("ten", ["-m", "gnmax", "--sigma", "27.5"]),
    ("wide", ["-m", "confident"]),
    ("ten", ["-m", "confident"]),
])
def test_same_votes_give_identical_bytes_in_every_layout(cli, layouts, tmp_path, case, options,
                                                         accounting):
    outputs = {}
    for name, path, stdin in layouts[case]:
        table = tmp_path / f"{name.replace(' ', '_')}.csv"
        result = cli(path, *options, "--accounting", accounting, "-f", "json",
                     "--per-query", table, stdin=stdin)
        assert result.code == 0, result.err
        summary = json.loads(result.out)
        summary["input"].pop("path")
        summary["input"].pop("sha256")
        outputs[name] = (json.dumps(summary, sort_keys=True), table.read_bytes())
    reference = outputs["c.npy"]
    different = [name for name, output in outputs.items() if output != reference]
    assert different == []


def test_every_layout_is_read_c_contiguous(layouts):
    for name, path, stdin in layouts["wide"]:
        if stdin is None:
            votes = load_votes(path).votes
            assert votes.flags.c_contiguous, name


def test_a_c_order_npy_stays_memory_mapped(layouts):
    votes = load_votes(layouts["wide"][0][1]).votes
    assert isinstance(votes, np.memmap)


def test_an_endless_stream_is_refused_before_it_fills_memory(monkeypatch):
    """``pate-analyze /dev/zero`` held 7 GB after 6 s: NUL bytes alone are refused at the
    head, and any stream past the bytes of the largest array allowed, as it is read."""
    from pate_cli.errors import InputError
    from pate_cli.inputs.readers import read_all
    with pytest.raises(InputError, match="x.csv: holds NUL bytes only, not .npy, .npz, CSV"):
        read_all(io.BytesIO(bytes(1000)), "x.csv")
    monkeypatch.setenv("PATE_MAX_ELEMENTS", "10")
    reads = []

    class Endless(io.RawIOBase):
        def read(self, size=-1):
            reads.append(size)
            return b"1,2\n" * (size // 4)
    with pytest.raises(InputError, match="<stdin>: more than 1,048,656 bytes"):
        read_all(Endless(), "<stdin>")
    assert len(reads) == 1  # one 64 MB piece, then refused
    assert read_all(io.BytesIO(b"1,2\n3,0\n"), "y.csv") == b"1,2\n3,0\n"


def test_standard_input_stands_for_one_input_only(cli):
    """``pate-analyze - --labels -``: the labels found the standard input empty ("no
    input"); they are told it was read for the votes."""
    from tests import SAMPLES
    votes = (SAMPLES / "mnist_250_votes.npy").read_bytes()
    done = cli("-", "--labels", "-", stdin=votes)
    assert done.code == 2 and done.err.count("\n") == 1, done.err
    assert "<stdin>: already read for another input ('-' can stand for one input only)" in done.err
    assert cli("-", stdin=votes).code == 0  # a new standard input: read once again


def test_a_negative_round_start_says_so(tmp_path):
    """'-5:10' was called an empty range."""
    path = rounds_file(tmp_path, "rows,mechanism\n-5:10,gnmax\n")
    assert error_of(load_rounds, path) == (
        f"{path}: round 0: rows '-5:10': start -5 is below 0 (rows are 0-based)")


@pytest.mark.parametrize("cell", ["inf", "-inf", "nan", "NaN", "1e999"])
def test_a_groups_cell_that_is_not_finite_is_refused(tmp_path, cell):
    """An empty cell leaves a parameter to the rules; inf or nan is a mistake, not a blank
    (weight inf was taken as 'derive it')."""
    from pate_cli.errors import InputError
    path = tmp_path / "groups.csv"
    path.write_text(f"group,budget,weight\na,1,\nb,2,{cell}\n")
    with pytest.raises(InputError, match=f"group 'b': weight '{cell}' is not a finite number"):
        load_groups(path)
    path.write_text("group,budget,weight\na,1,\nb,2,\n")
    assert np.isnan(load_groups(path).weight).all()


def test_a_groups_file_in_another_format_is_told_to_be_csv(tmp_path):
    """A Parquet groups file was 'not UTF-8 text (byte 0xf0 on line 2)'."""
    import pandas as pd

    from pate_cli.errors import InputError
    path = tmp_path / "groups.parquet"
    pd.DataFrame({"group": ["a", "b"], "budget": [1.0, 2.0]}).to_parquet(path)
    with pytest.raises(InputError, match="a groups file is CSV text with a header"):
        load_groups(path)


@pytest.mark.parametrize("call, message", [
    (lambda: pate_cli.load_votes(5), "votes: load_votes reads a path"),
    (lambda: pate_cli.analyze(np.ones((20, 3)), teachers=3, individualized="upsampling",
                              groups={"a": 1}), "the groups table: dict is not a table"),
    (lambda: pate_cli.analyze(np.ones((20, 3)), teachers=3, individualized="upsampling",
                              groups=5), "the groups table: int is not a table"),
])
def test_an_api_argument_of_the_wrong_kind_is_named(call, message):
    """A value that is neither a path nor a table: one InputError naming the argument, not
    os's or pandas' own message ("expected str, bytes or os.PathLike object", "If using
    all scalar values, you must pass an index")."""
    with pytest.raises(pate_cli.InputError, match=message):
        call()
