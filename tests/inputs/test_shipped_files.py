"""Invariants of the shipped sample votes, and the paper-reproduction script."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import pate_cli
from tests import ROOT, SAMPLES

# name, classes, teachers, minimal plurality accuracy (README's figures, rounded down)
SAMPLE_SETS = [("mnist_250", 10, 250, 0.91), ("adult_250", 2, 250, 0.84),
               ("letter_100", 26, 100, 0.81)]


@pytest.mark.parametrize(("name", "classes", "teachers", "accuracy"), SAMPLE_SETS)
def test_sample_votes_are_valid_histograms(name, classes, teachers, accuracy):
    votes = np.load(SAMPLES / f"{name}_votes.npy", allow_pickle=False)
    labels = np.load(SAMPLES / f"{name}_labels.npy", allow_pickle=False)
    assert votes.ndim == 2 and votes.shape[1] == classes
    assert votes.dtype.kind == "u" and labels.dtype.kind == "u"
    assert np.all(votes.sum(axis=1, dtype=np.int64) == teachers)
    assert labels.shape == (votes.shape[0],)
    assert labels.min() >= 0 and labels.max() < classes
    assert np.mean(np.argmax(votes, axis=1) == labels) >= accuracy
    vote_set = pate_cli.load_votes(SAMPLES / f"{name}_votes.npy",
                                   labels=SAMPLES / f"{name}_labels.npy")
    assert vote_set.teachers == teachers


def test_mnist_predictions_match_the_histogram():
    predictions = SAMPLES / "mnist_250_predictions.npy"
    from_predictions = pate_cli.load_predictions(predictions, classes=10)
    votes = np.load(SAMPLES / "mnist_250_votes.npy")
    np.testing.assert_array_equal(from_predictions.votes, votes)
    assert from_predictions.teachers == 250


def _load_script():
    spec = importlib.util.spec_from_file_location("reproduce_paper",
                                                  ROOT / "scripts" / "reproduce_paper.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_reproduce_paper_table(paper_votes):
    rows = {row["dataset"]: row for row in _load_script().reproduce(paper_votes, replays=3)}
    mnist = rows["MNIST"]
    assert round(mnist["expected_answered"], 1) == 282.7
    assert round(mnist["expected_epsilon"], 2) == 2.00 and mnist["expected_order"] == 14
    # Realised runs land in the region of the paper's Table 1 (its own runs were replays).
    for name in ("MNIST", "SVHN", "Adult"):
        row = rows[name]
        assert abs(row["replay_answered_mean"] / row["paper_answered"] - 1) < 0.06
        assert abs(row["replay_epsilon_mean"] / row["paper_epsilon"] - 1) < 0.15
        assert row["expected_epsilon"] < row["epsilon_data_independent"]


def test_reproduce_paper_without_votes_exits_2(tmp_path, capsys):
    assert _load_script().main(["--votes", str(tmp_path / "absent")]) == 2
    assert "no such directory" in capsys.readouterr().err


def test_reproduce_paper_with_a_missing_file_or_no_replays_exits_2(tmp_path, capsys):
    """A folder without the files gave a traceback (exit 1); --replays 0 ran to NaN."""
    script = _load_script()
    assert script.main(["--votes", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("Error: ") and err.count("\n") == 1 and "mnist_250" in err
    with pytest.raises(SystemExit) as stopped:
        script.main(["--votes", str(tmp_path), "--replays", "0"])
    assert stopped.value.code == 2 and "at least 1" in capsys.readouterr().err


def test_companion_files_load_and_fit_the_mnist_votes():
    from pate_cli.inputs import load_groups, load_rounds, load_student, load_teacher_groups

    student = load_student(SAMPLES / "mnist_250_student.npy", queries=9000, classes=10)
    assert np.allclose(student.sum(axis=1), 1.0, atol=1e-6)
    groups = load_groups(SAMPLES / "mnist_250_groups.csv")
    assert groups.names == ("high", "average", "low")
    assert groups.budgets.tolist() == [1.0, 2.0, 3.0]
    assigned = load_teacher_groups(SAMPLES / "mnist_250_teacher_groups.csv", groups=groups,
                                   teachers=250)
    assert np.bincount(assigned).tolist() == [85, 108, 57]
    rounds = load_rounds(SAMPLES / "mnist_250_rounds.csv")
    assert [r["mechanism"] for r in rounds] == ["confident", "interactive"]
    assert rounds[1]["rows"][0] == 1000 and rounds[1]["rows"][-1] == 8999
