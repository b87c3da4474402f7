"""The bare numpy pass of issue 14's targets: Confident-GNMax expected accounting written
straight from math:gnmax over whole arrays (every query's full curve, no distinct-statistic
sharing, no chunking), as a competent numpy user would write it. ``run_benchmarks.py``
times it beside ``pate_cli.analyze`` on the Glyph-shaped file (case ``glyph-numpy``)."""

from __future__ import annotations

import math

import numpy as np
from scipy.special import log_ndtr, logsumexp


def _log1mexp(x: np.ndarray) -> np.ndarray:
    """``log(1 - exp(x))`` for ``x <= 0`` (math:gnmax)."""
    with np.errstate(divide="ignore"):
        return np.where(x < -1.0, np.log1p(-np.exp(x)), np.log(-np.expm1(x)))


def _rdp_gnmax(log_q: np.ndarray, sigma: float, orders: np.ndarray) -> np.ndarray:
    """Theorem 6 with the data-independent fallback, ``(queries, orders)`` (math:gnmax)."""
    independent = orders / sigma**2
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        mu2 = sigma * np.sqrt(-log_q)
        mu1 = mu2 + 1.0
        e1, e2 = mu1 / sigma**2, mu2 / sigma**2
        applies = ((mu2 > 1.0) & (-log_q > e2) & np.isfinite(log_q) & (
            log_q <= (mu2 - 1.0) * e2 - mu2 * (np.log1p(1.0 / (mu1 - 1.0))
                                               + np.log1p(1.0 / (mu2 - 1.0)))))
        log_1mq = _log1mexp(log_q)
        steps = orders - 1.0
        log_a = (log_1mq - _log1mexp((log_q + e2) * (1.0 - 1.0 / mu2)))[:, None] * steps
        log_b = (e1 - log_q / (mu1 - 1.0))[:, None] * steps
        dependent = np.logaddexp(log_1mq[:, None] + log_a, log_q[:, None] + log_b) / steps
        curve = np.where(applies[:, None] & (mu1[:, None] > orders),
                         np.minimum(dependent, independent), independent)
    return np.where(np.isneginf(log_q)[:, None], 0.0, curve)


def numpy_pass(votes: np.ndarray, *, threshold: float, sigma_threshold: float,
               sigma: float, orders: np.ndarray, delta: float) -> tuple[float, float]:
    """Expected-accounting epsilon and order of Confident-GNMax over ``votes``
    (math:gnmax, math:threshold, math:conversion and math:costs), classic conversion."""
    votes = np.asarray(votes, dtype=np.float64)
    queries, classes = votes.shape
    top = np.argmax(votes, axis=1)
    gaps = votes[np.arange(queries), top][:, None] - votes
    terms = log_ndtr(-gaps / (math.sqrt(2.0) * sigma))
    terms[np.arange(queries), top] = -np.inf
    log_q = np.minimum(logsumexp(terms, axis=1), math.log(1.0 - 1.0 / classes))
    log_pr = log_ndtr((np.rint(votes.max(axis=1)) - threshold) / sigma_threshold)
    log_q_selection = np.minimum(log_pr, _log1mexp(log_pr))
    total = (_rdp_gnmax(log_q_selection, math.sqrt(2.0) * sigma_threshold, orders).sum(axis=0)
             + (np.exp(log_pr)[:, None] * _rdp_gnmax(log_q, sigma, orders)).sum(axis=0))
    candidates = total + math.log(1.0 / delta) / (orders - 1.0)
    best = int(np.argmin(candidates))
    return float(candidates[best]), float(orders[best])
