"""sample_votes/tokens_stdlib.npz and the script that writes it (issue 28, item 5).

The script's n-gram teachers against a plain dictionary-counting Witten-Bell model written
here, a tiny sample regenerated with the script's own code and read back by pate_cli, and
the shipped file: its sha256, its shape and what it analyses to.
"""

from __future__ import annotations

import hashlib
import importlib.util
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pate_cli
from tests import ROOT, SAMPLES

SHIPPED = SAMPLES / "tokens_stdlib.npz"
SHIPPED_SHA256 = "5c19a5202990229846ba61ee01c8acb3081fff7939aa65a33f270de0ecda7755"


@pytest.fixture(scope="module")
def script():
    sys.path.insert(0, str(ROOT / "scripts"))  # it imports make_token_votes beside it
    try:
        spec = importlib.util.spec_from_file_location(
            "make_corpus_token_votes", ROOT / "scripts" / "make_corpus_token_votes.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # its dataclass looks its module up
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    yield module
    sys.modules.pop(spec.name, None)


def witten_bell(documents, order: int, classes: int, history, word) -> float:
    """P(word | history) of one teacher, by the recursion in the script's docstring, with
    counts kept in dictionaries (documents: lists of token ids)."""
    if len(history) == 0:
        total = sum(len(d) for d in documents)
        return (sum(d.count(word) for d in documents) + 1) / (total + classes)
    lower = witten_bell(documents, order, classes, history[1:], word)
    follow: dict[int, int] = {}
    n = len(history)
    for d in documents:
        for i in range(n, len(d)):
            if tuple(d[i - n:i]) == tuple(history):
                follow[d[i]] = follow.get(d[i], 0) + 1
    if not follow:
        return lower
    seen, kinds = sum(follow.values()), len(follow)
    return (follow.get(word, 0) + kinds * lower) / (seen + kinds)


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_teachers_predict_the_argmax_of_witten_bell(script, data):
    """The vectorised teachers (PAIRS pairs at a time, several orders looked up at once)
    pick a token of the highest Witten-Bell probability, for random documents and
    contexts; and the chunk size does not change a prediction."""
    classes, teachers = 7, 3
    documents = [data.draw(st.lists(st.integers(0, classes - 1), min_size=1, max_size=30))
                 for _ in range(5)]
    owner = np.array([data.draw(st.integers(0, teachers - 1)) for _ in documents])
    ids = np.concatenate([np.array(d, dtype=np.int64) for d in documents])
    models = script.Teachers(ids, np.repeat(owner, [len(d) for d in documents]),
                             np.repeat(np.arange(len(documents)), [len(d) for d in documents]),
                             teachers=teachers, classes=classes)
    pairs = 12
    history = np.array(data.draw(st.lists(st.integers(0, classes - 1), min_size=3 * pairs,
                                          max_size=3 * pairs))).reshape(pairs, 3)
    teacher = np.arange(pairs) % teachers
    predicted = models.predict(history, teacher)
    for pair in range(pairs):
        own = [d for d, t in zip(documents, owner, strict=True) if t == teacher[pair]]
        probability = [witten_bell(own, 4, classes, list(history[pair]), w)
                       for w in range(classes)]
        assert probability[predicted[pair]] >= max(probability) * (1 - 1e-12)
        assert predicted[pair] == min(w for w in range(classes)
                                      if probability[w] >= max(probability) * (1 - 1e-12))
    original = script.PAIRS
    try:
        script.PAIRS = 5
        np.testing.assert_array_equal(models.predict(history, teacher), predicted)
    finally:
        script.PAIRS = original


def test_a_tiny_sample_regenerated_by_the_script_reads_back(script, tmp_path):
    """The script's code on 60 corpus files (6 teachers, 5 outputs, vocabulary 300):
    pate_cli reads the archive; every row sums to the teachers, outputs are consecutive
    with the drawn lengths, the generated token is each row's plurality, and a second run
    gives the same bytes."""
    files = script.corpus_files()[:60]
    setting = script.Setting(teachers=6, outputs=5, vocabulary=300, lengths=(4, 9))
    digests = []
    for attempt in range(2):
        indptr, indices, data, output, texts, words = script.make(files, setting)
        path = tmp_path / f"tiny{attempt}.npz"
        script.write_archive(path, {"indices": indices, "indptr": indptr,
                                    "format": np.array(b"csr"),
                                    "shape": np.array([indptr.size - 1, len(words)]),
                                    "data": data, "output": output})
        digests.append(hashlib.sha256(path.read_bytes()).hexdigest())
    assert digests[0] == digests[1]
    votes = pate_cli.load_votes(path)
    assert votes.teachers == 6 and votes.votes.shape == (indptr.size - 1, 300)
    lengths = np.bincount(votes.outputs)
    assert lengths.size == 5 and lengths.min() >= 4 and lengths.max() <= 9
    assert np.all(np.diff(votes.outputs) >= 0)
    dense = votes.votes[0:len(votes.outputs)].dense()
    np.testing.assert_array_equal(dense.sum(axis=1), 6)
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    generated = np.concatenate([texts[o, script.PROMPT:script.PROMPT + lengths[o]]
                                for o in range(5)])
    np.testing.assert_array_equal(dense.argmax(axis=1), generated)
    assert starts[-1] + lengths[-1] == dense.shape[0]
    text = script.detokenise(texts[0, :script.PROMPT + lengths[0]], words, mark=script.PROMPT)
    assert "\u00bb" in text


def test_the_shipped_sample_is_the_recorded_file_and_analyses():
    assert hashlib.sha256(SHIPPED.read_bytes()).hexdigest() == SHIPPED_SHA256
    assert SHIPPED_SHA256 in (SAMPLES / "README.md").read_text(encoding="utf-8")
    votes = pate_cli.load_votes(SHIPPED)
    assert votes.teachers == 100 and votes.votes.shape == (8080, 8192)
    lengths = np.bincount(votes.outputs)
    assert lengths.size == 200 and lengths.min() >= 20 and lengths.max() <= 60
    result = pate_cli.analyze(SHIPPED, "confident", threshold=70, sigma_threshold=30,
                              sigma=15, accounting="expected", per_query=False)
    summary = result.to_dict()
    assert summary["queries"] == 8080 and 0 < summary["answered"] < 8080
    assert summary["outputs"]["count"] == 200
