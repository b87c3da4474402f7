"""Synthetic votes shared by test files in different layer folders."""

from __future__ import annotations

import numpy as np


def synthetic_votes(queries=600, classes=5, teachers=50, seed=3):
    """Votes with a spread of agreement, and true labels (the intended class)."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(classes, size=queries)
    agreement = rng.uniform(0.2, 0.95, size=queries)
    probabilities = np.full((queries, classes), 0.0) + ((1 - agreement) / classes)[:, None]
    probabilities[np.arange(queries), truth] += agreement
    votes = np.stack([rng.multinomial(teachers, p) for p in probabilities])
    return votes.astype(np.int64), truth
