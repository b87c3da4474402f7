"""What Confident-GNMax settings select, per bin of plurality counts (the 2018 paper's
Figure 5, left): expected answered counts and the answer step's RDP at one order.
Vectorised over queries; ``pate-plot selection`` draws it."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from ..accounting.gnmax import log_q_gnmax, rdp_gnmax
from ..accounting.threshold import log_pr_answered
from ..sparse_rows import as_float_rows, row_width
from ..work_sizes import READ_VALUES

if TYPE_CHECKING:
    import pandas as pd


def selection_bins(votes, *, teachers: float, params, sigma: float, order: float,
                   bins: int = 20) -> pd.DataFrame:
    """Per-bin data of the 2018 paper's Figure 5 (left), vectorised over queries.

    Bins of the plurality count ``max_j n_j`` (equal integer widths, the last ending at M).
    Columns: ``left``, ``right``, ``center``, ``all`` (queries in the bin), one
    ``answered_<i>`` per ``(T, sigma1)`` in ``params`` (the expected number answered, the
    sum of ``pr_answered`` over the bin's queries), and ``cost``: the mean over the bin's
    queries of the data-dependent RDP of the answer step (GNMax with ``sigma``) at
    ``order``, i.e. what answering one query of the bin costs (NaN for an empty bin).
    ``votes`` (an array or a memory map) is read in chunks of at most
    ``work_sizes.READ_VALUES`` values (so a file of any length or width, 5 rows over
    5,000,000 classes, holds one chunk), twice (the lowest plurality count, then the bins).
    """
    import pandas as pd
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
    table = {"left": edges[:-1], "right": edges[1:], "center": (edges[:-1] + edges[1:]) / 2,
             "all": every}
    for number in range(len(params)):
        table[f"answered_{number}"] = answered[number]
    with np.errstate(invalid="ignore", divide="ignore"):
        table["cost"] = cost_sum / every
    return pd.DataFrame(table)
