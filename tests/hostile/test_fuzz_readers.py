"""Fuzzing the readers themselves: votes, decisions, groups and teacher groups.

Random bytes, random CSV-like text, long tables (``query,class,count`` with ``classes``)
with random cells, and NPY/NPZ files with random headers or compression methods are written to
temporary files and read by the package's readers (``load_votes``, ``load_decisions``,
``load_groups``, ``load_teacher_groups``). Reading either succeeds or raises the package's
``InputError`` with a one-line message; any other exception, a message over several
lines, or a read that takes longer than ``HANG_SECONDS`` fails the test.

The budget is fixed (``max_examples`` per test, ``derandomize=True``), so ``make test``
and CI run the same examples every time. (``tests/hostile/test_inputs.py`` fuzzes the
command on standard input; this file fuzzes the readers on files.)
"""

from __future__ import annotations

import contextlib
import io
import signal
import threading
import zipfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pate_cli.errors import InputError
from pate_cli.inputs import (
    PrivacyGroups,
    load_decisions,
    load_groups,
    load_teacher_groups,
    load_votes,
)
from tests.hostile import with_method

FUZZ = settings(max_examples=200, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])
HANG_SECONDS = 30  # a read takes milliseconds on quiet cores: thousands of times that


@contextlib.contextmanager
def bounded_time(seconds: int = HANG_SECONDS):
    """Fail (not hang) when the block runs longer than ``seconds`` (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum, frame):
        raise AssertionError(f"a reader ran for more than {seconds} s (a hang)")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def read_or_refuse(read, path) -> None:
    """``read(path)`` succeeds or raises a one-line ``InputError``; nothing else."""
    with bounded_time():
        try:
            read(path)
        except InputError as error:
            message = str(error)
            assert message.strip(), "an empty message"
            assert "\n" not in message.strip(), message
        # any other exception propagates and fails the test


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz")


def write(folder, name: str, data: bytes):
    path = folder / name
    path.write_bytes(data)
    return path


# --- what the strategies draw ----------------------------------------------------------------

CELLS = st.sampled_from(["0", "1", "2", "30", "-1", "1.5", "1e308", "1e-320", "nan", "inf",
                         "", " ", "a", "\"3\"", "0x1", "+4", "1_0", "١", "NaN", "-0"])
SEPARATORS = st.sampled_from([",", "\t", ";", ", ", ",,"])


@st.composite
def csv_text(draw, header=None) -> bytes:
    """Rows of CSV-like cells (sometimes ragged), with an optional header line."""
    separator = draw(SEPARATORS)
    width = draw(st.integers(1, 4))
    rows = draw(st.lists(st.lists(CELLS, min_size=max(1, width - 1), max_size=width + 1),
                         max_size=6))
    lines = [separator.join(row) for row in rows]
    if header is not None and draw(st.booleans()):
        lines.insert(0, header)
    ending = draw(st.sampled_from(["\n", "\r\n", ""]))
    return ending.join(lines).encode() + draw(st.sampled_from([b"", b"\n", b"\xff", b"\x00"]))


DESCRS = st.sampled_from(["<f8", "<i4", "|u1", "<f4", "|b1", "<c16", "|O", "<U3", "|V8",
                          "<M8[s]", "[('a', '<f8')]", ">f8", "<f2", "x", "<i8"])
SHAPES = st.one_of(
    st.tuples(st.integers(-2, 6), st.integers(-2, 6)).map(repr),
    st.tuples(st.integers(0, 6)).map(repr),
    st.tuples(st.integers(0, 3), st.integers(0, 3), st.integers(0, 3)).map(repr),
    st.sampled_from(["()", "(10**12, 10**12)", "(2**62, 4)", "[2, 2]", "(2.0, 2)",
                     "(True, 2)", "'x'", "(2, 2"]))


@st.composite
def npy_bytes(draw) -> bytes:
    """An NPY header with a random dtype, shape and order, then some bytes of data."""
    descr = draw(DESCRS)
    descr_text = descr if descr.startswith("[") else repr(descr)
    fortran = draw(st.sampled_from(["False", "True", "0", "'no'"]))
    header = (f"{{'descr': {descr_text}, 'fortran_order': {fortran}, "
              f"'shape': {draw(SHAPES)}, }}")
    if draw(st.integers(0, 9)) == 0:
        header = header.replace("'descr'", "'dtype'")
    encoded = header.encode()
    encoded += b" " * (-(len(encoded) + 11) % 64) + b"\n"
    version = draw(st.sampled_from([b"\x01\x00", b"\x02\x00", b"\x03\x00", b"\x09\x00"]))
    size = len(encoded).to_bytes(2 if version[0] == 1 else 4, "little")
    if draw(st.integers(0, 9)) == 0:
        size = b"\xff\xff" if version[0] == 1 else b"\xff\xff\xff\x7f"
    data = draw(st.binary(max_size=200))
    return b"\x93NUMPY" + version + size + encoded + data


def npz_bytes(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


# --- votes -----------------------------------------------------------------------------------

@FUZZ
@given(data=st.binary(max_size=400),
       extension=st.sampled_from([".npy", ".npz", ".csv", ".tsv"]))
def test_votes_from_random_bytes(folder, data, extension):
    read_or_refuse(load_votes, write(folder, "votes" + extension, data))


@FUZZ
@given(text=csv_text(header="a,b,c"), extension=st.sampled_from([".csv", ".tsv"]),
       teachers=st.sampled_from([None, 1, 60, 1e-300]))
def test_votes_from_random_csv_text(folder, text, extension, teachers):
    read_or_refuse(lambda path: load_votes(path, teachers=teachers),
                   write(folder, "votes" + extension, text))


@FUZZ
@given(data=npy_bytes(), packed=st.booleans())
def test_votes_from_random_npy_headers(folder, data, packed):
    if packed:
        read_or_refuse(load_votes, write(folder, "votes.npz",
                                         npz_bytes({"votes.npy": data, "labels.npy": data})))
    else:
        read_or_refuse(load_votes, write(folder, "votes.npy", data))


# Ids at and beyond int64's ends, fractions, text: a long table's query, class and output cells.
ID_CELLS = st.sampled_from(["0", "1", "2", "4", "5", "-1", "1.5", "1e300", "nan", "inf", "", "a",
                            "9223372036854775807", "9223372036854775808",
                            "10000000000000000000", "99999999999999999999",
                            "-99999999999999999999"])


@st.composite
def long_table_text(draw) -> bytes:
    """A long table: its header (sometimes with ``output``, sometimes alone), rows of
    random id and count cells."""
    columns = draw(st.sampled_from([3, 4]))
    header = ",".join(["query", "class", "count", "output"][:columns])
    rows = draw(st.lists(st.tuples(ID_CELLS, ID_CELLS, CELLS, ID_CELLS), max_size=5))
    lines = [header] + [",".join(row[:columns]) for row in rows]
    return ("\n".join(lines) + draw(st.sampled_from(["", "\n"]))).encode()


@FUZZ
@given(text=long_table_text(), extension=st.sampled_from([".csv", ".tsv"]))
def test_long_tables_from_random_cells(folder, text, extension):
    if extension == ".tsv":
        text = text.replace(b",", b"\t")
    read_or_refuse(lambda path: load_votes(path, classes=5),
                   write(folder, "long" + extension, text))


def archive_bytes(kind: str) -> bytes:
    """Votes as numpy's compressed ``.npz`` (with labels), or as scipy's sparse one."""
    import scipy.sparse

    votes = np.array([[3, 2], [4, 1], [5, 0]])
    buffer = io.BytesIO()
    if kind == "dense":
        np.savez_compressed(buffer, votes=votes, labels=np.array([0, 1, 0]))
    else:
        scipy.sparse.save_npz(buffer, scipy.sparse.csr_matrix(votes),
                              compressed=kind == "sparse compressed")
    return buffer.getvalue()


@FUZZ
@given(kind=st.sampled_from(["dense", "sparse", "sparse compressed"]),
       member=st.sampled_from([None, 0, 1, 2, 3]),
       method=st.sampled_from([0, 1, 6, 8, 9, 10, 12, 14, 18, 19, 95, 96, 97, 98, 99, 65535]))
def test_archives_with_any_compression_method(folder, kind, member, method):
    """A member's compression method changed to one zipfile reads (then its bytes are wrong)
    or cannot read (Deflate64, PPMd...): read or refused in one line."""
    archive = with_method(archive_bytes(kind), method, member=member)
    read_or_refuse(load_votes, write(folder, "votes.npz", archive))


# --- decisions -------------------------------------------------------------------------------

OUTCOMES = st.sampled_from(["answered", "refused", "student", "stable", "x", "", "1"])


@st.composite
def decision_csv(draw) -> bytes:
    lines = draw(st.sampled_from([[], ["# mechanism: gnmax"], ["#"], ["# mechanism"]]))
    lines.append(draw(st.sampled_from(["query,outcome,label", "query,label", "q,o,l", ""])))
    for _ in range(draw(st.integers(0, 5))):
        cells = [draw(CELLS), draw(OUTCOMES), draw(CELLS)][: draw(st.integers(1, 4))]
        lines.append(",".join(cells))
    return "\n".join(lines).encode()


JSON_VALUES = st.sampled_from(['0', '1', '-1', '1.5', 'null', 'true', '"a"', '[]', '{}',
                               '1e400', '99999999999999999999999'])


@st.composite
def decision_jsonl(draw) -> bytes:
    lines = []
    if draw(st.booleans()):
        lines.append('{"mechanism": "gnmax"}')
    for _ in range(draw(st.integers(0, 5))):
        keys = draw(st.lists(st.sampled_from(["query", "outcome", "label", "x"]), max_size=3,
                             unique=True))
        pairs = [f'"{key}": {draw(JSON_VALUES)}' for key in keys]
        lines.append(draw(st.sampled_from(["{%s}", "[%s]", "%s", "{%s"])) % ", ".join(pairs))
    return "\n".join(lines).encode()


@FUZZ
@given(data=st.binary(max_size=300),
       extension=st.sampled_from([".csv", ".jsonl", ".npy", ".npz"]))
def test_decisions_from_random_bytes(folder, data, extension):
    read_or_refuse(load_decisions, write(folder, "decisions" + extension, data))


@FUZZ
@given(csv=decision_csv(), jsonl=decision_jsonl())
def test_decisions_from_random_text(folder, csv, jsonl):
    read_or_refuse(load_decisions, write(folder, "decisions.csv", csv))
    read_or_refuse(load_decisions, write(folder, "decisions.jsonl", jsonl))


@FUZZ
@given(data=npy_bytes(), members=st.sets(st.sampled_from(["query", "outcome", "label",
                                                          "mechanism"])))
def test_decisions_from_random_npy_headers(folder, data, members):
    read_or_refuse(load_decisions, write(folder, "decisions.npy", data))
    archive = npz_bytes({f"{member}.npy": data for member in members})
    read_or_refuse(load_decisions, write(folder, "decisions.npz", archive))


# --- groups and teacher groups ---------------------------------------------------------------

GROUP_HEADERS = st.sampled_from(["group,budget", "group,budget,upsampling", "group,budget,weight",
                                 "group,budget,participation", "group,budget,share",
                                 "group", "budget,group", "group,budget,x", "Group , Budget"])


@FUZZ
@given(data=st.binary(max_size=300), header=GROUP_HEADERS, text=csv_text())
def test_groups_from_random_input(folder, data, header, text):
    read_or_refuse(load_groups, write(folder, "groups.csv", data))
    read_or_refuse(load_groups, write(folder, "groups.csv", header.encode() + b"\n" + text))


TWO_GROUPS = PrivacyGroups(names=("a", "b"), budgets=np.array([1.0, 2.0]))


@FUZZ
@given(data=st.binary(max_size=200),
       rows=st.lists(st.tuples(CELLS, st.sampled_from(["a", "b", "c", "", " a"])),
                     max_size=5),
       header=st.sampled_from(["teacher,group", "group,teacher", "teacher", ""]))
def test_teacher_groups_from_random_input(folder, data, rows, header):
    def read(path):
        return load_teacher_groups(path, groups=TWO_GROUPS, teachers=3)

    read_or_refuse(read, write(folder, "teachers.csv", data))
    text = "\n".join([header] + [f"{teacher},{group}" for teacher, group in rows])
    read_or_refuse(read, write(folder, "teachers.csv", text.encode()))
