"""SVT-PATE analysis: the seeded replay and the data-independent guarantee (MATH.md s.8).

The rounds compose in closed form (zCDP, ``accounting.svt.rdp_svt``); the guarantee is
converted over a continuous order (``accounting.svt.svt_epsilon``: never above the pure-DP
bound ``c eps0``, no order grid). Only with an external RDP curve (``--add-rdp``, known on
the grid alone) is the sum converted on the grid by ``rdp_to_epsilon`` (MATH.md s.6).

**SVT-PATE made usable**: the cut-off search of ``--svt-cutoff auto`` and the note a run that
answers nothing or few queries gets (MATH.md s.1 and s.8).

Both read the analysed votes only through each query's distance to instability ``d``
(MATH.md s.1). Choices made here, where the spec is silent:

* **Few answers**: fewer than 1% of the analysed queries (so always when none is answered).
* **The suggestion** is computed on the noiseless rule: a query is answered when ``d``
  exceeds the threshold ``w`` by a margin of two standard deviations of the noise gap
  (``Laplace(2 lam) - Laplace(lam)`` has standard deviation ``sqrt(10) lam``), unstable
  otherwise, and the run halts at the cut-off's unstable query. The threshold the analysis
  would pick grows linearly in the scale (``w = 1 + 4 lam log(1/x)``, MATH.md s.8, with
  ``x`` fixed by n, c and delta), so the largest scale whose noiseless run answers at least
  ``goal`` queries is ``(w_goal - 1) / (4 log(1/x) + 2 sqrt(10))``, ``w_goal`` the largest
  effective threshold that leaves ``goal`` answers (bisection: the count falls as the
  threshold rises). ``goal`` is 1 for a run that answered nothing, else 1% of the
  queries. The printed scale is rounded down and the target epsilon (the guarantee at
  that scale) rounded up, to 3 significant digits.
* **``--svt-cutoff auto``** tries the cut-offs 1, 2, 3, 5, 7, 10, 15, 20, 30, 50, 70, 100,
  ... (about three per decade) up to the number of queries, solves each one's scale for
  the target epsilon, replays each with the run's seed, and keeps the one that answers the
  most queries (the smallest on a tie). The search looks at the votes: its choice is not
  part of the reported epsilon (MATH.md s.12 prices such searches; see ``--tuning``), and
  the run says so in a note.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from ..accounting.conversion import rdp_to_epsilon
from ..accounting.svt import (
    rdp_svt,
    rdp_svt_rounds,
    svt_epsilon,
    svt_guarantee,
    svt_scale_for_epsilon,
    svt_threshold_for,
)
from ..mechanisms import (
    SVT_HALTED,
    SVT_STABLE,
    SVT_UNSTABLE,
    SVTPATE,
    NoiseSource,
    distance_to_instability,
)
from ..sparse_rows import plurality_classes
from .result import AnalysisResult, QueryTable, SvtPart
from .setting import grid_edge_notes, initial_carry, label_accuracy, rows_of


def analyze_svt(votes: np.ndarray, mechanism: SVTPATE, *, positions: np.ndarray,
                teachers: float, accounting: str, delta: float, orders: np.ndarray,
                conversion: str, seed: int, labels: np.ndarray | None,
                initial_rdp: np.ndarray | None, salt: int, chunk_size: int,
                source: object | None, decisions=None) -> AnalysisResult:
    """SVT-PATE: the replay, and the data-independent guarantee (MATH.md s.8).

    The guarantee depends on the cut-off, not on the replay, so ``accounting`` changes
    nothing here. Per query, ``epsilon_cumulative`` is the guarantee had the mechanism
    been stopped after that query (the rounds started so far, at most the cut-off); the
    reported ``epsilon`` is the guarantee at the cut-off. ``rdp_selection`` per query is
    each unstable query's share at the reported order: ``alpha eps0^2 / 2``, or ``eps0``
    when the pure-DP bound ``c eps0`` gave epsilon (order ``inf``, ``null`` in JSON).
    ``decisions`` (outcome codes ``SVT_*`` per analysed query, from ``--decisions``)
    replace the replay; they must follow the mechanism's rule (halted exactly after the
    cut-off's unstable query).
    """
    queries = positions.size
    distance = np.empty(queries)
    plurality = np.empty(queries)
    plurality_class = np.empty(queries, dtype=np.int64)
    for start in range(0, queries, chunk_size):
        stop = min(queries, start + chunk_size)
        block = rows_of(votes, positions, start, stop)
        distance[start:stop] = distance_to_instability(block)
        plurality[start:stop] = block.max(axis=1)
        plurality_class[start:stop] = plurality_classes(block)
    search = None
    if mechanism.cutoff == "auto":
        search = search_cutoff(mechanism, distance, plurality_class, delta=delta,
                               conversion=conversion, seed=seed, salt=salt)
        mechanism = replace(mechanism, cutoff=search.chosen)
    if mechanism.scale is None:
        scale = svt_scale_for_epsilon(epsilon=mechanism.target_epsilon,
                                      cutoff=mechanism.cutoff, queries=queries, delta=delta,
                                      orders=orders, conversion=conversion,
                                      threshold=mechanism.threshold)
        mechanism = SVTPATE(scale=scale, cutoff=mechanism.cutoff,
                            threshold=mechanism.threshold,
                            target_epsilon=mechanism.target_epsilon)
        target = True
    else:
        target = False
    guarantee = svt_guarantee(scale=mechanism.scale, cutoff=mechanism.cutoff, queries=queries,
                              delta=delta, orders=orders, conversion=conversion,
                              threshold=mechanism.threshold)
    if decisions is None:
        decisions = replace(mechanism, threshold=guarantee.threshold).replay_distances(
            distance, plurality_class, noise=NoiseSource(seed, salt=salt))
    else:
        check_svt_sequence(decisions.outcome, int(mechanism.cutoff))
        stable = decisions.outcome == SVT_STABLE
        wrong = np.flatnonzero(stable & (decisions.labels >= 0)
                               & (decisions.labels != plurality_class))
        if wrong.size:
            raise ValueError(f"row {wrong[0] + 1}: SVT releases the plurality class "
                             f"{int(plurality_class[wrong[0]])}, not "
                             f"{int(decisions.labels[wrong[0]])}")
        decisions = replace(decisions, labels=np.where(stable, plurality_class, -1))
    released, unstable = decisions.answered, decisions.outcome == SVT_UNSTABLE
    label = decisions.labels

    carry = initial_carry(initial_rdp, orders)
    total = carry + rdp_svt(scale=mechanism.scale, cutoff=mechanism.cutoff, orders=orders)
    rounds = np.minimum(mechanism.cutoff, np.cumsum(unstable) + 1)
    distinct, index = np.unique(rounds, return_inverse=True)
    if initial_rdp is None:
        # The guarantee alone: converted over a continuous order, never above c eps0.
        epsilon, order, bound = guarantee.epsilon, guarantee.order, guarantee.bound
        eps_rounds, order_rounds, _ = svt_epsilon(scale=mechanism.scale, rounds=distinct,
                                                  delta=guarantee.delta1,
                                                  conversion=conversion)
        notes: tuple[str, ...] = ()
    else:
        # An external curve is known on the grid only: compose and convert there.
        epsilon, order = (float(x) for x in rdp_to_epsilon(total, orders=orders,
                                                          delta=guarantee.delta1,
                                                          conversion=conversion))
        curves = carry + rdp_svt_rounds(scale=mechanism.scale, rounds=distinct, orders=orders)
        eps_rounds, order_rounds = rdp_to_epsilon(curves, orders=orders,
                                                  delta=guarantee.delta1,
                                                  conversion=conversion)
        bound = "rdp"
        notes = grid_edge_notes(orders, order, epsilon)
    at_order = float(rdp_svt_rounds(scale=mechanism.scale, rounds=mechanism.cutoff,
                                    orders=[order])[0])
    per_round = float(rdp_svt_rounds(scale=mechanism.scale, rounds=1, orders=[order])[0])
    accuracy, _ = label_accuracy(label, labels, positions, None)
    if search is not None:
        notes += (search_note(search),)
    few = few_answers_note(mechanism, distance,
                           int(np.count_nonzero(released)), threshold=guarantee.threshold,
                           halted_at=_halted_at(decisions.outcome),
                           delta=delta, conversion=conversion, target=target)
    if few is not None:
        notes += (few,)
    answered = released.astype(np.float64)
    rdp_selection = np.where(unstable, per_round, 0.0)
    return AnalysisResult(
        mechanism=mechanism, accounting=accounting, conversion=conversion, delta=delta,
        seed=int(seed), orders=orders, teachers=teachers, classes=int(votes.shape[1]),
        table=QueryTable(
            plurality=plurality, plurality_class=plurality_class, answered=answered,
            label=label, log_q=np.full(queries, np.nan), log_pr_answered=np.zeros(queries),
            epsilon_query=np.full(queries, np.nan),
            epsilon_cumulative=eps_rounds[index.reshape(-1)],
            order_cumulative=order_rounds[index.reshape(-1)], rdp_selection=rdp_selection,
            rdp_answer=np.zeros(queries),
            columns={"distance": distance, "unstable": unstable.astype(np.int64)}),
        rdp_total=total, epsilon=epsilon, order=order,
        epsilon_data_independent=epsilon, order_data_independent=order,
        answered_total=float(answered.sum()),
        rdp_at_order={"selection": at_order, "answer": 0.0},
        label_accuracy=accuracy, warnings=notes, source=source,
        query_index=positions,
        initial_rdp=None if initial_rdp is None else np.asarray(initial_rdp, dtype=float),
        svt=SvtPart(scale=mechanism.scale, cutoff=int(mechanism.cutoff),
                    threshold=guarantee.threshold, unstable=int(unstable.sum()),
                    delta1=guarantee.delta1, delta2=guarantee.delta2,
                    scale_from_target_epsilon=target, bound=bound,
                    cutoff_from_search=search is not None,
                    cutoffs_tried=None if search is None else tuple(
                        {"cutoff": c, "scale": lam, "answered": n}
                        for c, lam, n in search.tried)))


def check_svt_sequence(outcome: np.ndarray, cutoff: int) -> None:
    """SVT's outcomes in order can only be: stable/unstable until the ``cutoff``-th
    unstable query, then halted on every later one (MATH.md s.1). ``ValueError``."""
    unstable = np.cumsum(outcome == SVT_UNSTABLE)
    halted = outcome == SVT_HALTED
    before = np.concatenate([[0], unstable[:-1]])
    early = np.flatnonzero(halted & (before < cutoff))
    if early.size:
        raise ValueError(f"row {early[0] + 1}: halted after {int(before[early[0]])} unstable "
                         f"queries, but the cut-off is {cutoff}")
    late = np.flatnonzero(~halted & (before >= cutoff))
    if late.size:
        raise ValueError(f"row {late[0] + 1}: SVT halts after {cutoff} unstable queries, so "
                         "every later query is 'halted'")


def _halted_at(outcome: np.ndarray) -> int | None:
    """The first query the cut-off left unprocessed, or None if it never bound."""
    halted = np.flatnonzero(outcome == SVT_HALTED)
    return int(halted[0]) if halted.size else None


FEW_FRACTION = 0.01
MARGIN = 2.0 * math.sqrt(10.0)  # noise-gap standard deviations, in units of lam
_CUTOFF_STEPS = (1, 1.5, 2, 3, 5, 7)
_BISECTION_STEPS = 100


@dataclass(frozen=True)
class CutoffSearch:
    """What ``--svt-cutoff auto`` tried: ``(cutoff, scale, answered)`` per cut-off."""

    chosen: int
    tried: tuple[tuple[int, float, int], ...]


def cutoff_candidates(queries: int) -> list[int]:
    """1, 2, 3, 5, 7, 10, 15, 20, 30, 50, 70, 100, ... up to ``queries`` (at least 1)."""
    found: list[int] = []
    decade = 1
    while True:
        for step in _CUTOFF_STEPS:
            value = int(round(step * decade))
            if value > max(1, queries):
                return found
            if value not in found:
                found.append(value)
        decade *= 10


def search_cutoff(mechanism: SVTPATE, distance: np.ndarray, plurality_class: np.ndarray, *,
                  delta: float, conversion: str, seed: int, salt: int) -> CutoffSearch:
    """The cut-off whose seeded replay answers the most queries at ``target_epsilon``.

    Each candidate's scale is solved for the target as a fixed cut-off's is; a candidate
    no scale in the solver's range serves is skipped. ``ValueError`` if none is left.
    """
    queries = distance.shape[0]
    tried = []
    for cutoff in cutoff_candidates(queries):
        try:
            scale = svt_scale_for_epsilon(epsilon=mechanism.target_epsilon, cutoff=cutoff,
                                          queries=queries, delta=delta, conversion=conversion,
                                          threshold=mechanism.threshold)
        except ValueError:
            continue
        threshold = (mechanism.threshold if mechanism.threshold is not None else
                     svt_guarantee(scale=scale, cutoff=cutoff, queries=queries, delta=delta,
                                   conversion=conversion).threshold)
        candidate = SVTPATE(scale=scale, cutoff=cutoff, threshold=threshold)
        decisions = candidate.replay_distances(distance, plurality_class,
                                               noise=NoiseSource(seed, salt=salt))
        tried.append((cutoff, scale, int(np.count_nonzero(decisions.answered))))
    if not tried:
        raise ValueError(f"no SVT cut-off reaches target epsilon "
                         f"{mechanism.target_epsilon:g} with a scale in [1e-6, 1e9]")
    best = max(answered for _, _, answered in tried)
    chosen = next(cutoff for cutoff, _, answered in tried if answered == best)
    return CutoffSearch(chosen=chosen, tried=tuple(tried))


def search_note(search: CutoffSearch) -> str:
    """The note of an ``--svt-cutoff auto`` run: what it chose, and that epsilon excludes
    the choice."""
    answered = dict((cutoff, count) for cutoff, _, count in search.tried)
    return (f"--svt-cutoff auto chose cut-off {search.chosen} ({answered[search.chosen]} "
            f"answers; {len(search.tried)} cut-offs tried, 1 to {search.tried[-1][0]}) by "
            "replaying these votes; epsilon does not include the cost of that choice "
            "(see --tuning)")


def answers_are_few(answered: int, queries: int) -> bool:
    """Fewer than 1% of the queries answered (always true for none)."""
    return answered == 0 or answered < FEW_FRACTION * queries


def noiseless_answers(distance: np.ndarray, threshold: float, cutoff: int) -> int:
    """Answers of the noiseless rule at effective threshold ``threshold``: ``d >
    threshold`` answers, otherwise unstable; halts at the cut-off's unstable query."""
    unstable = distance <= threshold
    halt = int(np.searchsorted(np.cumsum(unstable), cutoff))  # index of the c-th unstable
    return int(np.count_nonzero(~unstable[:halt]))


def largest_threshold_for(distance: np.ndarray, cutoff: int, goal: int) -> float | None:
    """The largest effective threshold whose noiseless run answers ``goal`` queries (to
    the bisection's precision, from below), or None if even threshold 0 does not."""
    low, high = 0.0, float(distance.max(initial=0.0))
    if noiseless_answers(distance, low, cutoff) < goal:
        return None
    for _ in range(_BISECTION_STEPS):
        middle = 0.5 * (low + high)
        if noiseless_answers(distance, middle, cutoff) >= goal:
            low = middle
        else:
            high = middle
    return low


@dataclass(frozen=True)
class Suggestion:
    """A scale (and its epsilon at this cut-off) whose noiseless run answers ``goal``."""

    goal: int
    scale: float
    epsilon: float


def suggest_scale(mechanism: SVTPATE, distance: np.ndarray, *, delta: float, conversion: str,
                  goal: int) -> Suggestion | None:
    """The largest scale (rounded down) whose noiseless run answers ``goal`` queries with
    this cut-off (and threshold rule), and its guarantee (rounded up); None if none does."""
    queries = distance.shape[0]
    effective = largest_threshold_for(distance, mechanism.cutoff, goal)
    if effective is None:
        return None
    if mechanism.threshold is None:
        # w(lam) = 1 + 4 lam k with k = log(1/x) independent of lam (MATH.md s.8).
        k = (svt_threshold_for(scale=1.0, cutoff=mechanism.cutoff, queries=queries,
                               delta2=delta / 2.0) - 1.0) / 4.0
        scale = (effective - 1.0) / (4.0 * k + MARGIN)
    else:
        scale = (effective - mechanism.threshold) / MARGIN
    scale = _round_down(scale)
    if not scale >= 1e-6:
        return None
    try:
        epsilon = svt_guarantee(scale=scale, cutoff=mechanism.cutoff, queries=queries,
                                delta=delta, conversion=conversion,
                                threshold=mechanism.threshold).epsilon
    except ValueError:  # a fixed threshold that leaves no delta at this scale
        return None
    return Suggestion(goal=goal, scale=scale, epsilon=_round_up(epsilon))


def few_answers_note(mechanism: SVTPATE, distance: np.ndarray, answered: int, *,
                     threshold: float, halted_at: int | None, delta: float, conversion: str,
                     target: bool) -> str | None:
    """The one note of a run that answered nothing or few queries (None otherwise): the
    threshold ``threshold`` used against the largest distance to instability, where the
    cut-off halted the run (``halted_at``, None if it did not), and which
    ``--svt-scale`` / ``--target-epsilon`` would answer (``mechanism.threshold`` is the
    user's fixed threshold or None)."""
    queries = distance.shape[0]
    if queries == 0 or not answers_are_few(answered, queries):
        return None
    largest = float(distance.max())
    passing = int(np.count_nonzero(distance > threshold))
    if passing == 0:
        why = (f"its threshold w = {threshold:.4g} is above the largest distance to "
               f"instability on this file, {largest:g} (half the vote margin, less 1)")
    else:
        why = (f"{passing} queries have a distance to instability above its threshold w = "
               f"{threshold:.4g} (the largest is {largest:g}), but each query at or below "
               "w (after noise) uses one of the cut-off's rounds")
    halt = ("" if halted_at is None else
            f"; the cut-off {mechanism.cutoff} halted it before query {halted_at}")
    head = f"SVT-PATE answered {answered} of {queries} queries: {why}{halt}"
    goal = 1 if answered == 0 else math.ceil(FEW_FRACTION * queries)
    what = "at least one query" if goal == 1 else f"about {goal} queries"
    found = suggest_scale(mechanism, distance, delta=delta, conversion=conversion, goal=goal)
    if found is None:
        fix = (f"lower --svt-threshold below {largest:g}" if mechanism.threshold is not None
               else "no --svt-scale does with this cut-off: try a larger --svt-cutoff or "
                    "another mechanism")
        return f"{head}. To answer {what}, {fix} (README: SVT-PATE)"
    if found.scale >= mechanism.scale:
        return (f"{head}. The noiseless rule answers {what} at this scale; this seed's noise "
                "did not (try a smaller --svt-scale)")
    knob = (f"--target-epsilon {found.epsilon:g} (scale {found.scale:g})" if target else
            f"--svt-scale {found.scale:g} (epsilon {found.epsilon:g}) or --target-epsilon "
            f"{found.epsilon:g}")
    return (f"{head}. At cut-off {mechanism.cutoff}, {knob} would answer {what} (noiseless "
            "estimate with a 2-sd noise margin); SVT-PATE needs vote margins far above its "
            "noise (README: SVT-PATE)")


def _round_down(value: float) -> float:
    """``value`` rounded down to 3 significant digits (the suggested scale)."""
    return _three_digits(value, math.floor)


def _round_up(value: float) -> float:
    """``value`` rounded up to 3 significant digits (the epsilon at that scale)."""
    return _three_digits(value, math.ceil)


def _three_digits(value: float, rounding) -> float:
    if not (math.isfinite(value) and value > 0):
        return value
    factor = 10.0 ** (2 - math.floor(math.log10(value)))
    return rounding(value * factor * (1 - 1e-12)) / factor
