"""Smooth-sensitivity sanitisation of the data-dependent epsilon (GNSS).

math:smooth (the authority), after Appendix B of Papernot et al. 2018, "Scalable
Private Learning with PATE". Everything is at one fixed Rényi order ``alpha``.

Pieces, bottom up:

* ``bounds.py``: scalar functions of ``(sigma, order, K)``: ``dep`` (math:gnmax without its
  validity checks), ``log q0`` (where ``dep`` meets ``alpha / sigma^2``), ``log q1 = log
  B_L(q0)`` and the plateau ``LS(q1)``, cached once in :class:`GNMaxSmoothConstants`; the
  local sensitivity at ``q`` (Algorithm 3); the threshold step at distance ``d`` from a
  table ``r[v]``, ``v = 0..M``, computed once per (T, sigma1, order, M) in
  :class:`ThresholdSmoothConstants`; smooth sensitivity, the beta grid, the release's RDP
  and :func:`check_conditions` (C5 and C6);
* ``walks.py``: local sensitivity at distance ``d`` (Algorithms 4-5, the "left" and
  "right" walks), vectorised over queries *and* steps: the state of a walk after ``d``
  steps has a closed form (right: ``d`` votes moved from the largest class to the
  runner-up; left: the largest class gains ``d`` votes drained from the top of the rest,
  levelled like water), so a chunk of queries' walks is array arithmetic; sparse (token)
  rows walk over their stored counts and one block of zero-vote classes (math:sparse);
* ``release.py``: :class:`SmoothSensitivityAccumulator`, which adds chunks of queries
  (bounded memory) and finishes with the beta / sigma_ss search and the report, and
  :func:`sanitize_confident` and :func:`sanitize_gnmax`, one-call front ends taking a
  :class:`ReleaseSetting`'s fields as keywords.

No I/O here: the caller (``analysis`` / the CLI) reads votes and prints results. Import
from this package, not from its modules: the names below are its interface.
"""

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
