"""A 0/1 integer array given as decisions is read as an answered mask with a note, whatever
the votes' classes: it may be the labels of a run that answered every query with classes
0 and 1 only, which read as a mask charge fewer answers (with 10 classes it was silent)."""

from __future__ import annotations

import numpy as np
import pytest

import pate_cli
from pate_cli.errors import PateWarning
from tests import SAMPLES


def test_labels_of_classes_0_and_1_given_as_decisions_are_noted():
    votes = np.load(SAMPLES / "mnist_250_votes.npy")
    rows = np.flatnonzero((votes.argmax(1) <= 1) & (votes.max(1) >= 249))[:40]
    options = dict(query_indices=rows, threshold=150, sigma_threshold=20)
    released = pate_cli.label(votes, **options)
    assert set(released.label.tolist()) <= {0, 1} and np.all(released.label >= 0)
    with pytest.warns(PateWarning, match=r"read as an answered mask \(\d+ of 40 queries "
                                         r"answered\); they may be the released labels"):
        misread = pate_cli.analyze(votes, decisions=released.label, **options)
    assert misread.answered_total < 40  # what the note warns of
    exact = pate_cli.analyze(votes, decisions=released, **options)
    assert exact.answered_total == 40 and exact.epsilon > misread.epsilon
