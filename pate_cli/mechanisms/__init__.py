"""REPLAY: the only code that draws noise.

Frozen aggregators (LNMax, GNMax, Confident, Interactive, SVT), their replay, one
counter-based seeding scheme keyed by query index, and the weighted and participation
histograms of Individualized PATE.
"""

from .aggregators import (
    DEFAULT_FRACTIONS,
    MECHANISMS,
    SVTPATE,
    ConfidentGNMax,
    GNMax,
    InteractiveGNMax,
    LNMax,
    build_mechanism,
)
from .noise import (
    NOISE_BLOCK,
    STREAM_ANSWER,
    STREAM_PARTICIPATION,
    STREAM_SELECTION,
    STREAM_SVT_QUERY,
    STREAM_SVT_THRESHOLD,
    NoiseSource,
)
from .participation import (
    VanishingVotes,
    vanishing_participation,
    vanishing_votes,
    weighted_histogram,
)
from .protocol import OUTCOME_ABSTAIN, OUTCOME_NAMES, OUTCOME_STUDENT, OUTCOME_TEACHER, Decisions

__all__ = [
    "DEFAULT_FRACTIONS", "MECHANISMS", "NOISE_BLOCK", "OUTCOME_ABSTAIN", "OUTCOME_NAMES",
    "OUTCOME_STUDENT", "OUTCOME_TEACHER", "STREAM_ANSWER", "STREAM_PARTICIPATION",
    "STREAM_SELECTION", "STREAM_SVT_QUERY", "STREAM_SVT_THRESHOLD", "SVTPATE",
    "ConfidentGNMax", "Decisions", "GNMax", "InteractiveGNMax", "LNMax", "NoiseSource",
    "VanishingVotes", "build_mechanism", "vanishing_participation",
    "vanishing_votes", "weighted_histogram",
]
