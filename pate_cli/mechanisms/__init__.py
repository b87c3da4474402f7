"""REPLAY: the only code that draws noise.

Frozen aggregators and their replay, one counter-based seeding scheme keyed by query index,
and Individualized PATE's weighted and participation histograms."""

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:  # the lazy names below, for type checkers and readers
    from .aggregators import (
        DEFAULT_FRACTIONS,
        MECHANISMS,
        ConfidentGNMax,
        GNMax,
        InteractiveGNMax,
        LNMax,
        build_mechanism,
    )
    from .exponential import ConfidentExponential, Exponential
    from .noise import (
        NOISE_BLOCK,
        STREAM_ANSWER,
        STREAM_GUMBEL,
        STREAM_PARTICIPATION,
        STREAM_SELECTION,
        STREAM_SVT_QUERY,
        STREAM_SVT_THRESHOLD,
        NoiseSource,
        SharedBlocks,
        release_draw,
    )
    from .participation import (
        HistogramRows,
        VanishingVotes,
        vanishing_participation,
        vanishing_votes,
        weighted_histogram,
    )
    from .protocol import Mechanism
    from .svt import SVTPATE, distance_to_instability

__all__ = [
    "DEFAULT_FRACTIONS", "MECHANISMS", "NOISE_BLOCK", "STREAM_ANSWER", "STREAM_PARTICIPATION",
    "STREAM_SELECTION", "STREAM_SVT_QUERY", "STREAM_SVT_THRESHOLD", "SVTPATE",
    "ConfidentExponential", "ConfidentGNMax", "Exponential", "STREAM_GUMBEL",
    "GNMax", "HistogramRows", "InteractiveGNMax", "LNMax", "NoiseSource", "SharedBlocks",
    "build_mechanism", "distance_to_instability", "release_draw", "Mechanism", "VanishingVotes",
    "vanishing_participation", "vanishing_votes", "weighted_histogram",
]

__getattr__, __dir__ = lazy_exports(__name__, {
    **dict.fromkeys(["DEFAULT_FRACTIONS", "MECHANISMS", "ConfidentGNMax", "GNMax",
        "InteractiveGNMax", "LNMax", "build_mechanism"], ".aggregators"),
    **dict.fromkeys(["SVTPATE", "distance_to_instability"], ".svt"),
    **dict.fromkeys(["ConfidentExponential", "Exponential"], ".exponential"),
    **dict.fromkeys(["NOISE_BLOCK", "STREAM_ANSWER", "STREAM_PARTICIPATION", "STREAM_SELECTION",
        "STREAM_GUMBEL", "STREAM_SVT_QUERY", "STREAM_SVT_THRESHOLD", "NoiseSource",
        "SharedBlocks", "release_draw"], ".noise"),
    **dict.fromkeys(["HistogramRows", "VanishingVotes", "vanishing_participation",
        "vanishing_votes", "weighted_histogram"], ".participation"),
    "Mechanism": ".protocol",
})
