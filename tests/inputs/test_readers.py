"""Reading and validating vote, prediction and label files (``pate_cli.inputs``).

Every expected value here is known independently of the package: hand-written vote rows
with known totals, error texts spelled out in full, histograms counted with plain loops.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from pate_cli.errors import InputError
from pate_cli.inputs import load_predictions, load_votes
from tests.inputs import error_of

# 20 queries x 3 classes, every row sums to 10 teachers.
VOTES = [
    [10, 0, 0], [0, 10, 0], [0, 0, 10], [9, 1, 0], [1, 9, 0],
    [0, 1, 9], [8, 1, 1], [1, 8, 1], [1, 1, 8], [7, 2, 1],
    [2, 7, 1], [1, 2, 7], [6, 3, 1], [3, 6, 1], [5, 5, 0],
    [4, 3, 3], [3, 4, 3], [3, 3, 4], [5, 0, 5], [4, 4, 2],
]
EXTENSIONS = "(expected .npy, .npz, .csv, .tsv, or - for standard input)"
PICKLED = "holds a pickled object array; refusing to load it (only plain numeric arrays are read)"
TOTALS_HINT = ("(every row must sum to the number of teachers; give --teachers M for weighted "
               "or partial votes)")


def csv_text(rows, header=None, sep=","):
    lines = [sep.join(header)] if header else []
    lines += [sep.join(str(v) for v in row) for row in rows]
    return "\n".join(lines) + "\n"


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def save(tmp_path, name, array, **kwargs):
    path = tmp_path / name
    np.save(path, array, **kwargs)
    return path


@pytest.fixture
def votes_csv(tmp_path):
    return write(tmp_path, "votes.csv", csv_text(VOTES))


# --- errors: the file itself -------------------------------------------------------------

def test_missing_file(tmp_path):
    path = tmp_path / "absent.csv"
    assert error_of(load_votes, path) == f"{path}: no such file"


@pytest.mark.parametrize("name, shown", [("votes.txt", "'.txt'"), ("votes.json", "'.json'"),
                                         ("votes", "none")])
def test_unknown_extension(tmp_path, name, shown):
    path = write(tmp_path, name, csv_text(VOTES))
    assert error_of(load_votes, path) == f"{path}: unknown extension {shown} {EXTENSIONS}"


@pytest.mark.parametrize("name", ["votes.npy", "votes.npz", "votes.csv", "votes.tsv"])
def test_empty_file(tmp_path, name):
    path = tmp_path / name
    path.write_bytes(b"")
    assert error_of(load_votes, path) == f"{path}: the file is empty"


def test_blank_csv_is_empty(tmp_path):
    path = write(tmp_path, "votes.csv", "\n  \n\n")
    assert error_of(load_votes, path) == f"{path}: the file is empty"


def test_directory_is_not_a_file(tmp_path):
    path = tmp_path / "dir.csv"
    path.mkdir()
    # a directory is read as .npy shards (inputs.shards): this one has none
    assert error_of(load_votes, path) == (
        f"{path}: is a directory with no .npy shards in it (give a vote file, or a "
        "directory of .npy pieces of one vote matrix)")


# --- errors: shape and dtype --------------------------------------------------------------

def test_one_dimensional_array(tmp_path):
    path = save(tmp_path, "votes.npy", np.array([3, 4, 5]))
    assert error_of(load_votes, path) == (
        f"{path}: expected a 2-D array (rows = queries), got 1-D with shape (3,)")


def test_three_dimensional_array(tmp_path):
    path = save(tmp_path, "votes.npy", np.ones((2, 3, 4)))
    assert error_of(load_votes, path) == (
        f"{path}: expected a 2-D array (rows = queries), got 3-D with shape (2, 3, 4); "
        "multi-label votes (queries, labels, 2) or predictions (queries, teachers, labels) "
        "are read by pate-analyze --multilabel VARIANT")


def test_pickled_object_array_npy(tmp_path):
    array = np.array([[1, "a"], [2, None]], dtype=object)
    path = save(tmp_path, "votes.npy", array, allow_pickle=True)
    assert error_of(load_votes, path) == f"{path}: {PICKLED}"


def test_pickled_object_array_npz(tmp_path):
    path = tmp_path / "votes.npz"
    np.savez(path, votes=np.array([[1, "a"], [2, None]], dtype=object))
    assert error_of(load_votes, path) == f"{path}: {PICKLED}"


def test_string_array_is_not_numbers(tmp_path):
    path = save(tmp_path, "votes.npy", np.array([["1", "2"], ["3", "0"]]))
    assert error_of(load_votes, path) == f"{path}: holds <U1 values; expected numbers"


def test_fewer_than_two_classes(tmp_path):
    path = write(tmp_path, "votes.csv", "10\n10\n10\n")
    assert error_of(load_votes, path) == f"{path}: needs at least 2 classes (columns), got 1"


def test_zero_rows_npy(tmp_path):
    path = save(tmp_path, "votes.npy", np.zeros((0, 3)))
    assert error_of(load_votes, path) == f"{path}: has no queries (0 rows)"


def test_header_without_rows(tmp_path):
    path = write(tmp_path, "votes.csv", "a,b,c\n")
    assert error_of(load_votes, path) == f"{path}: has a header but no rows"


def test_npz_without_votes_array(tmp_path):
    path = tmp_path / "votes.npz"
    np.savez(path, x=np.array(VOTES), y=np.array(VOTES))
    assert error_of(load_votes, path) == f"{path}: has no array named 'votes' (it holds: x, y)"
    np.savez(path, labels=np.arange(3))  # a lone labels array is not the votes
    assert error_of(load_votes, path) == f"{path}: has no array named 'votes' (it holds: labels)"


# --- errors: cells ------------------------------------------------------------------------

def test_non_numeric_cell_names_line_and_column(tmp_path):
    # header on line 1, so the bad cell of the second data row is on line 3, column 2
    path = write(tmp_path, "votes.csv", "a,b,c\n1,2,7\n4,x,6\n")
    assert error_of(load_votes, path) == f"{path}: line 3, column 2: 'x' is not a number"


def test_non_numeric_cell_without_header(tmp_path):
    path = write(tmp_path, "votes.csv", "1,2,7\n4,5,1\n3,3,four\n")
    assert error_of(load_votes, path) == f"{path}: line 3, column 3: 'four' is not a number"


def test_empty_cell(tmp_path):
    path = write(tmp_path, "votes.csv", "1,2,7\n4,,6\n")
    assert error_of(load_votes, path) == f"{path}: line 2, column 2: empty"


def test_tsv_non_numeric_cell(tmp_path):
    path = write(tmp_path, "votes.tsv", "a\tb\n5\t5\n5\t?\n")
    assert error_of(load_votes, path) == f"{path}: line 3, column 2: '?' is not a number"


def test_line_number_counts_blank_lines(tmp_path):
    path = write(tmp_path, "votes.csv", "a,b,c\n1,2,7\n\n4,x,6\n")
    assert error_of(load_votes, path) == f"{path}: line 4, column 2: 'x' is not a number"


def test_row_with_too_many_columns(tmp_path):
    path = write(tmp_path, "votes.csv", "1,2,7\n4,2,4,0\n")
    message = error_of(load_votes, path)
    assert message.startswith(f"{path}: rows have different numbers of columns")
    assert "line 2" in message


def test_row_with_too_few_columns(tmp_path):
    path = write(tmp_path, "votes.csv", "1,2,7\n4,6\n")
    message = error_of(load_votes, path)
    assert "line 2" in message
    assert "columns" in message
    assert "empty" not in message


# --- errors: vote values ------------------------------------------------------------------

NON_FINITE = [
    ("votes.npy", np.array([[4.0, 6.0], [np.nan, 10.0]]), "query 1, class 0", "nan"),
    ("votes.npy", np.array([[4.0, 6.0], [0.0, np.inf]]), "query 1, class 1", "inf"),
    ("votes.csv", "4,6\nnan,10\n", "query 1, class 0", "nan"),
    ("votes.csv", "4,6\n0,inf\n", "query 1, class 1", "inf"),
]


def _make(tmp_path, name, content):
    if isinstance(content, str):
        return write(tmp_path, name, content)
    return save(tmp_path, name, content)


@pytest.mark.parametrize("name, content, place, shown", NON_FINITE)
def test_non_finite_votes_rejected_with_place(tmp_path, name, content, place, shown):
    path = _make(tmp_path, name, content)
    message = error_of(load_votes, path)
    assert message.startswith(f"{path}: {place} is not finite (")
    assert shown in message


@pytest.mark.parametrize("name, content, place, shown", NON_FINITE)
def test_non_finite_votes_message_shows_plain_value(tmp_path, name, content, place, shown):
    path = _make(tmp_path, name, content)
    assert error_of(load_votes, path) == f"{path}: {place} is not finite ({shown})"


def test_negative_votes(tmp_path):
    path = write(tmp_path, "votes.csv", "4,6\n11,-1\n")
    assert error_of(load_votes, path) == (
        f"{path}: query 1, class 1 is negative (-1); votes are counts")


def test_rows_with_different_totals_name_the_first_bad_query(tmp_path):
    rows = [list(r) for r in VOTES]
    rows[7] = [1, 8, 2]   # 11 votes
    rows[12] = [1, 1, 1]  # 3 votes, later: not the one reported
    path = write(tmp_path, "votes.csv", csv_text(rows))
    assert error_of(load_votes, path) == (
        f"{path}: query 7 has 11 votes but query 0 has 10 {TOTALS_HINT}")


def test_teachers_allows_rows_with_different_totals(tmp_path):
    rows = [[5, 3, 2], [1, 1, 1], [0, 7, 0]]
    path = write(tmp_path, "votes.csv", csv_text(rows))
    error_of(load_votes, path)  # refused without --teachers
    vote_set = load_votes(path, teachers=10)
    assert vote_set.teachers == 10
    assert np.asarray(vote_set.votes).tolist() == rows


# --- errors: labels -----------------------------------------------------------------------

def test_labels_of_the_wrong_length(tmp_path, votes_csv):
    labels = save(tmp_path, "labels.npy", np.zeros(19, dtype=np.int64))
    assert error_of(load_votes, votes_csv, labels=labels) == (
        f"{labels}: has 19 labels but {votes_csv} has 20 queries")


@pytest.mark.parametrize("bad", [3, -1])
def test_labels_out_of_range_rejected(tmp_path, votes_csv, bad):
    values = np.zeros(20, dtype=np.int64)
    values[4] = bad
    labels = save(tmp_path, "labels.npy", values)
    message = error_of(load_votes, votes_csv, labels=labels)
    assert message.startswith(f"{labels}: label ")
    assert message.endswith(" at query 4 is outside 0..2")


def test_labels_out_of_range_message_shows_plain_value(tmp_path, votes_csv):
    values = np.zeros(20, dtype=np.int64)
    values[4] = 3
    labels = save(tmp_path, "labels.npy", values)
    assert error_of(load_votes, votes_csv, labels=labels) == (
        f"{labels}: label 3 at query 4 is outside 0..2")


def test_non_integer_labels_rejected(tmp_path, votes_csv):
    labels = write(tmp_path, "labels.csv", "0\n1.5\n" + "0\n" * 18)
    message = error_of(load_votes, votes_csv, labels=labels)
    assert message.startswith(f"{labels}: ")
    assert "query 1" in message


def test_non_integer_labels_message_says_not_an_integer(tmp_path, votes_csv):
    labels = write(tmp_path, "labels.csv", "0\n1.5\n" + "0\n" * 18)
    message = error_of(load_votes, votes_csv, labels=labels)
    assert "query 1" in message and "1.5" in message
    assert "np." not in message
    assert "outside" not in message
    assert "integer" in message


def test_non_numeric_labels(tmp_path, votes_csv):
    labels = write(tmp_path, "labels.csv", "0\ncat\n" + "0\n" * 18)
    assert error_of(load_votes, votes_csv, labels=labels) == (
        f"{labels}: line 2, column 1: 'cat' is not a number")


def test_labels_with_two_columns(tmp_path, votes_csv):
    labels = write(tmp_path, "labels.csv", "0,1\n" * 20)
    assert error_of(load_votes, votes_csv, labels=labels) == (
        f"{labels}: expected one label per query (a single column), got shape (20, 2)")


def test_npz_labels_out_of_range_rejected(tmp_path):
    path = tmp_path / "votes.npz"
    labels = np.zeros(20, dtype=np.int64)
    labels[2] = 5
    np.savez(path, votes=np.array(VOTES), labels=labels)
    message = error_of(load_votes, path)
    assert message.endswith(" at query 2 is outside 0..2")


def test_npz_labels_error_names_the_file(tmp_path):
    path = tmp_path / "votes.npz"
    labels = np.zeros(20, dtype=np.int64)
    labels[2] = 5
    np.savez(path, votes=np.array(VOTES), labels=labels)
    assert error_of(load_votes, path).startswith(f"{path}")


# --- reading the formats ------------------------------------------------------------------

def test_csv_without_header(votes_csv):
    vote_set = load_votes(votes_csv)
    assert np.asarray(vote_set.votes).tolist() == VOTES
    assert (vote_set.queries, vote_set.classes, vote_set.teachers) == (20, 3, 10)
    assert vote_set.path == str(votes_csv)
    assert vote_set.labels is None


def test_csv_with_header(tmp_path):
    path = write(tmp_path, "votes.csv", csv_text(VOTES, header=["cat", "dog", "bird"]))
    vote_set = load_votes(path)
    assert np.asarray(vote_set.votes).tolist() == VOTES
    assert (vote_set.queries, vote_set.teachers) == (20, 10)


def test_tsv_with_and_without_header(tmp_path):
    plain = write(tmp_path, "plain.tsv", csv_text(VOTES, sep="\t"))
    headed = write(tmp_path, "headed.tsv", csv_text(VOTES, header=["a", "b", "c"], sep="\t"))
    assert load_votes(plain).votes.tolist() == VOTES
    assert load_votes(headed).votes.tolist() == VOTES


def test_npy_is_memory_mapped(tmp_path):
    path = save(tmp_path, "votes.npy", np.array(VOTES, dtype=np.int32))
    vote_set = load_votes(path)
    assert isinstance(vote_set.votes, np.memmap)
    assert np.asarray(vote_set.votes).tolist() == VOTES
    assert vote_set.teachers == 10
    assert isinstance(vote_set.teachers, int)


def test_fractional_weighted_votes_need_teachers(tmp_path):
    rows = [[2.5, 0.5], [1.0, 1.0]]
    path = save(tmp_path, "votes.npy", np.array(rows))
    assert load_votes(path, teachers=3.5).teachers == 3.5


def test_npz_votes_and_labels(tmp_path):
    path = tmp_path / "votes.npz"
    labels = [i % 3 for i in range(20)]
    np.savez(path, votes=np.array(VOTES), labels=np.array(labels))
    vote_set = load_votes(path)
    assert np.asarray(vote_set.votes).tolist() == VOTES
    assert vote_set.labels.tolist() == labels


def test_labels_file_overrides_npz_labels(tmp_path):
    path = tmp_path / "votes.npz"
    np.savez(path, votes=np.array(VOTES), labels=np.zeros(20, dtype=np.int64))
    given = [2] * 20
    labels = write(tmp_path, "labels.csv", "\n".join(map(str, given)) + "\n")
    assert load_votes(path, labels=labels).labels.tolist() == given


def test_labels_from_npy_and_one_column_csv(tmp_path, votes_csv):
    truth = [(i * 7) % 3 for i in range(20)]
    npy = save(tmp_path, "labels.npy", np.array(truth))
    csv = write(tmp_path, "labels.csv", "label\n" + "\n".join(map(str, truth)) + "\n")
    assert load_votes(votes_csv, labels=npy).labels.tolist() == truth
    assert load_votes(votes_csv, labels=csv).labels.tolist() == truth


@pytest.mark.parametrize("name", ["votes.csv", "votes.npy", "votes.npz"])
def test_sha256_is_the_file_digest(tmp_path, name):
    path = tmp_path / name
    if name.endswith(".csv"):
        path.write_text(csv_text(VOTES))
    elif name.endswith(".npy"):
        np.save(path, np.array(VOTES))
    else:
        np.savez(path, votes=np.array(VOTES))
    assert load_votes(path).sha256 == hashlib.sha256(path.read_bytes()).hexdigest()


# --- predictions --------------------------------------------------------------------------

def _predictions():
    # 20 queries x 10 teachers, class ids 0..2 and -1 (no vote)
    return [[(i * 7 + j * 3) % 4 - 1 for j in range(10)] for i in range(20)]


def _loop_histogram(predictions, classes):
    histogram = []
    for row in predictions:
        counts = [0] * classes
        for cls in row:
            if cls != -1:
                counts[cls] += 1
        histogram.append(counts)
    return histogram


@pytest.mark.parametrize("name", ["predictions.csv", "predictions.npy"])
def test_predictions_histogram_equals_a_loop(tmp_path, name):
    predictions = _predictions()
    assert any(-1 in row for row in predictions)
    if name.endswith(".csv"):
        path = write(tmp_path, name, csv_text(predictions))
    else:
        path = save(tmp_path, name, np.array(predictions))
    vote_set = load_predictions(path)
    assert np.asarray(vote_set.votes).tolist() == _loop_histogram(predictions, 3)
    assert vote_set.teachers == 10


def test_predictions_with_classes_adds_empty_columns(tmp_path):
    predictions = _predictions()
    path = save(tmp_path, "predictions.npy", np.array(predictions))
    vote_set = load_predictions(path, classes=5)
    assert np.asarray(vote_set.votes).tolist() == _loop_histogram(predictions, 5)
    assert vote_set.classes == 5


def test_predictions_below_minus_one_rejected(tmp_path):
    predictions = _predictions()
    predictions[3][6] = -2
    path = save(tmp_path, "predictions.npy", np.array(predictions))
    assert error_of(load_predictions, path) == (
        f"{path}: query 3, teacher 6: class id -2 is below -1 "
        "(-1 marks a teacher that did not vote)")


def test_predictions_at_or_above_classes_rejected(tmp_path):
    predictions = _predictions()  # largest id is 2
    path = save(tmp_path, "predictions.npy", np.array(predictions))
    first = next((i, j) for i, row in enumerate(predictions) for j, c in enumerate(row) if c == 2)
    assert error_of(load_predictions, path, classes=2) == (
        f"{path}: query {first[0]}, teacher {first[1]}: class id 2 is outside 0..1")


def test_predictions_non_integer_rejected(tmp_path):
    predictions = np.array(_predictions(), dtype=np.float64)
    predictions[1, 4] = 1.5
    path = save(tmp_path, "predictions.npy", predictions)
    message = error_of(load_predictions, path)
    assert message.startswith(f"{path}: query 1, teacher 4: ")
    assert message.endswith("is not a class id")


def test_predictions_non_integer_message_shows_plain_value(tmp_path):
    predictions = np.array(_predictions(), dtype=np.float64)
    predictions[1, 4] = 1.5
    path = save(tmp_path, "predictions.npy", predictions)
    assert error_of(load_predictions, path) == (
        f"{path}: query 1, teacher 4: 1.5 is not a class id")


def test_predictions_one_dimensional(tmp_path):
    path = save(tmp_path, "predictions.npy", np.array([0, 1, 2]))
    assert error_of(load_predictions, path) == (
        f"{path}: expected a 2-D array (rows = queries), got 1-D with shape (3,)")


def test_a_vote_file_is_hashed_while_it_is_validated(tmp_path):
    """``load_votes`` hashes a file on a thread while it validates it: the same sha256."""
    from pate_cli.inputs.readers import digest_of, file_sha256, open_input

    path = tmp_path / "v.npy"
    np.save(path, np.tile([[7, 2, 1]], (5000, 1)))
    name, _, later = open_input(path, background=True)
    assert callable(later) and digest_of(later) == file_sha256(path)
    assert load_votes(path).sha256 == file_sha256(path) == open_input(path)[2]
    with pytest.raises(InputError, match="no such file"):  # before any thread starts
        open_input(tmp_path / "gone.npy", background=True)


def test_a_pipe_is_recorded_without_a_digest(tmp_path):
    """Provenance hashes a file the run read once more: a pipe (``<(...)``) has no bytes
    left, so it gets no digest rather than the digest of nothing (and is never opened)."""
    import os

    from pate_cli.inputs.readers import recorded_sha256

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    assert recorded_sha256(str(fifo)) is None
    plain = tmp_path / "f.txt"
    plain.write_bytes(b"abc")
    assert recorded_sha256(str(plain)) == (
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")


def test_large_inputs_are_not_held_whole(tmp_path, monkeypatch):
    """Review R21: pyarrow's default pre_buffer kept the column chunks read (pate-plot
    history of a 10^7-row .parquet table peaked at 509 MB against 291); int64 .npy labels
    were copied whole (8 bytes a query) besides full-size temporaries."""
    pq = pytest.importorskip("pyarrow.parquet")
    import pandas as pd

    from pate_cli import load_votes
    from pate_cli.inputs.table_pieces import TablePieces

    opened = []
    original = pq.ParquetFile

    def recording(*args, **kwargs):
        opened.append(kwargs.get("pre_buffer", True))
        return original(*args, **kwargs)

    monkeypatch.setattr(pq, "ParquetFile", recording)
    path = tmp_path / "t.parquet"
    pd.DataFrame({"a": [1.0, 2.0]}).to_parquet(path)
    list(TablePieces(str(path), expected="a table")._parquet().iter_batches())
    assert opened == [False]
    votes, labels = tmp_path / "v.npy", tmp_path / "l.npy"
    np.save(votes, np.array([[3, 1], [1, 3], [4, 0]]))
    np.save(labels, np.array([0, 1, 0], dtype=np.int64))
    held = load_votes(votes, labels=labels).labels
    assert isinstance(held, np.memmap) or isinstance(held.base, np.memmap)
