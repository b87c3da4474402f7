"""Smooth-sensitivity sanitisation of the data-dependent epsilon (GNSS; math:smooth, after
Papernot et al. 2018, Appendix B), at one fixed Rényi order. Bottom up: ``bounds.py``
(scalar functions, Algorithm 3, the threshold table, C5, C6), ``walks.py`` (local
sensitivity at distance ``d``, Algorithms 4-5), ``release.py`` (the chunked accumulator and
the beta / sigma_ss search). No I/O; import from this package, not from its modules."""

from .bounds import (
    GNMaxSmoothConstants,
    ThresholdSmoothConstants,
    beta_grid,
    check_conditions,
    dep_gnmax,
    local_sensitivity_at,
    log_b_lower,
    log_b_upper,
    log_q0_gnmax,
    rdp_gnss,
    rdp_ss,
    smooth_sensitivity,
)
from .release import (
    DEFAULT_CHUNK,
    ChunkValues,
    Release,
    ReleaseSetting,
    SmoothSensitivityAccumulator,
    SmoothSensitivityResult,
    sanitize_confident,
    sanitize_gnmax,
)
from .walks import local_sensitivity_gnmax, local_sensitivity_threshold

__all__ = [
    "DEFAULT_CHUNK",
    "ChunkValues",
    "GNMaxSmoothConstants",
    "Release",
    "ReleaseSetting",
    "SmoothSensitivityAccumulator",
    "SmoothSensitivityResult",
    "ThresholdSmoothConstants",
    "beta_grid",
    "check_conditions",
    "dep_gnmax",
    "local_sensitivity_at",
    "local_sensitivity_gnmax",
    "local_sensitivity_threshold",
    "log_b_lower",
    "log_b_upper",
    "log_q0_gnmax",
    "rdp_gnss",
    "rdp_ss",
    "sanitize_confident",
    "sanitize_gnmax",
    "smooth_sensitivity",
]
