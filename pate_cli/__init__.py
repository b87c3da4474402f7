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
from .analysis import (
    AnalysisResult,
    OrderGridWarning,
    Round,
    analyze_individualized,
    analyze_rounds,
    analyze_votes,
    derive_parameters,
    sanitize_analysis,
)
from .errors import InputError
from .inputs import (
    PrivacyGroups,
    VoteSet,
    attach_labels,
    load_groups,
    load_predictions,
    load_student,
    load_votes,
)
from .mechanisms import SVTPATE, ConfidentGNMax, GNMax, InteractiveGNMax, LNMax, build_mechanism
from .orders import default_orders, parse_orders
from .sweep import run_sweep

__all__ = [
    "__version__", "analyze", "load_votes", "load_predictions", "VoteSet", "InputError",
    "AnalysisResult", "OrderGridWarning", "LNMax", "GNMax", "ConfidentGNMax",
    "InteractiveGNMax", "SVTPATE", "Round", "analyze_rounds", "sanitize_analysis",
    "analyze_individualized", "derive_parameters", "PrivacyGroups", "load_groups",
    "load_student", "run_sweep",
    "build_mechanism", "rdp_to_epsilon", "default_orders", "parse_orders", "log_q_gnmax",
    "rdp_gnmax", "rdp_gnmax_data_independent", "log_q_lnmax", "rdp_lnmax",
    "rdp_lnmax_data_independent", "log_pr_answered", "rdp_threshold",
    "rdp_threshold_data_independent", "analyze_votes",
]


MECHANISM_PARAMETERS = ("sigma", "threshold", "sigma_threshold", "laplace_scale", "confidence",
                        "svt_scale", "svt_cutoff", "svt_threshold", "target_epsilon")


def analyze(votes, mechanism="confident", *, labels=None, teachers=None, **options):
    """Analyse votes (a path, a ``VoteSet`` or a ``(queries, K)`` array).

    ``mechanism`` is a name (``lnmax``, ``gnmax``, ``confident``, ``interactive``, ``svt``;
    parameters such as ``sigma=40`` or ``confidence=0.9`` go in ``options``, unset ones
    default to the CLI's fractions of M) or a mechanism object. The other ``options`` are
    those of ``analyze_votes``: accounting, delta, orders, conversion, seed, queries,
    budget, student, query_indices, initial_rdp, chunk_size. Returns an
    ``AnalysisResult`` with ``.summary`` and ``.per_query``.
    """
    if isinstance(votes, VoteSet):
        vote_set = votes
    elif isinstance(votes, np.ndarray):
        vote_set = VoteSet(votes=votes, teachers=teachers or float(votes[0].sum()),
                           path=None, sha256=None)
    else:
        vote_set = load_votes(votes, teachers=teachers)
    if labels is not None:
        vote_set = attach_labels(vote_set, labels)
    chosen = {key: options.pop(key) for key in MECHANISM_PARAMETERS if key in options}
    if isinstance(mechanism, str):
        mechanism = build_mechanism(mechanism, teachers=teachers or vote_set.teachers,
                                    **chosen)
    elif chosen:
        raise TypeError(f"parameters {sorted(chosen)} apply to a mechanism given by name")
    return analyze_votes(vote_set.votes, mechanism, teachers=teachers or vote_set.teachers,
                         labels=vote_set.labels, source=vote_set, **options)
