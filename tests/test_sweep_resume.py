"""Sweep rows record what made their numbers: ``conversion``, ``orders`` (compact
canonical text), ``labels_sha256`` and ``student_sha256``, besides the vote file's
``sha256`` and the ``version``.
"""

from __future__ import annotations

import numpy as np
import pytest
from cli_runner import run_main
from hypothesis import given, settings
from hypothesis import strategies as st

import pate_cli.sweep.points as sweep_module
from pate_cli.cli.sweep import main
from pate_cli.orders import default_orders, parse_grid
from pate_cli.sweep.columns import KEY_COLUMNS, SWEEP_COLUMNS
from pate_cli.sweep.table import read_sweep_rows

NEW_COLUMNS = ["conversion", "orders", "labels_sha256", "student_sha256"]
# 4 points: gnmax and confident, each at sigma 4 and 8.
GRID = ["-m", "gnmax", "-m", "confident", "--sigma", "4,8", "-T", "30", "--sigma-threshold",
        "20", "-w", "1", "--no-progress"]


@pytest.fixture
def cli(capsys):
    return lambda *args: run_main(main, args, capsys)


def synthetic_votes(queries=300, classes=5, teachers=50, seed=3):
    """Votes with a spread of agreement, and true labels (the intended class)."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(classes, size=queries)
    agreement = rng.uniform(0.2, 0.95, size=queries)
    probabilities = np.full((queries, classes), 0.0) + ((1 - agreement) / classes)[:, None]
    probabilities[np.arange(queries), truth] += agreement
    votes = np.stack([rng.multinomial(teachers, p) for p in probabilities])
    return votes.astype(np.int64), truth


def student_probabilities(queries, classes, seed):
    rng = np.random.default_rng(seed)
    return rng.dirichlet(np.ones(classes), size=queries)


@pytest.fixture
def files(tmp_path):
    votes, truth = synthetic_votes()
    np.save(tmp_path / "votes.npy", votes)
    np.save(tmp_path / "labels.npy", truth)
    np.save(tmp_path / "student.npy", student_probabilities(*votes.shape, seed=1))
    return tmp_path / "votes.npy", tmp_path / "labels.npy", tmp_path / "student.npy"


@pytest.fixture
def calls(monkeypatch):
    """The points the sweep computes (not reuses)."""
    seen = []
    real = sweep_module.run_point
    monkeypatch.setattr(sweep_module, "run_point", lambda point: seen.append(point) or real(point))
    return seen


def fresh(cli, tmp_path, *args):
    """The table a run without --resume writes for ``args``."""
    path = tmp_path / "fresh.csv"
    path.unlink(missing_ok=True)
    result = cli(*args, "-o", path, "-q")
    assert result.code == 0, result.err
    return path.read_bytes()


# --- the new columns ---------------------------------------------------------------------------

def test_rows_record_conversion_orders_and_input_digests(cli, files, tmp_path):
    import hashlib

    votes, labels, _ = files
    out = tmp_path / "out.csv"
    assert cli(votes, *GRID, "--labels", labels, "--orders", "2:10:2,20", "--conversion",
               "improved", "-o", out, "-q").code == 0
    header = out.read_text().splitlines()[0].split(",")
    assert header == list(SWEEP_COLUMNS) and header[-4:] == NEW_COLUMNS
    assert set(KEY_COLUMNS) <= set(SWEEP_COLUMNS)
    for row in read_sweep_rows(str(out)):
        assert row["conversion"] == "improved" and row["orders"] == "2:10:2,20"
        assert row["labels_sha256"] == hashlib.sha256(labels.read_bytes()).hexdigest()
        assert row["student_sha256"] is None
        assert row["sha256"] == hashlib.sha256(votes.read_bytes()).hexdigest()


def test_orders_text_is_canonical_and_reads_back_exactly():
    from pate_cli.sweep.points import orders_text

    assert orders_text(None) == "default"
    assert orders_text(tuple(default_orders())) == "default"
    assert orders_text((2.0, 3.0, 4.0, 5.0)) == "2:5:1"
    assert orders_text((2.0, 3.0)) == "2,3"
    assert orders_text((1.5, 2.0, 2.5, 10.0, 20.0)) == "1.5:2.5:0.5,10,20"
    assert orders_text((32.0,)) == "32"
    assert orders_text(parse_grid("1.1:1.9:0.1")) == "1.1:1.9:0.1"
    assert orders_text(parse_grid("2:64:1,100:500:100")) == "2:64:1,100:500:100"


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.integers(2, 300).map(float),
                          st.floats(1.0001, 1000, allow_nan=False).map(lambda x: round(x, 3))),
                min_size=1, max_size=30, unique=True))
def test_orders_text_reads_back_to_the_same_orders(orders):
    from pate_cli.sweep.points import orders_text

    text = orders_text(tuple(orders))
    assert parse_grid(text) == tuple(orders)
    assert orders_text(parse_grid(text)) == text
