"""What Confident-GNMax settings select per bin of plurality counts (Papernot et al. 2018,
Figure 5, left; math:threshold, math:gnmax), for ``pate-plot selection`` and the report."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..vote_rows import as_float_rows, row_width
from ..work_sizes import READ_VALUES
from .gnmax import log_q_gnmax, rdp_gnmax
from .threshold import log_pr_answered


@dataclass(frozen=True)
class SelectionBins:
    """Per-bin data of the 2018 paper's Figure 5 (left): ``edges`` (bins + 1, increasing)
    of the plurality count, ``queries`` per bin, ``answered[i]`` the expected number the
    ``i``-th ``(T, sigma1)`` answers (sum of ``pr_answered``), ``cost`` the bin's mean
    data-dependent RDP of the answer step (NaN if empty)."""

    edges: np.ndarray
    queries: np.ndarray
    answered: np.ndarray
    cost: np.ndarray

    @property
    def left(self) -> np.ndarray:
        return self.edges[:-1]

    @property
    def right(self) -> np.ndarray:
        return self.edges[1:]

    @property
    def center(self) -> np.ndarray:
        return (self.edges[:-1] + self.edges[1:]) / 2


def selection_bins(votes, *, teachers: float, params, sigma: float, order: float,
                   bins: int = 20) -> SelectionBins:
    """The :class:`SelectionBins` of ``votes`` (queries x classes, read twice in chunks) for
    the ``(T, sigma1)`` pairs ``params`` (math:threshold) and GNMax with ``sigma`` at
    ``order`` (math:gnmax): about ``bins`` equal integer-width bins of ``max_j n_j`` from the
    lowest plurality count to M = ``teachers``, edges at half-integers."""
    queries = votes.shape[0]
    step = max(1, READ_VALUES // max(1, row_width(votes)))

    def chunks():
        for start in range(0, queries, step):
            yield as_float_rows(votes[start:start + step])

    lowest = min((float(rows.max(axis=1).min()) for rows in chunks()), default=None)
    low = math.floor(min(lowest, teachers)) if lowest is not None else 0
    width = max(1, math.ceil((teachers - low + 1) / bins))
    count = math.ceil((teachers - low + 1) / width)
    edges = teachers + 0.5 - width * np.arange(count, -1, -1, dtype=np.float64)
    every = np.zeros(count)
    answered = np.zeros((len(params), count))
    cost_sum = np.zeros(count)
    for rows in chunks():
        plurality = rows.max(axis=1)
        which = np.clip(np.searchsorted(edges, plurality, side="right") - 1, 0, count - 1)
        every += np.bincount(which, minlength=count)
        for number, (threshold, sigma_threshold) in enumerate(params):
            pr = np.exp(log_pr_answered(plurality, threshold=threshold,
                                        sigma_threshold=sigma_threshold))
            answered[number] += np.bincount(which, weights=pr, minlength=count)
        cost = rdp_gnmax(log_q_gnmax(rows, sigma=sigma), sigma=sigma, orders=[order])[:, 0]
        cost_sum += np.bincount(which, weights=cost, minlength=count)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_cost = cost_sum / every
    return SelectionBins(edges=edges, queries=every, answered=answered, cost=mean_cost)
