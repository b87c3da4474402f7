"""pate_cli: exact, vectorised privacy accounting for PATE aggregators over saved votes.

The Python API the command line is built on::

    import pate_cli
    votes = pate_cli.load_votes("votes.npy", labels="labels.npy")
    result = pate_cli.analyze(votes, "confident", threshold=200, sigma_threshold=150,
                              sigma=40, accounting="expected")
    result.summary["epsilon"], result.per_query.head()
"""

from __future__ import annotations

import numpy as np

from ._version import __version__
from .accounting.conversion import rdp_to_epsilon
from .accounting.gnmax import log_q_gnmax, rdp_gnmax, rdp_gnmax_data_independent
from .accounting.laplace import log_q_lnmax, rdp_lnmax, rdp_lnmax_data_independent
from .accounting.threshold import log_pr_answered, rdp_threshold, rdp_threshold_data_independent
from .analysis import AnalysisResult, OrderGridWarning, analyze_votes
from .mechanisms import ConfidentGNMax, GNMax, LNMax, build_mechanism
from .orders import default_orders, parse_orders
from .votes import InputError, VoteSet, load_predictions, load_votes

__all__ = [
    "__version__", "analyze", "load_votes", "load_predictions", "VoteSet", "InputError",
    "AnalysisResult", "OrderGridWarning", "LNMax", "GNMax", "ConfidentGNMax",
    "build_mechanism", "rdp_to_epsilon", "default_orders", "parse_orders", "log_q_gnmax",
    "rdp_gnmax", "rdp_gnmax_data_independent", "log_q_lnmax", "rdp_lnmax",
    "rdp_lnmax_data_independent", "log_pr_answered", "rdp_threshold",
    "rdp_threshold_data_independent", "analyze_votes",
]


def analyze(votes, mechanism="confident", *, labels=None, teachers=None, sigma=None,
            threshold=None, sigma_threshold=None, laplace_scale=None, **options):
    """Analyse votes (a path, a ``VoteSet`` or a ``(queries, K)`` array).

    ``mechanism`` is a name (``lnmax``, ``gnmax``, ``confident``; unset parameters default
    to the CLI's fractions of M) or a mechanism object. ``options`` are those of
    ``analyze_votes``: accounting, delta, orders, conversion, seed, queries, budget,
    chunk_size. Returns an ``AnalysisResult`` with ``.summary`` and ``.per_query``.
    """
    if isinstance(votes, VoteSet):
        vote_set = votes
    elif isinstance(votes, np.ndarray):
        vote_set = VoteSet(votes=votes, teachers=teachers or float(votes[0].sum()),
                           path=None, sha256=None)
    else:
        vote_set = load_votes(votes, teachers=teachers)
    if labels is not None:
        from .votes import attach_labels

        vote_set = attach_labels(vote_set, labels)
    if isinstance(mechanism, str):
        mechanism = build_mechanism(mechanism, teachers=teachers or vote_set.teachers,
                                    sigma=sigma, threshold=threshold,
                                    sigma_threshold=sigma_threshold,
                                    laplace_scale=laplace_scale)
    return analyze_votes(vote_set.votes, mechanism, teachers=teachers or vote_set.teachers,
                         labels=vote_set.labels, source=vote_set, **options)
