"""Sensitivities and data-independent RDP of multi-label votes (Dziedzic et al. 2023,
"Private Multi-Winner Voting"; math:independent with the sensitivity each variant declares).

A query has L binary labels; one teacher (the privacy unit; neighbours replace one
teacher's vote vector) gives a 0/1 vector ``v`` of length L.

- ``binary``: each label is a two-class query (counts ``(M - s_l, s_l)``, GNMax or
  Confident per label). A teacher may flip all L labels: each label's 2-vector moves by
  sqrt(2), the query's 2L-vector by ``sqrt(2 L)``, so the data-independent Gaussian RDP
  is ``alpha * 2L / (2 sigma^2) = L alpha / sigma^2``, the sum of the L per-label curves.
  The data-dependent per-label curves add too: the L mechanisms draw independent noise on
  the same neighbouring pair of datasets and each sees neighbouring histograms, and RDP
  of independent mechanisms composes additively whatever they share.
- ``tau:TAU``: each teacher's vector is clipped to L2 norm tau (scaled by
  ``min(1, tau / sqrt(k))`` for k positive labels) and the clipped sums ``s`` stand for the
  positive counts: each label releases the noisy argmax of ``(M - s_l, s_l)`` with
  ``N(0, sigma^2)`` on both counts (the reference code's rule). Replacing a teacher moves
  ``s`` by ``d = c(v') - c(v)``; both clipped vectors are non-negative, so
  ``|d|^2 = |c(v)|^2 + |c(v')|^2 - 2 c(v).c(v') <= 2 tau^2``, reached (largest) by two
  disjoint label sets: ``Delta_s^2 = max over a + b <= L of min(a, tau^2) + min(b, tau^2)``
  (``= 2 tau^2`` once ``2 ceil(tau^2) <= L``, ``= L`` once ``tau^2 >= L``: no clipping,
  the binary variant). The released 2L-vector moves by ``sqrt(2) |d|``:
  ``rdp = alpha * 2 Delta_s^2 / (2 sigma^2) = alpha Delta_s^2 / sigma^2``.
- ``powerset``: the label set is one class among ``2^L``; a teacher moves one vote, L2
  sensitivity sqrt(2), ``rdp = alpha / sigma^2`` (math:independent) and math:gnmax with the
  zero block of math:sparse (``log_q_gnmax`` of a ``VoteRows``) for the data-dependent bound.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..errors import OptionError
from ..orders import validate_orders
from .validators import check_positive, check_positive_integer, check_std

VARIANTS = ("binary", "tau", "powerset")


def parse_variant(text: str) -> tuple[str, float | None]:
    """``--multilabel`` text -> ``(variant, tau)``; ``OptionError`` for a bad one."""
    name, _, value = str(text).strip().lower().partition(":")
    if name in ("binary", "powerset") and not value:
        return name, None
    if name == "tau":
        try:
            tau = float(value)
        except ValueError:
            tau = float("nan")
        if np.isfinite(tau) and tau > 0:
            return name, tau
        raise OptionError(f"--multilabel tau:TAU needs a positive number TAU, got {text!r}")
    raise OptionError(f"--multilabel must be binary, tau:TAU or powerset, got {text!r}")


def tau_sensitivity_squared(tau: float, labels: int) -> float:
    """``Delta_s^2``, the largest squared L2 distance of two teachers' 0/1 vectors clipped to
    norm ``tau`` (module docstring): ``max over a + b <= L of min(a, tau^2) + min(b, tau^2)``."""
    check_positive(tau, "tau")
    check_positive_integer(labels, "labels")
    sizes = np.arange(labels + 1, dtype=np.float64)
    square = tau * tau
    return float(np.max(np.minimum(sizes, square) + np.minimum(labels - sizes, square)))


def sensitivity_squared(variant: str, *, labels: int, tau: float | None = None) -> float:
    """The squared L2 sensitivity of one query's released vector (module docstring):
    ``2 L`` (binary: L two-count histograms), ``2 Delta_s^2`` (tau), 2 (powerset)."""
    check_positive_integer(labels, "labels")
    if variant == "binary":
        return 2.0 * labels
    if variant == "tau":
        if tau is None:
            raise ValueError("the tau variant needs tau")
        return 2.0 * tau_sensitivity_squared(tau, labels)
    if variant == "powerset":
        return 2.0
    raise ValueError(f"unknown multi-label variant {variant!r} (choose from "
                     f"{', '.join(VARIANTS)})")


def rdp_multilabel_data_independent(variant: str, *, sigma: float, orders: ArrayLike,
                                    labels: int, tau: float | None = None) -> np.ndarray:
    """A query's data-independent Gaussian RDP, ``alpha Delta^2 / (2 sigma^2)`` (
    math:independent) with ``Delta^2 = sensitivity_squared(...)``."""
    orders = validate_orders(orders)
    check_std(sigma, "sigma")
    return orders * (sensitivity_squared(variant, labels=labels, tau=tau)
                     / (2.0 * sigma * sigma))

