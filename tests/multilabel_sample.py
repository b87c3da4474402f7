"""Three yes/no labels of the shipped MNIST sample's first 300 queries (the multi-label
tutorial's): each teacher's predicted digit, and the true digit, as bits (even, at least
5, one of 0/6/8/9), written as ``.npy`` files for tests to run pate-analyze on."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tests import SAMPLES


def _bits(digits: np.ndarray) -> np.ndarray:
    return np.stack([digits % 2 == 0, digits >= 5, np.isin(digits, [0, 6, 8, 9])],
                    -1).astype(np.int8)


def write_multilabel_sample(folder: Path, queries: int = 300) -> tuple[Path, Path]:
    """``(predictions, labels)`` paths in ``folder``: ``(queries, teachers, 3)`` and
    ``(queries, 3)`` 0/1 arrays."""
    predictions, labels = folder / "ml_pred.npy", folder / "ml_truth.npy"
    np.save(predictions, _bits(np.load(SAMPLES / "mnist_250_predictions.npy")[:queries]))
    np.save(labels, _bits(np.load(SAMPLES / "mnist_250_labels.npy")[:queries]))
    return predictions, labels
