"""The cost table of math:costs: each mechanism's (selection, answer) steps, and one chunk
costed by it (:func:`block_costs`, the per-chunk pass every pass over the queries builds on:
decisions, statistics, weights, per-query curves)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from typing import Any, NamedTuple

import numpy as np

from ..accounting import exponential, gnmax, laplace, threshold
from ..accounting.composition import StepRows
from ..accounting.q_bound import check_q_bound, log_q_bound
from ..accounting.screening import rdp_screening
from ..accounting.subsampling import sampled_gaussian_curve, sampled_laplace_curve
from ..decisions import Decisions
from ..inputs.rows import rows_of, rows_read_once
from ..mechanisms import NoiseSource
from ..mechanisms.sampled import SampledMechanism, unsampled


@dataclass(frozen=True)
class Step:
    """One privacy-costing step (math:costs): ``statistic(votes, student)`` (per-query ``log q``
    or ``log pr_answered``), ``rdp(distinct statistics, orders)``, ``independent(orders)``
    (math:independent). A threshold step's ``raised(votes, student)`` gives, from the counts
    formed once, the statistic and the queries charged ``raised_charge(statistics)``, not
    ``exp(statistic)`` (``threshold.raised_counts``). A sampled aggregator's answer step holds
    its ``unsampled`` (selection, answer) steps."""

    statistic: Callable[..., np.ndarray]
    rdp: Callable[[np.ndarray, np.ndarray], np.ndarray]
    independent: Callable[[np.ndarray], np.ndarray]
    raised: Callable[..., tuple[np.ndarray, np.ndarray | None]] | None = None
    raised_charge: Callable[[np.ndarray], np.ndarray] | None = None
    unsampled: tuple[Step | None, Step] | None = None


# math:costs's answer steps: noise attribute, its keyword, log q (math:lnmax; Prop. 7 or
# math:integral; math:exponential's exact one), data-dependent and data-independent curve.
# LNMax's curve is capped by its exact data-independent one; the others cap themselves.
ANSWERS: dict[str, tuple[str, str, Callable, Callable, Callable]] = {
    "laplace": ("laplace_scale", "scale", laplace.log_q_lnmax, laplace.rdp_lnmax,
                laplace.rdp_lnmax_data_independent),
    "gaussian": ("sigma", "sigma", log_q_bound, gnmax.rdp_gnmax,
                 gnmax.rdp_gnmax_data_independent),
    "exponential": ("eta", "eta", exponential.log_q_exponential, exponential.rdp_exponential,
                    exponential.rdp_exponential_data_independent),
}
# Mechanism name -> (whether a noisy threshold selects first, its answer step). SVT-PATE
# is not here: its cost is the sparse-vector guarantee of math:svt (``analysis.svt``).
COST_TABLE = {"lnmax": (False, "laplace"), "gnmax": (False, "gaussian"),
              "confident": (True, "gaussian"), "interactive": (True, "gaussian"),
              "exponential": (False, "exponential"),
              "confident-exponential": (True, "exponential")}


def mechanism_steps(mechanism, *, q_bound: str = "union",
                    added_unit: bool = False) -> tuple[Step | None, Step]:
    """A mechanism's (selection or None, answer) steps. ``q_bound`` (math:gnmax, math:integral):
    Gaussian answers only. Sampled: inner steps with amplified data-independent curves
    (math:sampling); ``added_unit`` (``--vote-change add``): the threshold's exact curve covers
    counts up to M + 1."""
    check_q_bound(q_bound)
    if isinstance(mechanism, SampledMechanism):
        selection, answer = mechanism_steps(mechanism.inner, q_bound=q_bound,
                                            added_unit=not mechanism.sampling.moves)
        amplified, sampled = _sampled(selection, answer, mechanism)
        return amplified, replace(sampled, unsampled=(selection, answer))
    try:
        selects, kind = COST_TABLE[mechanism.name]
    except KeyError:
        raise ValueError(f"no per-query cost steps for {mechanism.name} "
                         "(SVT-PATE is accounted by its own guarantee)") from None
    if q_bound != "union" and kind != "gaussian":
        raise ValueError(f"--q-bound {q_bound} applies to Gaussian answers (gnmax, "
                         f"confident, interactive), not {mechanism.name}")
    value = getattr(mechanism, ANSWERS[kind][0])
    keywords = {"q_bound": q_bound} if kind == "gaussian" else {}
    answer = Step(partial(_answer_statistic, kind, value, keywords),
                  partial(_answer_rdp, kind, value), partial(_answer_independent, kind, value))
    if not selects:
        return None, answer
    # The threshold on ``selection_counts``: math:screening's exact curve caps math:threshold's
    # data-dependent one (math:independent's under "gaussian").
    kind, low, high = screening_counts(mechanism)
    screen = (mechanism.sigma_threshold, mechanism.threshold, kind, low,
              high + 1.0 if added_unit and kind != "gaussian" else high)
    return Step(partial(_threshold_statistic, mechanism), partial(_threshold_rdp, *screen),
                partial(_threshold_independent, *screen),
                raised=partial(_threshold_raised, mechanism),
                raised_charge=partial(threshold.raised_charge,
                                      sigma_threshold=mechanism.sigma_threshold)), answer


def screening_counts(mechanism) -> tuple[str, float, float]:
    """``(kind, low, high)``: the counts a threshold step may compare (math:screening).
    ``integer``: plain votes, ``max n`` in ``0..M``; ``real``: weighted ``max n`` in ``[0, M]``,
    or Interactive's ``max_j (n_j - M p_j)`` in ``[-M/2, M]`` (``n_j >= 0``, rows at most M, at
    least 2 classes: the largest of K numbers summing to ``sum n - M >= -M`` is ``>= -M/K``);
    ``gaussian``: math:independent's curve (``screening="gaussian"``, or M unknown)."""
    teachers = getattr(mechanism, "teachers", None)
    if mechanism.screening == "gaussian" or teachers is None:
        return "gaussian", 0.0, 0.0
    top = float(teachers)
    if mechanism.name == "interactive":
        return "real", -top / 2.0, top
    whole = bool(mechanism.integer_votes) and top.is_integer()
    return ("integer" if whole else "real"), 0.0, top


# The steps' functions, at module level so that a step pickles (cluster workers run them);
# an ``rdp`` of plain arguments is shared by its value (``curve_store``).

def _answer_statistic(kind, value, keywords, votes, student):
    _, name, log_q, _, _ = ANSWERS[kind]
    return log_q(votes, **{name: value}, **keywords)


def _answer_rdp(kind, value, log_q, orders):
    _, name, _, dependent, _ = ANSWERS[kind]
    curve = dependent(log_q, **{name: value}, orders=orders)
    if kind != "laplace":
        return curve
    return np.minimum(curve, _answer_independent(kind, value, orders))


def _answer_independent(kind, value, orders):
    _, name, _, _, independent = ANSWERS[kind]
    return independent(**{name: value}, orders=orders)


def _threshold_statistic(mechanism, votes, student):
    return _threshold_raised(mechanism, votes, student, flags=False)[0]


def _threshold_raised(mechanism, votes, student, *, flags: bool = True):
    """``(log pr_answered, raised mask or None)`` from counts formed once; no mask for whole
    counts (scanned: never raised)."""
    counts = mechanism.selection_counts(votes, student)
    log_pr = threshold.log_pr_answered(counts, threshold=mechanism.threshold,
                                       sigma_threshold=mechanism.sigma_threshold)
    if not flags or (mechanism.name != "interactive"
                     and getattr(mechanism, "integer_votes", False)):
        return log_pr, None
    raised = threshold.raised_counts(counts, threshold=mechanism.threshold,
                                     sigma_threshold=mechanism.sigma_threshold)
    return log_pr, raised if raised.any() else None


def _threshold_rdp(s1, t, kind, low, high, log_pr, orders):
    dependent = threshold.rdp_threshold(log_pr, sigma_threshold=s1, orders=orders)
    if kind == "gaussian":
        return dependent
    return np.minimum(dependent, _threshold_independent(s1, t, kind, low, high, orders))


def _threshold_independent(s1, t, kind, low, high, orders):
    if kind == "gaussian":
        return threshold.rdp_threshold_data_independent(sigma_threshold=s1, orders=orders)
    return rdp_screening(threshold=t, sigma_threshold=s1, low=low, high=high,
                         integer=kind == "integer", orders=orders)


def _sampled(selection, answer, mechanism: SampledMechanism):
    """Inner steps with amplified data-independent curves (math:sampling); at rate 1 the steps'
    own, bit for bit; each at most the unsampled curve (the threshold's exact one,
    math:screening). Confident, ``shared`` steps: an answered query is one sampled Gaussian on
    (threshold count, votes), ``1/z^2 = 1/sigma1^2 + Delta^2/sigma^2``, capped by the two
    unsampled steps; the answer step carries it less the threshold step's, so answered
    queries' joint charges and the others' threshold charges compose."""
    sampling = mechanism.sampling
    if unsampled(sampling):
        return selection, answer
    scheme, rate = sampling.scheme, sampling.rate
    if mechanism.name == "lnmax":
        return selection, replace(answer, independent=partial(
            sampled_laplace_curve, scheme, rate, mechanism.laplace_scale,
            sampling.laplace_sensitivity()))
    z = mechanism.sigma / sampling.answer_sensitivity
    own_answer = partial(_gaussian_rdp, z)
    amplified = partial(_capped, partial(sampled_gaussian_curve, scheme, rate, z), own_answer)
    if selection is None:
        return None, replace(answer, independent=amplified)
    threshold = partial(_capped, partial(sampled_gaussian_curve, scheme, rate,
                                         mechanism.sigma_threshold), selection.independent)
    if sampling.steps == "shared":
        joint = math.sqrt(1.0 / (1.0 / mechanism.sigma_threshold**2 + 1.0 / z**2))
        both = partial(_sum_of, selection.independent, own_answer)
        amplified = partial(_beyond, partial(_capped, partial(
            sampled_gaussian_curve, scheme, rate, joint), both), threshold)
    return replace(selection, independent=threshold), replace(answer, independent=amplified)


def _gaussian_rdp(z, orders):
    return np.asarray(orders, dtype=np.float64) / (2.0 * z * z)


def _capped(curve, own, orders):
    return np.minimum(curve(orders), own(orders))


def _sum_of(first, second, orders):
    return first(orders) + second(orders)


def _beyond(total, part, orders):
    """``total - part`` (both non-negative, ``total >= part``); ``+ part`` gives ``total``
    within an ulp."""
    return np.maximum(total(orders) - part(orders), 0.0)


def data_independent_curve(selection, answer, *, answered, queries, orders) -> np.ndarray:
    """A run's worst-case RDP curve (math:independent): ``answered`` answer steps plus, if
    selecting, ``queries`` selection steps; sampled: capped by the unsampled steps'
    (math:sampling: either bound holds; rounding could leave it an ulp above)."""
    curve = answered * answer.independent(orders)
    if selection is not None:
        curve = curve + queries * selection.independent(orders)
    if answer.unsampled is not None:
        curve = np.minimum(curve, data_independent_curve(
            *answer.unsampled, answered=answered, queries=queries, orders=orders))
    return curve


def step_curves(step, statistic, orders, independent, kept=None) -> tuple[np.ndarray, np.ndarray]:
    """Distinct RDP curves of a step and, per query, the index of its curve. ``kept`` (a
    ``curve_store.SharedCurves``) serves the curves it holds and keeps the others."""
    if step is None or independent:
        curve = np.zeros(orders.size) if step is None else step.independent(orders)
        return curve[None, :], np.zeros(statistic.shape[0], dtype=np.intp)
    distinct, index = np.unique(statistic, return_inverse=True)
    rdp = step.rdp if kept is None else kept.serving(step.rdp, orders)
    return rdp(distinct, orders), index.reshape(-1)


def curve_function(step, independent: bool):
    """Sorted distinct statistics -> ``(distinct, orders)`` curves of ``step`` (its
    data-independent curve on every row under ``independent``); None without a step."""
    if step is None:
        return None
    return partial(_independent_rows, step) if independent else step.rdp


def _independent_rows(step, keys: np.ndarray, orders: np.ndarray) -> np.ndarray:
    return np.broadcast_to(step.independent(orders), (keys.size, orders.size))


class ChunkCosts(NamedTuple):
    """A chunk's votes, decisions, statistics, answer weight, curves (if asked); ``runs``: each
    noise source's decisions (``made``: the first's)."""

    block: np.ndarray
    made: Decisions
    log_q: np.ndarray
    log_pr: np.ndarray
    weight: np.ndarray
    costs: StepRows | None
    runs: tuple[Decisions, ...] = ()
    raised: np.ndarray | None = None  # expected accounting: threshold.raised_counts


@dataclass(frozen=True, eq=False)
class Costing:
    """How :func:`block_costs` costs a chunk: ``noise`` (a ``NoiseSource`` or one per run);
    ``curves`` at ``orders`` (``kept``: see :func:`step_curves`); ``labels`` as
    ``Mechanism.replay``; without ``statistics`` (data-independent) log q, log pr_answered: 0."""

    mechanism: Any
    selection: Step | None
    answer: Step
    noise: Any
    accounting: str
    orders: np.ndarray | None = None
    curves: bool = True
    kept: Any = None
    labels: bool = True
    statistics: bool = True


def chunk_costs(votes, positions, start: int, stop: int, *, student=None,
                decisions: Decisions | None = None, **costing: Any) -> ChunkCosts:
    """:func:`block_costs` of analysed queries ``start .. stop-1`` (rows read once), with the
    given ``decisions``' rows if any; ``costing``: :class:`Costing`'s fields."""
    return block_costs(rows_read_once(votes, positions, start, stop),
                       None if student is None else rows_of(student, positions, start, stop),
                       start, None if decisions is None else decisions.padded(start, stop),
                       Costing(**costing))


def block_costs(block, student, start: int, given: Decisions | None,
                costing: Costing) -> ChunkCosts:
    """The per-chunk pass over analysed queries ``start ..``: the replay's decisions per noise
    source (or ``given``), ``log q`` and ``log pr_answered`` (0 without a selection step or
    ``statistics``), the answer weight (``pr_answered`` if expected, else the decision) and,
    with ``curves``, the per-query curves."""
    noise, selection, answer = costing.noise, costing.selection, costing.answer
    runs = (given,) if given is not None else tuple(
        costing.mechanism.replay(block, noise=one, start=start, student=student,
                                 labels=costing.labels)
        for one in (noise if isinstance(noise, tuple) else (noise,)))
    made, zeros = runs[0], np.zeros(block.shape[0])
    statistics = costing.statistics
    log_q = answer.statistic(block, student) if statistics else zeros
    expected = costing.accounting == "expected"
    raised = None
    if selection is None or not statistics:
        log_pr = zeros
    elif expected and selection.raised is not None and selection.raised_charge is not None:
        log_pr, raised = selection.raised(block, student)
    else:
        log_pr = selection.statistic(block, student)
    if not expected:
        weight = made.answered.astype(np.float64)
    else:  # pr_answered, never below the mechanism's (threshold.raised_charge)
        weight = np.exp(log_pr)
        if raised is not None and selection is not None and selection.raised_charge:
            weight[raised] = selection.raised_charge(log_pr[raised])
    independent = costing.accounting == "data-independent"
    orders = costing.orders
    costs = None if not costing.curves else StepRows(
        *step_curves(selection, log_pr, orders, independent),
        *step_curves(answer, log_q, orders, independent, costing.kept), weight)
    return ChunkCosts(block, made, log_q, log_pr, weight, costs, runs, raised)


def run_charges(rows, *, mechanism, accounting: str, seed: int, q_bound: str,
                student_rows=None, decisions=None) -> Callable[[int, int], np.ndarray]:
    """``(start, stop) ->`` answer charges of analysed queries ``start .. stop-1`` (0/1, or
    ``pr_answered`` if expected): the run's ``answered`` column re-formed a chunk at a time
    from ``rows`` (noise keyed by position, math:mechanisms)."""
    noise = NoiseSource(seed)

    def charges(start: int, stop: int) -> np.ndarray:
        # steps looked up per chunk, not before: the release first refuses a mechanism it
        # does not apply to (SVT-PATE has no per-query steps)
        selection, answer = mechanism_steps(mechanism, q_bound=q_bound)
        return block_costs(rows[start:stop],
                           None if student_rows is None else student_rows[start:stop], start,
                           None if decisions is None else decisions.padded(start, stop),
                           Costing(mechanism, selection, answer, noise=noise,
                                   accounting=accounting, curves=False)).weight
    return charges

