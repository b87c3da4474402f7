"""The statistics of an audit: an empirical lower bound on one query's epsilon (math:audit),
``log((P(S) - delta) / P'(S))`` with Clopper-Pearson bounds on an event ``S`` chosen on one
half of the draws and measured on the other. Outcome ``0`` is no answer, ``j + 1`` label ``j``;
trials of ``k`` identical queries are *tallies* ``(outcomes, k + 1)``: ``tallies[o, c]`` trials
had exactly ``c`` outputs ``o``. Pure math (docs/explanation/audit.md#audit-statistics)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from fractions import Fraction

import numpy as np

from ..numerics import ROUNDING_MARGIN, ratio_up
from .pld import (
    gaussian_exact_epsilon,
    gaussian_mu,
    laplace_pld_epsilon,
    pure_composed_epsilon,
)
from .risk import TRUSTED_DELTA

# The mechanisms whose one-query claim this module states (math:audit).
CLAIMED = ("lnmax", "gnmax", "confident", "exponential", "confident-exponential")


@dataclass(frozen=True)
class Event:
    """A trial's event: at least ``cut`` (``above``) or at most ``cut`` of its outputs are
    in ``outcomes``, more likely under the first histogram (``forward``) or the second. One
    query's: "the output is in ``outcomes``"; ``k`` queries': one outcome and a cut."""

    outcomes: tuple[int, ...] | np.ndarray  # (a candidate union: a view of the ranking)
    forward: bool
    cut: int = 1
    above: bool = True

    @property
    def labels(self) -> list[int]:
        """The labels of the event (-1 for no answer), in increasing order."""
        return sorted(index - 1 for index in self.outcomes)

    def hits(self, tallies: np.ndarray) -> int:
        """Trials of ``tallies`` in the event (only one-query events have several, exclusive,
        outcomes)."""
        index = np.asarray(self.outcomes, dtype=np.intp)
        if self.above:
            return int(tallies[index, self.cut:].sum())
        return int(tallies[index, :self.cut + 1].sum())


@dataclass(frozen=True)
class Measurement:
    """The event's counts on the measuring halves: ``hits``/``other_hits`` of ``of`` draws on its
    favoured/other side, their Clopper-Pearson ``p_lower``/``q_upper`` and ``epsilon_lower``."""

    hits: int
    other_hits: int
    of: int
    p_lower: float
    q_upper: float
    epsilon_lower: float


def clopper_pearson(successes, trials, *, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """One-sided Clopper-Pearson bounds on a binomial proportion, each at ``confidence``.

    Args:
      successes: counts ``k`` (an array or a number), ``0 <= k <= trials``.
      trials: the number of draws ``n`` (>= 1).
      confidence: the confidence of each bound, in (0, 1).

    Returns:
      ``(lower, upper)``: ``lower = Beta^-1(1 - confidence; k, n - k + 1)`` (0 when k = 0)
      and ``upper = Beta^-1(confidence; k + 1, n - k)`` (1 when k = n). These are the ends
      of the exact two-sided interval at confidence ``2 confidence - 1`` (SciPy's
      ``binomtest(k, n).proportion_ci(method="exact")``), moved outwards by
      ``ROUNDING_MARGIN`` relative over the quantile's rounding.

    Raises:
      ValueError: ``trials`` below 1 or ``confidence`` outside (0, 1).

    References:
      Clopper and Pearson 1934, "The use of confidence or fiducial limits illustrated in the
      case of the binomial", Biometrika 26(4).
    """
    from scipy.stats import beta

    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence!r}")
    if trials < 1:
        raise ValueError(f"trials must be at least 1, got {trials!r}")
    k = np.asarray(successes, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        lower = np.where(k > 0, beta.ppf(1.0 - confidence, np.maximum(k, 1.0),
                                         trials - k + 1.0), 0.0)
        upper = np.where(k < trials, beta.ppf(confidence, k + 1.0,
                                              np.maximum(trials - k, 1.0)), 1.0)
    return (lower * (1.0 - ROUNDING_MARGIN),
            np.minimum(upper * (1.0 + ROUNDING_MARGIN), 1.0))


def epsilon_from_bounds(p_lower, q_upper, *, delta: float) -> np.ndarray:
    """``max(0, log((p_lower - delta) / q_upper))``: the epsilon an event with
    ``P(S) >= p_lower`` and ``P'(S) <= q_upper`` forces at ``delta`` (0 where it forces
    none), a lower bound: lowered by ``ROUNDING_MARGIN`` (relative, and a few ulps of the
    log's argument) over its floats' rounding."""
    p = np.asarray(p_lower, dtype=np.float64) - delta
    q = np.asarray(q_upper, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        value = np.where((p > 0) & (q > 0), np.log(np.maximum(p, 1e-300) / q), 0.0)
    value = value * (1.0 - ROUNDING_MARGIN) - 8.0 * np.finfo(float).eps
    return np.maximum(value, 0.0)


def candidate_counts(first: np.ndarray, second: np.ndarray, *,
                     both: bool = True) -> tuple[np.ndarray, Callable[[int], Event]]:
    """The events tried on the choosing halves' tallies, favouring the first side, then
    (``both``) the second (math:audit): one query, each outcome, then the top 2, 3, ...,
    ``outcomes - 1`` ranked by ``(first + 1/2) / (second + 1/2)``; ``k`` queries, per outcome
    "at least c" (c = 1..k) then "at most c" (c = 0..k-1); cumulative sums, O(outcomes k).

    Returns:
      ``(counts, event_at)``: ``(n, 2)`` trials in candidate ``i`` on its favoured and other
      side, and ``event_at(i)``, its :class:`Event`.
    """
    outcomes, queries = first.shape[0], first.shape[1] - 1
    blocks, rankings = [], []
    for forward in ([True, False] if both else [True]):
        here, there = (first, second) if forward else (second, first)
        if queries == 1:
            x, y = here[:, 1], there[:, 1]
            ratio = (x.astype(np.float64) + 0.5) / (y.astype(np.float64) + 0.5)
            ranked = np.argsort(-ratio, kind="stable")
            rankings.append(ranked)
            unions = [np.cumsum(side[ranked])[1:outcomes - 1] for side in (x, y)]
            blocks.append(np.stack([np.concatenate([x, unions[0]]),
                                    np.concatenate([y, unions[1]])], axis=1))
            continue
        # per outcome: at least c (suffix sums from c = 1) then at most c (prefix sums)
        cuts = [np.concatenate([np.cumsum(side[:, ::-1], axis=1)[:, ::-1][:, 1:],
                                np.cumsum(side, axis=1)[:, :queries]], axis=1).ravel()
                for side in (here, there)]
        blocks.append(np.stack(cuts, axis=1))
    each = blocks[0].shape[0]

    def event_at(index: int) -> Event:
        direction, position = divmod(int(index), each)
        forward = direction == 0
        if queries == 1:
            if position < outcomes:
                return Event((position,), forward)
            return Event(rankings[direction][:position - outcomes + 2], forward)
        outcome, cut = divmod(position, 2 * queries)
        if cut < queries:
            return Event((outcome,), forward, cut + 1, True)
        return Event((outcome,), forward, cut - queries, False)

    return np.concatenate(blocks).astype(np.int64, copy=False), event_at


def event_counts(event: Event, first: np.ndarray, second: np.ndarray) -> tuple[int, int]:
    """(trials in ``event`` on its favoured side, on the other)."""
    here, there = (first, second) if event.forward else (second, first)
    return event.hits(here), event.hits(there)


def measure(event: Event, first: np.ndarray, second: np.ndarray, *, trials: int,
            delta: float, confidence: float) -> Measurement:
    """The lower bound ``event`` gives from ``trials`` trials per side, each Clopper-Pearson bound
    at ``1 - (1 - confidence) / 2``: it holds with probability ``confidence`` (math:audit)."""
    hits, other = event_counts(event, first, second)
    each = 1.0 - (1.0 - confidence) / 2.0
    low, _ = clopper_pearson(hits, trials, confidence=each)
    _, high = clopper_pearson(other, trials, confidence=each)
    epsilon = float(epsilon_from_bounds(low, high, delta=delta))
    return Measurement(hits, other, trials, float(low), float(high), epsilon)


def choose_event(first: np.ndarray, second: np.ndarray, *, trials: int, delta: float,
                 confidence: float, both: bool = True) -> Event:
    """The candidate (:func:`candidate_counts`) with the largest bound on the choosing
    halves (the first on ties), each at a Bonferroni-corrected confidence."""
    pairs, event_at = candidate_counts(first, second, both=both)
    # Bonferroni over the candidates: a rare outcome's lucky ratio does not win the choice
    each = 1.0 - (1.0 - confidence) / (2.0 * len(pairs))
    low, _ = clopper_pearson(pairs[:, 0], trials, confidence=each)
    _, high = clopper_pearson(pairs[:, 1], trials, confidence=each)
    chosen = event_at(int(np.argmax(epsilon_from_bounds(low, high, delta=delta))))
    return replace(chosen, outcomes=tuple(sorted(int(j) for j in chosen.outcomes)))


def claimed_epsilon(name: str, params: dict, *, delta: float,
                    queries: int = 1) -> tuple[float, str]:
    """The claimed guarantee of ``queries`` queries of mechanism ``name`` at ``delta``
    (math:audit).

    Args:
      name: ``gnmax``, ``confident``, ``lnmax``, ``exponential`` or
        ``confident-exponential``.
      params: the mechanism's parameters (``sigma``; ``threshold``, ``sigma_threshold``,
        ``sigma``; ``laplace_scale``; ``eta``; ``threshold``, ``sigma_threshold``,
        ``eta``).
      delta: the target delta.
      queries: how many queries are composed (1: one query).

    Returns:
      ``(epsilon, accountant)``: GNMax is the noisy counts' Gaussian mechanism (L2
      sensitivity sqrt(2), std sigma), Confident-GNMax that composed with the threshold's
      (sensitivity 1, std sigma1), both at their exact Gaussian privacy profile (Balle and
      Wang 2018; the argmax and the threshold's bit are post-processing; ``queries``
      Gaussians compose to one with ``queries`` times the squared ratio). LNMax is
      ``2 / lambda``-DP and the exponential mechanism ``2 eta``-DP; ``queries`` of them
      compose exactly (``pld.pure_composed_epsilon``), at most ``queries`` times the
      epsilon; LNMax's claim is its noisy counts' PLD where smaller (two Laplace mechanisms
      a query, as pate-analyze's). Confident-exponential: the threshold's Gaussian composed
      with ``2 eta``-DP by dp_accounting's PLD (raised by 1e-9 relative over its FFT
      rounding), or without it the Gaussian's exact epsilon plus ``queries`` times ``2 eta``.

    Raises:
      ValueError: a mechanism without a stated one-query claim.
    """
    if name == "gnmax":
        steps = [(math.sqrt(2.0), params["sigma"], queries)]
    elif name == "confident":
        steps = [(1.0, params["sigma_threshold"], queries),
                 (math.sqrt(2.0), params["sigma"], queries)]
    elif name == "confident-exponential":
        return _threshold_and_pure(params["sigma_threshold"], 2.0 * params["eta"], queries,
                                   delta)
    elif name in ("lnmax", "exponential"):
        pure = (ratio_up(2.0, params["laplace_scale"]) if name == "lnmax"
                else 2.0 * params["eta"])
        how = "pure DP (2 / lambda)" if name == "lnmax" else "pure DP (2 eta)"
        noisy_counts = (laplace_pld_epsilon(params["laplace_scale"], 2 * queries, delta)
                        if name == "lnmax" else None)  # pate-analyze's figure, where smaller
        claim = (pure, how)
        if queries > 1:
            composed = pure_composed_epsilon(pure, queries, delta)
            basic = ratio_up(queries * Fraction(pure), 1.0)
            claim = ((basic, f"{how}, composed by adding") if composed >= basic else
                     (composed, f"{how}, composed exactly (the binomial privacy loss)"))
        if noisy_counts is not None and noisy_counts < claim[0]:
            return noisy_counts, ("the noisy counts' privacy-loss distribution (two Laplace "
                                  "mechanisms a query, dp_accounting's, pessimistic)")
        return claim
    else:
        raise ValueError(f"pate-audit states no claim for {name!r} (choose from "
                         f"{', '.join(CLAIMED)})")
    return _gaussian_claim(steps, delta)


def _gaussian_claim(steps: list, delta: float) -> tuple[float, str]:
    """The Gaussian steps' exact epsilon, or where unresolved (tiny noise) mu-GDP's RDP at its
    best order, ``mu^2/2 + mu sqrt(2 log(1/delta))``, rounded up."""
    exact = gaussian_exact_epsilon(steps, delta)
    if math.isfinite(exact):
        return exact, "exact Gaussian privacy profile"
    mu = gaussian_mu(steps)
    return ((mu * mu / 2.0 + mu * math.sqrt(2.0 * math.log(1.0 / delta))) * (1.0 + 1e-12),
            "Gaussian RDP, classic conversion")


def _threshold_and_pure(sigma1: float, epsilon: float, queries: int,
                        delta: float) -> tuple[float, str]:
    """``queries`` threshold steps (sensitivity 1, std ``sigma1``) and ``epsilon``-DP
    answers: :func:`claimed_epsilon`'s confident-exponential figure."""
    gaussian, how = _gaussian_claim([(1.0, sigma1, queries)], delta)
    basic = ratio_up(Fraction(gaussian) + queries * Fraction(epsilon), 1)
    added = f"Gaussian threshold ({how}) + pure DP (2 eta), composed by adding"
    if delta < TRUSTED_DELTA:  # a PLD's profile is not read there (accounting.risk)
        return basic, added
    try:
        from dp_accounting.pld import common, privacy_loss_distribution
    except ImportError:
        return basic, added
    try:  # (a noise too small for its grid: the basic composition)
        threshold = privacy_loss_distribution.from_gaussian_mechanism(
            standard_deviation=sigma1).self_compose(queries)
        answers = privacy_loss_distribution.from_privacy_parameters(
            common.DifferentialPrivacyParameters(epsilon, 0.0)).self_compose(queries)
        composed = float(threshold.compose(answers).get_epsilon_for_delta(delta))
    except (OverflowError, ValueError, MemoryError):
        composed = math.inf
    # over dp_accounting's FFT rounding (a pure-DP figure came out 7e-12 relative low)
    composed *= 1.0 + 1e-9
    if composed >= basic:
        return basic, added
    return composed, "Gaussian threshold and pure DP (2 eta), dp_accounting's PLD"
