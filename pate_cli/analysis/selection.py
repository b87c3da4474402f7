"""What Confident-GNMax settings select, per bin of plurality counts (the 2018 paper's
Figure 5, left): expected answered counts and the answer step's RDP at one order.
Vectorised over queries; ``pate-plot selection`` draws it."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from ..accounting.gnmax import log_q_gnmax, rdp_gnmax
from ..accounting.threshold import log_pr_answered

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
    """
    import pandas as pd
    votes = np.asarray(votes, dtype=np.float64)
    plurality = votes.max(axis=1)
    low = math.floor(min(plurality.min(), teachers)) if plurality.size else 0
    width = max(1, math.ceil((teachers - low + 1) / bins))
    count = math.ceil((teachers - low + 1) / width)
    edges = teachers + 0.5 - width * np.arange(count, -1, -1, dtype=np.float64)
    which = np.clip(np.searchsorted(edges, plurality, side="right") - 1, 0, count - 1)
    table = {"left": edges[:-1], "right": edges[1:], "center": (edges[:-1] + edges[1:]) / 2,
             "all": np.bincount(which, minlength=count).astype(np.float64)}
    for number, (threshold, sigma_threshold) in enumerate(params):
        pr = np.exp(log_pr_answered(plurality, threshold=threshold,
                                    sigma_threshold=sigma_threshold))
        table[f"answered_{number}"] = np.bincount(which, weights=pr, minlength=count)
    cost = rdp_gnmax(log_q_gnmax(votes, sigma=sigma), sigma=sigma, orders=[order])[:, 0]
    with np.errstate(invalid="ignore", divide="ignore"):
        table["cost"] = np.bincount(which, weights=cost, minlength=count) / table["all"]
    return pd.DataFrame(table)
