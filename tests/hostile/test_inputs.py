"""Hostile inputs: every one is a user mistake, so every one exits 2 with one line.

Each case of ``CASES`` runs one command (pate-analyze, pate-sweep, pate-plot) in a folder
holding the small files of ``FILES`` and checks the contract of cli:exit-codes: exit status 2,
exactly one line on stderr, starting ``Error:`` and holding the expected words, no
traceback, and no output file left behind (every case asks for an output in ``out/``).
Then: unreadable files, and hypothesis fuzzing of the CSV and NPY readers (random or
mutated bytes: exit 0 or 2, never 1, never a traceback).

The same votes in every layout giving the same bytes is tested in
``tests/inputs/test_hostile_inputs.py`` (not repeated here).
"""

from __future__ import annotations

import builtins
import bz2
import gzip
import io
import lzma
import zipfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.hostile import with_method

VOTES = np.array([[30, 20], [25, 25], [40, 10], [45, 5]])
OK_CSV = b"30,20\n25,25\n40,10\n45,5\n"


def npy(array, **kwargs) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array, **kwargs)
    return buffer.getvalue()


def npz(**arrays) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


def npy_with_header(shape, descr="<f8", data=b"\0" * 64) -> bytes:
    """NPY bytes whose header declares ``shape``, followed by ``data`` only."""
    header = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}".encode()
    header += b" " * (127 - 10 - len(header)) + b"\n"
    return b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header + data


def zipped(name: str, data: bytes) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(name, data)
    return buffer.getvalue()


def sparse_npz(dense) -> bytes:
    import scipy.sparse

    buffer = io.BytesIO()
    scipy.sparse.save_npz(buffer, scipy.sparse.csr_matrix(np.asarray(dense)))
    return buffer.getvalue()


OK_NPY = npy(VOTES)
HUGE_NPY = npy_with_header((100_000, 100_000))  # 80 GB declared, 64 bytes present
FILES = {
    "ok.csv": OK_CSV,
    "ok.npy": OK_NPY,
    "ok.npz": npz(votes=VOTES),
    "huge.npy": HUGE_NPY,
    "negdim.npy": npy_with_header((-3, 2)),
    "huge.npz": zipped("votes.npy", HUGE_NPY),
    "truncated.npy": OK_NPY[:-9],
    "object.npy": npy(np.array([[1, "a"]], dtype=object), allow_pickle=True),
    "object.npz": zipped("votes.npy", npy(np.array([[1, "a"]], dtype=object),
                                         allow_pickle=True)),
    "strings.npy": npy(np.array([["30", "20"]])),
    "past_float64.npy": npy(np.full((3, 3), 1e308)),  # rows sum past float64 (no warning)
    "complex.npy": npy(VOTES.astype(complex)),
    "dates.npy": npy(np.array([["2020-01-01", "2020-01-02"]], dtype="datetime64[D]")),
    "oned.npy": npy(np.array([30, 20])),
    "threed.npy": npy(np.zeros((2, 2, 2))),
    "norows.npy": npy(np.zeros((0, 2))),
    "gzip.npy": gzip.compress(OK_NPY),
    "gzip.csv": gzip.compress(OK_CSV),
    "votes.csv.gz": gzip.compress(OK_CSV),
    "sparse.npz": sparse_npz(VOTES),
    "bz2.csv": bz2.compress(OK_CSV),
    "xz.npz": lzma.compress(npz(votes=VOTES)),
    "zip.npy": npz(votes=VOTES),
    "npy.npz": OK_NPY,
    "npy.csv": OK_NPY,
    "nokey.npz": npz(other=VOTES, more=VOTES),
    "badzip.npz": b"PK\x03\x04" + b"\0" * 40,
    "notnpy.npy": b"this is not an npy file\n",
    "nan.csv": b"30,20\nnan,50\n",
    "inf.csv": b"30,20\ninf,20\n",
    "negative.csv": b"30,20\n55,-5\n",
    "uneven.csv": b"30,20\n25,24\n",
    "zero.csv": b"0,0\n0,0\n",
    "cell.csv": b"30,20\n25,x\n",
    "ragged.csv": b"30,20\n25,20,5\n",
    "headeronly.csv": b"a,b\n",
    "onecol.csv": b"50\n50\n",
    "empty.csv": b"",
    "blank.csv": b"\n \n\n",
    "bomcrlf.csv": b"\xef\xbb\xbfa,b\r\n30,20\r\n25,2x\r\n",
    "utf16.csv": "30,20\n25,25\n".encode("utf-16"),
    "latin1.tsv": b"30\t20\n2\xe95\t25\n",
    "votes.txt": OK_CSV,
    "noext": OK_CSV,
    "labels_short.csv": b"0\n1\n",
    "labels_range.csv": b"0\n1\n5\n0\n",
    "labels_frac.csv": b"0\n1\n0.5\n0\n",
    "labels_text.csv": b"0\n1\ncat\n0\n",
    "student_sum.csv": b"0.5,0.6\n0.5,0.5\n0.9,0.1\n0.2,0.8\n",
    "student_shape.csv": b"0.5,0.5\n0.5,0.5\n",
    "student_negative.csv": b"1.5,-0.5\n0.5,0.5\n0.9,0.1\n0.2,0.8\n",
    "groups_nobudget.csv": b"group,budget\na,\nb,2\n",
    "groups_text.csv": b"group,budget\na,lots\nb,2\n",
    "groups_negative.csv": b"group,budget\na,-1\nb,2\n",
    "rounds_mechanism.csv": b"rows,mechanism\n0:2,gnmux\n",
    "rounds_rows.csv": b"rows,mechanism\n0:1.5,gnmax\n",
    "rounds_json.json": b"[{\"rows\": \"0:2\", \"mechanism\": ",
    "indices_range.csv": b"0\n1\n9\n",
    "indices_repeat.csv": b"0\n1\n1\n",
    "indices_frac.csv": b"0\n1.5\n",
    "rdp_text.csv": b"order,rdp\n2,abc\n",
    "rdp_order.csv": b"order,rdp\n1,0.5\n2,0.7\n",
    "rdp_negative.csv": b"order,rdp\n2,-0.5\n",
    "pred_ok.csv": b"0,1,1\n0,1,0\n",
    "pred_huge_id.csv": b"0,1,1000000000\n0,1,1\n",
    "pred_below.csv": b"0,1,-2\n0,1,1\n",
    "pred_frac.csv": b"0,1,0.5\n0,1,1\n",
    "pred_none.csv": b"-1,-1\n-1,-1\n",
    "sweep.csv": b"file,mechanism,epsilon,epsilon_std,repeats\nv.npy,gnmax,1,0,1\n",
    "perquery.csv": b"query,epsilon_cumulative\n0,0.1\n1,0.2\n",
    "nocolumn.csv": b"query,epsilon_cumulative\n0,0.1\n",
    "table.txt": b"query,epsilon_cumulative\n0,0.1\n",
    "gzip_table.csv": gzip.compress(b"query,epsilon_cumulative\n0,0.1\n"),
    "table.csv.gz": gzip.compress(b"query,epsilon_cumulative\n0,0.1\n"),
    # long tables (query,class,count with --classes) and archives zipfile cannot read
    "long_class_int64.csv": b"query,class,count\n0,99999999999999999999,3\n",
    "long_class_uint64.csv": b"query,class,count\n0,10000000000000000000,3\n",
    "long_query_float.csv": b"query,class,count\n0,1,3\n1e300,1,3\n",
    "long_query_gap.csv": b"query,class,count\n0,1,3\n1000000000000000,1,3\n",
    "long_output_int64.csv": b"query,class,count,output\n0,1,3,99999999999999999999\n",
    "long_header.csv": b"query,class,count\n",
    "deflate64.npz": with_method(npz(votes=VOTES), 9),
    "deflate64_sparse.npz": with_method(sparse_npz(VOTES), 9),
    "aes_sparse.npz": with_method(sparse_npz(VOTES), 99),
}

HUGE_STDIN = HUGE_NPY
GZIP_STDIN = gzip.compress(OK_CSV)
SPARSE_STDIN = sparse_npz(VOTES)
HUGE_NPZ_STDIN = zipped("votes.npy", HUGE_NPY)

A, S, P = "analyze", "sweep", "plot"
# (id, command, args, stdin, words the one-line message must hold). An output in out/ is
# added to every case: --per-query for pate-analyze, --out for pate-sweep, -o for pate-plot.
CASES = [
    # declared sizes
    ("npy header larger than the file", A, ["huge.npy"], None, "only 64 bytes follow"),
    ("npy header negative dimension", A, ["negdim.npy"], None, "negative dimension"),
    ("npz member header larger than it", A, ["huge.npz"], None, "array 'votes'"),
    ("npy header on stdin", A, ["-"], HUGE_STDIN, "<stdin>: the .npy header declares"),
    ("npz on stdin with huge member", A, ["-"], HUGE_NPZ_STDIN, "only 64 bytes follow"),
    ("class id 10^9", A, ["--predictions", "pred_huge_id.csv"], None, "too large"),
    ("--classes 2e6", A, ["--predictions", "pred_ok.csv", "--classes", "2000000"], None,
     "at most 1,000,000"),
    ("--orders 2:1e12:1", A, ["ok.csv", "--orders", "2:1e12:1"], None, "--orders"),
    ("--orders 2:2e5:1", A, ["ok.csv", "--orders", "2:200000:1"], None, "100,000"),
    ("--orders huge order", A, ["ok.csv", "--orders", "2,1e7"], None, "at most 1e+06"),
    ("--orders infinite count", A, ["ok.csv", "--orders", "2:1e308:1e-308"], None,
     "too many"),
    ("sweep grid infinite count", S, ["ok.csv", "--sigma", "1:1e308:1e-300"], None,
     "--sigma"),
    # numeric domains
    ("--sigma 1e308", A, ["ok.csv", "-m", "gnmax", "--sigma", "1e308"], None,
     "sigma must lie in"),
    ("--sigma 1e-12", A, ["ok.csv", "-m", "gnmax", "--sigma", "1e-12"], None,
     "sigma must lie in"),
    ("--sigma-threshold 1e300", A, ["ok.csv", "--sigma-threshold", "1e300"], None,
     "sigma threshold must lie in"),
    ("--laplace-scale 1e-3", A, ["ok.csv", "-m", "lnmax", "--laplace-scale", "1e-3"], None,
     "laplace scale must lie in"),
    ("--svt-scale 1e13", A, ["ok.csv", "-m", "svt", "--svt-scale", "1e13"], None,
     "SVT scale must lie in"),
    ("--svt-threshold -5", A, ["ok.csv", "-m", "svt", "--svt-scale", "1",
                               "--svt-threshold", "-5"], None, "above 1"),
    ("--svt-threshold solving", A, ["ok.csv", "-m", "svt", "--target-epsilon", "5",
                                    "--svt-threshold", "-5"], None, "above 1"),
    ("smooth sensitivity order 1e6", A, ["ok.csv", "-m", "gnmax", "--smooth-sensitivity",
                                         "--order", "1e6"], None, "order of at most"),
    ("smooth sensitivity tiny sigma", A, ["ok.csv", "-m", "gnmax", "--sigma", "0.01",
                                          "--smooth-sensitivity"], None, "needs sigma >="),
    ("sweep --sigma 1e308", S, ["ok.csv", "-m", "gnmax", "--sigma", "1e308"], None,
     "sigma must lie in"),
    ("sweep --laplace-scale 1e-3", S, ["ok.csv", "-m", "lnmax", "--laplace-scale",
                                       "0.001,1"], None, "laplace scale must lie in"),
    ("--delta 2", A, ["ok.csv", "--delta", "2"], None, "delta"),
    ("--queries beyond the file", A, ["ok.csv", "-n", "100"], None, "100"),
    ("--teachers -1", A, ["ok.csv", "--teachers", "-1"], None, "teachers"),
    # compressed and mislabelled files
    ("gzip .npy", A, ["gzip.npy"], None, "gzip-compressed"),
    ("gzip .csv", A, ["gzip.csv"], None, "gzip-compressed"),
    ("bz2 .csv", A, ["bz2.csv"], None, "bz2-compressed"),
    ("xz .npz", A, ["xz.npz"], None, "xz-compressed"),
    ("gzip on stdin", A, ["-"], GZIP_STDIN, "gzip-compressed"),
    ("gzip named .csv.gz", A, ["votes.csv.gz"], None, "votes.csv.gz: is gzip-compressed"),
    ("sparse archive on stdin", A, ["-"], SPARSE_STDIN,
     "<stdin>: a sparse matrix (scipy.sparse.save_npz) is read from a .npz file by its path"),
    ("sparse archive as --labels", A, ["ok.csv", "--labels", "sparse.npz"], None,
     "sparse.npz: a sparse matrix (scipy.sparse.save_npz), not an array 'labels'"),
    ("sparse archive as --query-indices", A, ["ok.csv", "--query-indices", "sparse.npz"],
     None, "sparse.npz: a sparse matrix (scipy.sparse.save_npz), not an array"),
    ("missing file with --classes", A, ["missing.csv", "--classes", "10"], None,
     "missing.csv: no such file"),
    ("npz named .npy", A, ["zip.npy"], None, "rename it to .npz"),
    ("npy named .npz", A, ["npy.npz"], None, "rename it to .npy"),
    ("npy named .csv", A, ["npy.csv"], None, "rename it to .npy"),
    ("not an npy", A, ["notnpy.npy"], None, "NPY magic"),
    ("broken zip", A, ["badzip.npz"], None, "not a valid .npz"),
    ("npz without votes", A, ["nokey.npz"], None, "no array named 'votes'"),
    ("npz member in Deflate64", A, ["deflate64.npz"], None,
     "compressed with a method Python's zipfile cannot read"),
    ("sparse npz member in Deflate64", A, ["deflate64_sparse.npz"], None,
     "compressed with a method Python's zipfile cannot read"),
    ("sparse npz member in method 99", A, ["aes_sparse.npz"], None, "cannot read"),
    ("sweep npz member in Deflate64", S, ["deflate64.npz"], None, "cannot read"),
    # long tables
    ("long table class beyond int64", A, ["long_class_int64.csv", "--classes", "5"], None,
     "line 2: class 99999999999999999999 is outside the vocabulary 0..4"),
    ("long table class beyond int64 in uint64", A, ["long_class_uint64.csv", "--classes",
                                                    "5"], None, "outside the vocabulary"),
    ("long table query 1e300", A, ["long_query_float.csv", "--classes", "5"], None,
     "line 3: query 1e+300 is not an id"),
    ("long table query 10^15", A, ["long_query_gap.csv", "--classes", "5"], None,
     "query 1 has no rows"),
    ("long table output beyond int64", A, ["long_output_int64.csv", "--classes", "5"], None,
     "line 2: output 99999999999999999999 is not an id"),
    ("long table header only", A, ["long_header.csv", "--classes", "5"], None,
     "has no queries (no rows)"),
    ("gzip sweep input", S, ["gzip.npy"], None, "gzip-compressed"),
    ("gzip plot table", P, ["history", "gzip_table.csv"], None, "gzip-compressed"),
    ("gzip plot table named .gz", P, ["history", "table.csv.gz"], None,
     "table.csv.gz: is gzip-compressed"),
    # all-zero votes
    ("all-zero votes", A, ["zero.csv"], None, "no votes"),
    ("all-zero votes with --teachers", A, ["zero.csv", "--teachers", "5"], None,
     "every vote is 0"),
    ("no teacher voted", A, ["--predictions", "pred_none.csv"], None, "no teacher voted"),
    ("all-zero votes in a sweep", S, ["zero.csv"], None, "no votes"),
    ("all-zero votes in a plot", P, ["selection", "zero.csv", "--params", "2,1"], None,
     "no votes"),
    # classic vote-file mistakes
    ("truncated npy", A, ["truncated.npy"], None, "truncated"),
    ("pickled npy", A, ["object.npy"], None, "pickled object array"),
    ("pickled npz", A, ["object.npz"], None, "pickled object array"),
    ("string dtype", A, ["strings.npy"], None, "expected numbers"),
    ("complex dtype", A, ["complex.npy"], None, "expected numbers"),
    ("datetime dtype", A, ["dates.npy"], None, "expected numbers"),
    ("1-D array", A, ["oned.npy"], None, "2-D"),
    ("3-D array", A, ["threed.npy"], None, "2-D"),
    ("no rows", A, ["norows.npy"], None, "no queries"),
    ("NaN vote", A, ["nan.csv"], None, "not finite"),
    ("infinite vote", A, ["inf.csv"], None, "not finite"),
    ("negative vote", A, ["negative.csv"], None, "negative"),
    ("uneven row sums", A, ["uneven.csv"], None, "query 1 has 49 votes"),
    ("non-numeric cell", A, ["cell.csv"], None, "line 2, column 2"),
    ("ragged rows", A, ["ragged.csv"], None, "different numbers of columns"),
    ("header only", A, ["headeronly.csv"], None, "header but no rows"),
    ("one class", A, ["onecol.csv"], None, "at least 2 classes"),
    ("empty file", A, ["empty.csv"], None, "empty"),
    ("blank lines only", A, ["blank.csv"], None, "empty"),
    ("BOM and CRLF with a bad cell", A, ["bomcrlf.csv"], None, "line 3, column 2"),
    ("UTF-16 text", A, ["utf16.csv"], None, "UTF-16"),
    ("Latin-1 bytes", A, ["latin1.tsv"], None, "not UTF-8"),
    ("unknown extension", A, ["votes.txt"], None, "unknown extension '.txt'"),
    ("no extension", A, ["noext"], None, "unknown extension none"),
    ("missing file", A, ["nothere.csv"], None, "no such file"),
    ("directory", A, ["out"], None, "is a directory"),
    ("empty stdin", A, ["-"], b"", "standard input is empty"),
    ("stdin not UTF-8", A, ["-"], b"30,20\n\xff5,45\n", "not UTF-8"),
    ("sweep negative votes", S, ["negative.csv"], None, "negative"),
    ("sweep missing file", S, ["nothere.npy"], None, "no such file"),
    ("plot selection huge npy", P, ["selection", "huge.npy", "--params", "2,1"], None,
     "only 64 bytes follow"),
    ("plot selection pickled", P, ["selection", "object.npy", "--params", "2,1"], None,
     "pickled"),
    # labels, student, groups, rounds, query indices, --add-rdp, predictions
    ("labels wrong length", A, ["ok.csv", "--labels", "labels_short.csv"], None,
     "has 2 labels"),
    ("label out of range", A, ["ok.csv", "--labels", "labels_range.csv"], None,
     "outside 0..1"),
    ("fractional label", A, ["ok.csv", "--labels", "labels_frac.csv"], None,
     "not an integer class id"),
    ("label not a number", A, ["ok.csv", "--labels", "labels_text.csv"], None,
     "not a number"),
    ("sweep bad labels", S, ["ok.csv", "--labels", "labels_range.csv"], None,
     "outside 0..1"),
    ("student row sum", A, ["ok.csv", "-m", "interactive", "--student", "student_sum.csv"],
     None, "not 1"),
    ("student shape", A, ["ok.csv", "-m", "interactive", "--student",
                          "student_shape.csv"], None, "has shape 2 x 2"),
    ("student negative", A, ["ok.csv", "-m", "interactive", "--student",
                             "student_negative.csv"], None, "negative"),
    ("group without budget", A, ["ok.csv", "--individualized", "upsampling", "--groups",
                                 "groups_nobudget.csv"], None, "budget"),
    ("group budget text", A, ["ok.csv", "--individualized", "upsampling", "--groups",
                              "groups_text.csv"], None, "lots"),
    ("group budget negative", A, ["ok.csv", "--individualized", "upsampling", "--groups",
                                  "groups_negative.csv"], None, "budget"),
    ("round unknown mechanism", A, ["ok.csv", "--rounds", "rounds_mechanism.csv"], None,
     "gnmux"),
    ("round fractional rows", A, ["ok.csv", "--rounds", "rounds_rows.csv"], None,
     "not an integer row number"),
    ("rounds broken JSON", A, ["ok.csv", "--rounds", "rounds_json.json"], None,
     "not valid JSON"),
    ("query index out of range", A, ["ok.csv", "--query-indices", "indices_range.csv"],
     None, "9"),
    ("query index repeated", A, ["ok.csv", "--query-indices", "indices_repeat.csv"], None,
     "1"),
    ("query index fractional", A, ["ok.csv", "--query-indices", "indices_frac.csv"], None,
     "1.5"),
    ("--add-rdp not a number", A, ["ok.csv", "--add-rdp", "rdp_text.csv"], None,
     "'abc' is not a number"),
    ("--add-rdp order 1", A, ["ok.csv", "--add-rdp", "rdp_order.csv"], None, "order 1"),
    ("--add-rdp negative", A, ["ok.csv", "--add-rdp", "rdp_negative.csv"], None,
     "must be >= 0"),
    ("counts past float64", A, ["past_float64.npy", "-m", "gnmax"], None, "inf votes"),
    ("prediction below -1", A, ["--predictions", "pred_below.csv"], None, "below -1"),
    ("fractional prediction", A, ["--predictions", "pred_frac.csv"], None,
     "not a class id"),
    # pate-plot tables
    ("plot history of a sweep table", P, ["history", "sweep.csv"], None,
     "this is a pate-sweep table"),
    ("plot tradeoff of a per-query table", P, ["tradeoff", "perquery.csv"], None,
     "per-query table"),
    ("plot table unknown extension", P, ["history", "table.txt"], None,
     "unknown extension '.txt'"),
    ("plot summary broken JSON", P, ["tradeoff-curve", "rounds_json.json"], None,
     "not valid JSON (Expecting value at line 1"),
    ("plot table empty", P, ["history", "empty.csv"], None, "empty"),
    ("plot table missing", P, ["history", "nothere.csv"], None, "no such file"),
]

OUTPUT = {A: ("--per-query", "out/q.csv"), S: ("--out", "out/sweep.csv"),
          P: ("-o", "out/figure.png")}


@pytest.fixture
def folder(tmp_path, monkeypatch):
    """A folder with ``FILES`` and an empty ``out/``, as the working directory."""
    for name, data in FILES.items():
        (tmp_path / name).write_bytes(data)
    (tmp_path / "out").mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path


def check_one_line_error(result, words: str) -> None:
    assert result.code == 2, (result.code, result.err)
    lines = result.err.splitlines()
    assert len(lines) == 1, result.err
    assert lines[0].startswith("Error: "), lines[0]
    assert "Traceback" not in result.err
    assert words in lines[0], lines[0]


@pytest.mark.parametrize("case, command, args, stdin, words", CASES,
                         ids=[case[0] for case in CASES])
def test_hostile_input_exits_2_in_one_line(cli, folder, case, command, args, stdin, words):
    option, output = OUTPUT[command]
    if command == S:
        args = [*args, "--workers", "1", "--no-progress"]
    result = cli.run(f"pate-{command}", *args, option, output, stdin=stdin)
    check_one_line_error(result, words)
    assert list((folder / "out").iterdir()) == []


def test_the_suite_is_large_enough():
    assert len(CASES) >= 60
    assert {command for _, command, *_ in CASES} == {A, S, P}


# --- files that exist but cannot be read -----------------------------------------------------

@pytest.fixture
def unreadable(monkeypatch):
    """Opening ``secret.*`` raises PermissionError, as ``chmod 000`` does for a non-root
    user (the tests may run as root, who reads everything)."""
    real = builtins.open

    def guarded(file, *args, **kwargs):
        if str(file).rsplit("/", 1)[-1].startswith("secret."):
            raise PermissionError(13, "Permission denied", str(file))
        return real(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", guarded)


@pytest.mark.parametrize("command, args", [
    (A, ["secret.csv"]), (A, ["secret.npy"]), (A, ["secret.npz"]),
    (A, ["ok.csv", "--labels", "secret.csv"]),
    (A, ["ok.csv", "--individualized", "upsampling", "--groups", "secret.csv"]),
    (S, ["secret.npy"]), (P, ["history", "secret.csv"]),
    (P, ["selection", "secret.npy", "--params", "2,1"]),
], ids=["csv", "npy", "npz", "labels", "groups", "sweep", "plot table", "plot votes"])
def test_an_unreadable_file_exits_2_naming_it(cli, folder, unreadable, command, args):
    for name in ("secret.csv", "secret.npy", "secret.npz"):
        (folder / name).write_bytes(FILES["ok" + name[6:]])
    option, output = OUTPUT[command]
    if command == S:
        args = [*args, "--workers", "1", "--no-progress"]
    result = cli.run(f"pate-{command}", *args, option, output)
    check_one_line_error(result, "cannot be read (permission denied)")
    assert "secret." in result.err
    assert list((folder / "out").iterdir()) == []


# --- fuzzing the readers -------------------------------------------------------------------

def mutate(data: bytes, edits) -> bytes:
    """``data`` with each ``(position, byte)`` of ``edits`` overwritten (positions wrap)."""
    out = bytearray(data)
    for position, value in edits:
        if out:
            out[position % len(out)] = value
    return bytes(out)


FUZZ = settings(max_examples=60, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])
EDITS = st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 255)), max_size=6)


def check_no_crash(result) -> None:
    assert result.code in (0, 2), (result.code, result.err)
    assert "Traceback" not in result.err
    if result.code == 2:
        errors = [line for line in result.err.splitlines() if line.startswith("Error: ")]
        assert len(errors) == 1, result.err


@FUZZ
@given(data=st.binary(max_size=300))
def test_random_bytes_on_stdin_never_crash(cli, data):
    check_no_crash(cli.analyze("-", "-m", "gnmax", "-f", "json", stdin=data))


@FUZZ
@given(edits=EDITS, cut=st.integers(0, 400))
def test_mutated_npy_never_crashes(cli, edits, cut):
    data = mutate(OK_NPY, edits)[: max(1, len(OK_NPY) - cut)]
    check_no_crash(cli.analyze("-", "-m", "gnmax", "-f", "json", stdin=data))


@FUZZ
@given(edits=EDITS)
def test_mutated_npy_header_never_crashes(cli, edits):
    data = mutate(OK_NPY, [(position % 128, value) for position, value in edits])
    check_no_crash(cli.analyze("-", "-m", "gnmax", "-f", "json", stdin=data))


@FUZZ
@given(edits=st.lists(st.tuples(st.integers(0, 10_000),
                                st.sampled_from(b"0123456789,.-+eE\n\r\t \"'nai")),
                      max_size=6))
def test_mutated_csv_never_crashes(cli, edits):
    check_no_crash(cli.analyze("-", "-m", "gnmax", "-f", "json",
                               stdin=mutate(OK_CSV, edits)))


@FUZZ
@given(edits=EDITS)
def test_mutated_npz_file_never_crashes(cli, tmp_path_factory, edits):
    path = tmp_path_factory.mktemp("npz") / "votes.npz"
    path.write_bytes(mutate(FILES["ok.npz"], edits))
    check_no_crash(cli.analyze(path, "-m", "gnmax", "-f", "json"))
