"""``--predictions``' histogram is formed as a pass reads it, never whole
(``inputs.predicted_votes``): the same counts for any slicing, and memory that grows
with neither the queries nor the vocabulary."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.lib.format import open_memmap

import pate_cli
from pate_cli.cli.analyze import main
from pate_cli.inputs import load_predictions
from pate_cli.inputs.predicted_votes import PredictedVotes
from pate_cli.mechanisms.participation import HistogramRows
from tests.memory import traced_peak


def loop_histogram(predictions: np.ndarray, classes: int) -> np.ndarray:
    counts = np.zeros((predictions.shape[0], classes), dtype=np.int64)
    for row, ids in enumerate(predictions):
        for cls in ids:
            if cls >= 0:
                counts[row, cls] += 1
    return counts


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_rows_are_the_loop_histogram_however_they_are_read(data):
    queries = data.draw(st.integers(1, 30))
    teachers = data.draw(st.integers(1, 8))
    classes = data.draw(st.integers(2, 6))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    predictions = rng.integers(-1, classes, size=(queries, teachers))
    votes = PredictedVotes(predictions, classes)
    expected = loop_histogram(predictions, classes)
    assert votes.shape == expected.shape and votes.dtype == np.int32
    cuts = sorted(data.draw(st.lists(st.integers(0, queries), max_size=4)))
    edges = [0, *cuts, queries]
    pieces = [votes[lo:hi] for lo, hi in zip(edges[:-1], edges[1:], strict=True)]
    assert np.array_equal(np.concatenate(pieces), expected)
    picked = rng.integers(0, queries, size=data.draw(st.integers(1, 10)))
    assert np.array_equal(votes[picked], expected[picked])
    row = data.draw(st.integers(-queries, queries - 1))
    assert np.array_equal(votes[row], expected[row])
    assert np.array_equal(np.asarray(votes), expected)
    # the weighted histogram at weight 1 is the same counts, as float64
    weighted = HistogramRows(predictions, classes, weights=np.ones(teachers))
    assert np.array_equal(weighted[0:queries], expected.astype(np.float64))


def write_predictions(path, queries: int, teachers: int = 20, classes: int = 1000) -> str:
    rng = np.random.default_rng(queries)
    out = open_memmap(path, mode="w+", dtype=np.int32, shape=(queries, teachers))
    top = rng.integers(0, classes, queries)
    agree = rng.random((queries, teachers)) < 0.7
    out[:] = np.where(agree, top[:, None], rng.integers(-1, classes, (queries, teachers)))
    out.flush()
    del out
    return str(path)


def _load_and_analyze(path: str):
    def run():
        vote_set = load_predictions(path, classes=1000)
        pate_cli.analyze(vote_set, "confident", threshold=14.0, sigma_threshold=5.0,
                         sigma=4.0, accounting="expected", per_query=False, workers=1,
                         chunk_size=256)
    return run


def test_memory_grows_with_neither_queries_nor_classes(tmp_path):
    small = write_predictions(tmp_path / "small.npy", 1 << 12)
    large = write_predictions(tmp_path / "large.npy", 1 << 14)
    _load_and_analyze(small)()  # imports and first-use caches out of the measurement
    grown = traced_peak(_load_and_analyze(large)) - traced_peak(_load_and_analyze(small))
    # the whole histogram (int32, 1,000 classes) would add 3 x 2^12 x 4,000 bytes = 49 MB
    assert grown < 2_000_000, f"{grown} bytes more at 4x the queries"
    # ... as the same measurement sees when the histogram is held
    held = traced_peak(lambda: np.asarray(load_predictions(large, classes=1000).votes))
    assert held > 60_000_000


def test_a_large_vocabulary_runs_and_matches_its_histogram(tmp_path):
    """Predictions over a 128k vocabulary (a language model's tokens): the run is the one
    of the histogram held whole, bit for bit, and the command runs."""
    path = write_predictions(tmp_path / "tokens.npy", 12, teachers=30, classes=128_000)
    labels = np.load(path)[:, 0].clip(0)
    np.save(tmp_path / "labels.npy", labels)
    options = dict(threshold=20.0, sigma_threshold=6.0, sigma=5.0, accounting="replay",
                   per_query=False, labels=str(tmp_path / "labels.npy"))
    vote_set = load_predictions(path, classes=128_000)
    streamed = pate_cli.analyze(vote_set, "confident", **options)
    dense = np.asarray(vote_set.votes)
    held = pate_cli.analyze(dense, "confident", teachers=30.0, **options)
    assert (streamed.epsilon, streamed.answered_total, streamed.label_accuracy) == (
        held.epsilon, held.answered_total, held.label_accuracy)
    with pytest.raises(SystemExit) as done:
        main(["--predictions", path, "--classes", "128000", "-T", "20",
              "--sigma-threshold", "6", "--sigma", "5", "-o", str(tmp_path / "out.txt")])
    assert done.value.code == 0


@pytest.mark.parametrize("kind", ["sparse", "predictions", "float"])
def test_whole_counts_are_known_without_a_pass_when_the_type_says_so(kind, monkeypatch):
    """``rows.integral_maxima``: integer counts (a sparse file's integer data, predictions'
    histogram) are whole without reading a row, so a per-query table reads such votes once
    (not twice); float votes are scanned."""
    from pate_cli.inputs.rows import FirstRows, integral_maxima
    from tests.synthetic import as_sparse

    dense = np.array([[3, 1, 0], [0, 2, 2], [4, 0, 0]])
    votes = {"sparse": as_sparse(dense.astype(np.int32)),
             "predictions": PredictedVotes(np.array([[0, 0, 1], [2, 1, 1], [0, 0, 0]]), 3),
             "float": dense.astype(np.float64)}[kind]
    read: list[int] = []
    from pate_cli.inputs import rows

    real = rows.rows_of
    monkeypatch.setattr(rows, "rows_of", lambda *args, **kw: read.append(1) or real(*args, **kw))
    assert integral_maxima(votes, FirstRows(3), 3, 2)
    assert bool(read) == (kind == "float")


def test_a_large_dense_histogram_says_a_sparse_file_is_faster(tmp_path, monkeypatch):
    from pate_cli.errors import PateWarning
    from pate_cli.inputs import predicted_votes

    path = write_predictions(tmp_path / "p.npy", 100, classes=1000)
    monkeypatch.setattr(predicted_votes, "SPARSE_HINT", 99_999)
    with pytest.warns(PateWarning, match="100 queries x 1,000 classes.*sparse vote file"):
        load_predictions(path, classes=1000)
    monkeypatch.setattr(predicted_votes, "SPARSE_HINT", 100_000)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_predictions(path, classes=1000)


def test_vote_counts_given_as_predictions_are_warned_of(tmp_path):
    """A vote-count file passed to ``--predictions`` was read as 250 classes of 10 teachers
    without a word (review R37): rows that all sum to one total, as counts do, are noted."""
    from pate_cli.errors import PateWarning

    counts = np.random.default_rng(0).multinomial(250, [0.1] * 10, size=40)
    np.save(tmp_path / "votes.npy", counts)
    with pytest.warns(PateWarning, match=r"first 40 rows sums to 250, as rows of vote counts"):
        load_predictions(tmp_path / "votes.npy")
    predictions = np.random.default_rng(1).integers(0, 10, size=(40, 250))
    same = np.tile(predictions[:1], (40, 1))  # every teacher's prediction alike on each query
    for quiet in (predictions, same, counts[:9]):
        np.save(tmp_path / "p.npy", quiet)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            load_predictions(tmp_path / "p.npy")
