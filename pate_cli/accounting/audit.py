"""The statistics of an audit: an empirical lower bound on one query's epsilon (math:audit).

For neighbouring histograms with output distributions ``P`` and ``P'`` and any event ``S``,
an (epsilon, delta)-DP aggregator has ``P(S) <= e^epsilon P'(S) + delta``, so

    epsilon >= log((P(S) - delta) / P'(S))

(and the same with ``P`` and ``P'`` swapped). With ``n`` draws per side, ``P(S)`` is bounded
from below and ``P'(S)`` from above by one-sided Clopper-Pearson bounds (Clopper and Pearson
1934), each at confidence ``1 - beta / 2``: the resulting ``epsilon_lower`` holds with
confidence ``1 - beta`` (a union bound; the two sides' draws need not be independent). The
event is chosen on one half of each side's draws and measured on the other half, so the
choice does not bias the measurement (Jagielski et al. 2020; Nasr et al. 2021).

Outcomes are indexed ``0`` for no answer (label -1) and ``j + 1`` for label ``j``. The
claimed upper bound of one query is :func:`claimed_epsilon`. Pure math: no draws, no files.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..orders import default_orders
from .conversion import rdp_to_epsilon
from .exponential import log_q_exponential, rdp_exponential
from .gnmax import log_q_gnmax, rdp_gnmax
from .laplace import log_q_lnmax, rdp_lnmax
from .pld import gaussian_exact_epsilon
from .threshold import log_pr_answered, rdp_threshold

# The mechanisms whose one-query claim this module states (math:audit).
CLAIMED = ("lnmax", "gnmax", "confident", "exponential")


@dataclass(frozen=True)
class Event:
    """A distinguishing event: the outcomes in ``outcomes`` (0 = no answer, ``j + 1`` =
    label ``j``), tested as more likely under the first histogram (``forward``) or the
    second."""

    outcomes: tuple[int, ...]
    forward: bool

    @property
    def labels(self) -> list[int]:
        """The labels of the event (-1 for no answer), in increasing order."""
        return sorted(index - 1 for index in self.outcomes)


@dataclass(frozen=True)
class Measurement:
    """The event's counts on the measuring halves and what they bound.

    ``hits``: draws in the event on the side it favours (``of`` draws), ``other_hits`` on
    the other side; ``p_lower`` and ``q_upper`` their one-sided Clopper-Pearson bounds;
    ``epsilon_lower`` the bound on epsilon they give (0 when they give none)."""

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
      ``binomtest(k, n).proportion_ci(method="exact")``).

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
    return lower, upper


def epsilon_from_bounds(p_lower, q_upper, *, delta: float) -> np.ndarray:
    """``max(0, log((p_lower - delta) / q_upper))``: the epsilon an event with
    ``P(S) >= p_lower`` and ``P'(S) <= q_upper`` forces at ``delta`` (0 where it forces
    none)."""
    p = np.asarray(p_lower, dtype=np.float64) - delta
    q = np.asarray(q_upper, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        value = np.where((p > 0) & (q > 0), np.log(np.maximum(p, 1e-300) / q), 0.0)
    return np.maximum(value, 0.0)


def candidate_events(first: np.ndarray, second: np.ndarray, *,
                     both: bool = True) -> list[Event]:
    """The events tried on the choosing halves: each single outcome, and the unions of the
    outcomes ranked by likelihood ratio (``(first + 1/2) / (second + 1/2)``) from the top, in
    both directions (``both``) or favouring the first side only. ``first`` and ``second``
    are the outcome counts of the two sides."""
    events: list[Event] = []
    outcomes = len(first)
    directions = ((True, (first, second)), (False, (second, first)))
    for forward, (x, y) in directions if both else directions[:1]:
        ratio = (np.asarray(x, np.float64) + 0.5) / (np.asarray(y, np.float64) + 0.5)
        ranked = np.argsort(-ratio, kind="stable")
        events += [Event((int(j),), forward) for j in range(outcomes)]
        events += [Event(tuple(sorted(int(j) for j in ranked[:top])), forward)
                   for top in range(2, outcomes)]
    return events


def event_counts(event: Event, first: np.ndarray, second: np.ndarray) -> tuple[int, int]:
    """(draws in ``event`` on its favoured side, draws in it on the other side)."""
    index = list(event.outcomes)
    here, there = (first, second) if event.forward else (second, first)
    return int(np.sum(here[index])), int(np.sum(there[index]))


def measure(event: Event, first: np.ndarray, second: np.ndarray, *, trials: int,
            delta: float, confidence: float) -> Measurement:
    """The lower bound ``event`` gives from the outcome counts of ``trials`` draws per side.

    Each Clopper-Pearson bound is at ``1 - (1 - confidence) / 2``, so the bound on epsilon
    holds with probability ``confidence`` (module docstring)."""
    hits, other = event_counts(event, first, second)
    each = 1.0 - (1.0 - confidence) / 2.0
    low, _ = clopper_pearson(hits, trials, confidence=each)
    _, high = clopper_pearson(other, trials, confidence=each)
    epsilon = float(epsilon_from_bounds(low, high, delta=delta))
    return Measurement(hits, other, trials, float(low), float(high), epsilon)


def choose_event(first: np.ndarray, second: np.ndarray, *, trials: int, delta: float,
                 confidence: float, both: bool = True) -> Event:
    """The candidate event (:func:`candidate_events`, in ``both`` directions or favouring
    the first side) whose bound on the choosing halves' counts is largest (the first such
    in the candidates' order on ties), each bound at a confidence corrected for the number
    of candidates (Bonferroni), so that one rare outcome's lucky ratio does not win."""
    events = candidate_events(first, second, both=both)
    pairs = np.array([event_counts(event, first, second) for event in events])
    # Bonferroni over the candidates: a rare outcome's lucky ratio does not win the choice
    each = 1.0 - (1.0 - confidence) / (2.0 * len(events))
    low, _ = clopper_pearson(pairs[:, 0], trials, confidence=each)
    _, high = clopper_pearson(pairs[:, 1], trials, confidence=each)
    bounds = epsilon_from_bounds(low, high, delta=delta)
    return events[int(np.argmax(bounds))]


def claimed_epsilon(name: str, params: dict, *, delta: float) -> tuple[float, str]:
    """The claimed guarantee of one query of mechanism ``name`` at ``delta`` (math:audit).

    Args:
      name: ``gnmax``, ``confident``, ``lnmax`` or ``exponential``.
      params: the mechanism's parameters (``sigma``; ``threshold``, ``sigma_threshold``,
        ``sigma``; ``laplace_scale``; ``eta``).
      delta: the target delta.

    Returns:
      ``(epsilon, accountant)``: GNMax is the noisy counts' Gaussian mechanism (L2
      sensitivity sqrt(2), std sigma), Confident-GNMax that composed with the threshold's
      (sensitivity 1, std sigma1), both at their exact Gaussian privacy profile (Balle and
      Wang 2018; the argmax and the threshold's bit are post-processing); LNMax is
      ``2 / lambda``-DP and the exponential mechanism ``2 eta``-DP (pure, at any delta).

    Raises:
      ValueError: a mechanism without a stated one-query claim.
    """
    if name == "gnmax":
        steps = [(math.sqrt(2.0), params["sigma"], 1)]
    elif name == "confident":
        steps = [(1.0, params["sigma_threshold"], 1), (math.sqrt(2.0), params["sigma"], 1)]
    elif name == "lnmax":
        return 2.0 / params["laplace_scale"], "pure DP (2 / lambda)"
    elif name == "exponential":
        return 2.0 * params["eta"], "pure DP (2 eta)"
    else:
        raise ValueError(f"pate-audit states no claim for {name!r} (choose from "
                         f"{', '.join(CLAIMED)})")
    return gaussian_exact_epsilon(steps, delta), "exact Gaussian privacy profile"


def claimed_data_dependent_epsilon(name: str, params: dict, histogram: np.ndarray, *,
                                   delta: float) -> tuple[float, str]:
    """The data-dependent claim of one query with vote histogram ``histogram`` at ``delta``:
    its RDP curve (math:gnmax, math:threshold, math:lnmax, math:exponential; Confident's answer
    step charged in full) converted with the improved conversion over the default orders
    (math:conversion), or the data-independent claim (:func:`claimed_epsilon`) where that is
    smaller.

    The bound is on ``P(S) <= e^epsilon P'(S) + delta`` with ``P`` the output distribution
    at ``histogram`` and ``P'`` at any neighbour: one direction only (math:audit).

    Raises:
      ValueError: a mechanism without a stated one-query claim.
    """
    orders = default_orders()
    votes = np.asarray(histogram, dtype=np.float64)[None, :]
    independent, _ = claimed_epsilon(name, params, delta=delta)
    if name in ("gnmax", "confident"):
        sigma = params["sigma"]
        rdp = rdp_gnmax(log_q_gnmax(votes, sigma=sigma), sigma=sigma, orders=orders)
        if name == "confident":
            sigma1 = params["sigma_threshold"]
            rdp = rdp + rdp_threshold(
                log_pr_answered(votes.max(axis=1), threshold=params["threshold"],
                                sigma_threshold=sigma1), sigma_threshold=sigma1, orders=orders)
    elif name == "lnmax":
        scale = params["laplace_scale"]
        rdp = rdp_lnmax(log_q_lnmax(votes, scale=scale), scale=scale, orders=orders)
    else:
        eta = params["eta"]
        rdp = rdp_exponential(log_q_exponential(votes, eta=eta), eta=eta, orders=orders)
    epsilon, _ = rdp_to_epsilon(rdp, orders=orders, delta=delta, conversion="improved")
    dependent = float(np.asarray(epsilon).reshape(-1)[0])
    if dependent < independent:
        return dependent, "data-dependent RDP, improved conversion"
    return independent, "the data-independent claim (smaller than the data-dependent one)"
