"""The cost table of MATH.md section 7: each mechanism's (selection, answer) steps, and
one chunk of a run costed by it.

The only place that maps a mechanism to the statistics its costs depend on and to its
data-dependent and data-independent RDP curves. :func:`chunk_costs` gives a chunk of
analysed queries ``start .. stop-1``: the decisions (replayed or given), the statistics
and the per-query cost curves, as every pass over the queries needs them (the budget
walk, the per-query table, the groups, the outputs), and :func:`run_charges` the answer
step's charges of a run formed again a chunk at a time (the smooth-sensitivity release).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from typing import NamedTuple

import numpy as np

from ..accounting.composition import StepRows, query_epsilons
from ..accounting.conversion import Conversion
from ..accounting.exponential import (
    log_q_exponential,
    rdp_exponential,
    rdp_exponential_data_independent,
)
from ..accounting.gnmax import rdp_gnmax, rdp_gnmax_data_independent
from ..accounting.laplace import log_q_lnmax, rdp_lnmax, rdp_lnmax_data_independent
from ..accounting.q_bound import check_q_bound, log_q_bound
from ..accounting.screening import rdp_screening
from ..accounting.subsampling import sampled_gaussian_curve, sampled_laplace_curve
from ..accounting.threshold import (
    log_pr_answered,
    rdp_threshold,
    rdp_threshold_data_independent,
)
from ..decisions import OUTCOME_ABSTAIN, Decisions
from ..inputs.rows import rows_of, rows_read_once
from ..mechanisms import NoiseSource
from ..mechanisms.sampled import SampledMechanism, unsampled


@dataclass(frozen=True)
class Step:
    """One privacy-costing step of a mechanism (MATH.md section 7).

    ``statistic`` maps a vote chunk to the per-query number its cost depends on
    (``log q`` or ``log pr_answered``); ``rdp`` maps distinct statistics to RDP curves;
    ``independent`` gives the data-independent curve (MATH.md section 2).
    """

    statistic: Callable[[np.ndarray], np.ndarray]
    rdp: Callable[[np.ndarray, np.ndarray], np.ndarray]
    independent: Callable[[np.ndarray], np.ndarray]


def _laplace_answer(mechanism, q_bound: str = "union") -> Step:
    """LNMax's noisy argmax: MATH.md s.5's curve, capped by the exact data-independent
    one (``rdp_lnmax_data_independent``, valid for every query), so that the
    data-dependent figure never exceeds the data-independent one."""
    lam = mechanism.laplace_scale
    return Step(partial(_lnmax_statistic, lam), partial(_lnmax_rdp, lam),
                partial(_lnmax_independent, lam))


def _gaussian_answer(mechanism, q_bound: str = "union") -> Step:
    """The noisy argmax; ``q_bound`` picks Prop. 7 or MATH.md s.13's integral for log q."""
    sigma = mechanism.sigma
    return Step(partial(_gaussian_statistic, sigma, q_bound), partial(_gaussian_rdp, sigma),
                partial(_gaussian_independent, sigma))


def _exponential_answer(mechanism, q_bound: str = "union") -> Step:
    """The exponential mechanism's Gumbel-max answer (MATH.md s.15): its exact log q,
    s.5's curve at ``eps0 = 2 eta`` capped by ``min(eps0, alpha eps0^2 / 8)``."""
    eta = mechanism.eta
    return Step(partial(_exponential_statistic, eta), partial(_exponential_rdp, eta),
                partial(_exponential_independent, eta))


def _threshold_selection(mechanism) -> Step:
    """The noisy threshold on ``mechanism.selection_counts`` (max n, or max n - M p for
    Interactive, MATH.md s.4). Its data-independent curve is MATH.md s.17's exact one
    (``screening_counts``), which also caps s.4's data-dependent curve (the min of two
    valid bounds), or s.2's Gaussian curve under ``screening="gaussian"``."""
    s1 = mechanism.sigma_threshold
    screen = (s1, mechanism.threshold, *screening_counts(mechanism))
    return Step(partial(_threshold_statistic, mechanism), partial(_threshold_rdp, *screen),
                partial(_threshold_independent, *screen))


def screening_counts(mechanism) -> tuple[str, float, float]:
    """``(kind, low, high)``: the counts a selecting mechanism's threshold step may
    compare (MATH.md s.17). ``integer``: plain votes, ``max n`` in ``0..M``; ``real``:
    ``max n`` of weighted votes in ``[0, M]``, or Interactive's ``max_j (n_j - M p_j)``,
    which lies in ``[-M/2, M]`` (``n_j >= 0``, rows at most M and at least 2 classes, so
    the largest of K numbers summing to ``sum n - M >= -M`` is at least ``-M/K``);
    ``gaussian``: s.2's curve (``screening="gaussian"``, or M unknown)."""
    teachers = getattr(mechanism, "teachers", None)
    if mechanism.screening == "gaussian" or teachers is None:
        return "gaussian", 0.0, 0.0
    top = float(teachers)
    if mechanism.name == "interactive":
        return "real", -top / 2.0, top
    whole = bool(mechanism.integer_votes) and top.is_integer()
    return ("integer" if whole else "real"), 0.0, top


# The steps' functions, at module level so that a step pickles (cluster workers run them).

def _lnmax_statistic(lam, v, p):
    return log_q_lnmax(v, scale=lam)


def _lnmax_rdp(lam, s, o):
    return np.minimum(rdp_lnmax(s, scale=lam, orders=o),
                      rdp_lnmax_data_independent(scale=lam, orders=o))


def _lnmax_independent(lam, o):
    return rdp_lnmax_data_independent(scale=lam, orders=o)


def _exponential_statistic(eta, v, p):
    return log_q_exponential(v, eta=eta)


def _exponential_rdp(eta, s, o):
    return rdp_exponential(s, eta=eta, orders=o)


def _exponential_independent(eta, o):
    return rdp_exponential_data_independent(eta=eta, orders=o)


def _gaussian_statistic(sigma, q_bound, v, p):
    return log_q_bound(v, sigma=sigma, q_bound=q_bound)


def _gaussian_rdp(sigma, s, o):
    return rdp_gnmax(s, sigma=sigma, orders=o)


def _gaussian_independent(sigma, o):
    return rdp_gnmax_data_independent(sigma=sigma, orders=o)


def _threshold_statistic(mechanism, v, p):
    return log_pr_answered(mechanism.selection_counts(v, p), threshold=mechanism.threshold,
                           sigma_threshold=mechanism.sigma_threshold)


def _threshold_rdp(s1, threshold, kind, low, high, s, o):
    dependent = rdp_threshold(s, sigma_threshold=s1, orders=o)
    if kind == "gaussian":
        return dependent
    return np.minimum(dependent, _threshold_independent(s1, threshold, kind, low, high, o))


def _threshold_independent(s1, threshold, kind, low, high, o):
    if kind == "gaussian":
        return rdp_threshold_data_independent(sigma_threshold=s1, orders=o)
    return rdp_screening(threshold=threshold, sigma_threshold=s1, low=low, high=high,
                         integer=kind == "integer", orders=o)


# MATH.md section 7: mechanism name -> (selection step or None, answer step). SVT-PATE is
# not here: its cost is the sparse-vector guarantee of section 8 (``analysis.svt``).
COST_TABLE: dict[str, tuple[Callable | None, Callable]] = {
    "lnmax": (None, _laplace_answer),
    "gnmax": (None, _gaussian_answer),
    "confident": (_threshold_selection, _gaussian_answer),
    "interactive": (_threshold_selection, _gaussian_answer),
    "exponential": (None, _exponential_answer),
    "confident-exponential": (_threshold_selection, _exponential_answer),
}


def mechanism_steps(mechanism, *, q_bound: str = "union") -> tuple[Step | None, Step]:
    """The (selection, answer) steps of a mechanism; selection is None if it has none.

    Statistics take ``(votes, student)``; ``student`` is None except for Interactive.
    ``q_bound`` (``union`` or ``integral``, MATH.md s.3/s.13) is the bound on q of a
    Gaussian answer step; LNMax's Laplace step has only its own bound (``union`` only), and
    the exponential answer's q is exact. A sampled aggregator (``mechanisms.sampled``) has
    its inner steps with amplified data-independent curves.
    """
    check_q_bound(q_bound)
    if isinstance(mechanism, SampledMechanism):  # sampled voters (MATH.md s.16)
        return sampled_steps(*mechanism_steps(mechanism.inner, q_bound=q_bound), mechanism)
    try:
        selection, answer = COST_TABLE[mechanism.name]
    except KeyError:
        raise ValueError(f"no per-query cost steps for {mechanism.name} "
                         "(SVT-PATE is accounted by its own guarantee)") from None
    if q_bound != "union" and answer is not _gaussian_answer:
        raise ValueError(f"--q-bound {q_bound} applies to Gaussian answers (gnmax, "
                         f"confident, interactive), not {mechanism.name}")
    return (None if selection is None else selection(mechanism)), answer(mechanism, q_bound)


def data_independent_curve(selection, answer, *, answered, queries, orders) -> np.ndarray:
    """The worst-case RDP curve of a run (MATH.md section 2): ``answered`` answer steps
    plus, for a selecting aggregator, ``queries`` selection steps."""
    curve = answered * answer.independent(orders)
    if selection is not None:
        curve = curve + queries * selection.independent(orders)
    return curve


def step_curves(step, statistic, orders, independent, kept=None):
    """Distinct RDP curves of a step and, per query, the index of its curve. ``kept`` (an
    ``curve_store.SharedCurves``) serves the curves it holds and keeps the others,
    so that the run's totals need not evaluate them again (the same bits)."""
    count = statistic.shape[0]
    if step is None:
        return np.zeros((1, orders.size)), np.zeros(count, dtype=np.intp)
    if independent:
        return step.independent(orders)[None, :], np.zeros(count, dtype=np.intp)
    distinct, index = np.unique(statistic, return_inverse=True)
    rdp = step.rdp if kept is None else kept.serving(step.rdp, orders)
    return rdp(distinct, orders), index.reshape(-1)


def curve_function(step, independent: bool):
    """Sorted distinct statistics -> ``(distinct, orders)`` curves of ``step`` (its
    data-independent curve on every row under ``independent``); None without a step."""
    if step is None:
        return None
    if independent:
        return partial(_independent_rows, step)
    return step.rdp


def _independent_rows(step, keys: np.ndarray, orders: np.ndarray) -> np.ndarray:
    """``step``'s data-independent curve on every row (picklable, for cluster workers)."""
    return np.broadcast_to(step.independent(orders), (keys.size, orders.size))


def per_query_at_order(selection, answer, columns, weight, at_order, independent):
    """Per-query selection and (weighted) answer RDP at the reported order."""
    count = weight.shape[0]
    if selection is None:
        rdp_sel = np.zeros(count)
    else:
        curves, index = step_curves(selection, columns["log_pr_answered"], at_order, independent)
        rdp_sel = curves[index, 0]
    curves, index = step_curves(answer, columns["log_q"], at_order, independent)
    return rdp_sel, weight * curves[index, 0]


def sampled_steps(selection, answer, mechanism: SampledMechanism):
    """The (selection, answer) steps of the inner aggregator with their data-independent
    curves amplified (MATH.md s.16, ``accounting.subsampling``; the data-dependent ones are
    never used: s.16 refuses them)."""
    sampling = mechanism.sampling
    if unsampled(sampling):  # every unit votes: the steps' own curves, bit for bit
        return selection, answer
    if mechanism.name == "lnmax":
        curve = partial(sampled_laplace_curve, sampling.scheme, sampling.rate,
                        mechanism.laplace_scale, sampling.vote_change)
    else:
        curve = partial(sampled_gaussian_curve, sampling.scheme, sampling.rate,
                        mechanism.sigma / sampling.answer_sensitivity)
    answer = replace(answer, independent=curve)
    if selection is not None:
        selection = replace(selection, independent=partial(
            sampled_gaussian_curve, sampling.scheme, sampling.rate, mechanism.sigma_threshold))
    return selection, answer


class ChunkCosts(NamedTuple):
    """A chunk's votes, decisions, statistics, answer weight and (if asked) curves."""

    block: np.ndarray
    made: Decisions
    log_q: np.ndarray
    log_pr: np.ndarray
    weight: np.ndarray
    costs: StepRows | None
    epsilon_query: np.ndarray | None = None


def chunk_costs(votes, positions, start: int, stop: int, *, mechanism, selection, answer,
                noise, accounting: str, orders: np.ndarray, student=None,
                decisions: Decisions | None = None, curves: bool = True,
                kept=None, conversion: Conversion | None = None) -> ChunkCosts:
    """The chunk of analysed queries ``start .. stop-1``: the seeded replay's decisions
    (or the given ``decisions``' rows), ``log q``, ``log pr_answered`` (0 without a
    selection step), the answer weight (``pr_answered`` under expected accounting, else
    the decision) and, with ``curves``, the per-query curves (``StepRows``); ``kept``
    holds the answer step's distinct curves for the run's totals (``step_curves``).
    With a ``conversion`` too, each query's own epsilon (``composition.query_epsilons``:
    no carry needed, so it is formed here, where chunks are formed ahead on threads)."""
    block = rows_read_once(votes, positions, start, stop)
    block_student = None if student is None else rows_of(student, positions, start, stop)
    if decisions is None:
        made = mechanism.replay(block, noise=noise, start=start, student=block_student)
    else:
        made = given_rows(decisions, start, stop)
    log_q = answer.statistic(block, block_student)
    log_pr = (np.zeros(stop - start) if selection is None
              else selection.statistic(block, block_student))
    weight = np.exp(log_pr) if accounting == "expected" else made.answered.astype(np.float64)
    costs = None
    if curves:
        independent = accounting == "data-independent"
        sel_curves, sel_index = step_curves(selection, log_pr, orders, independent)
        ans_curves, ans_index = step_curves(answer, log_q, orders, independent, kept)
        costs = StepRows(sel_curves, sel_index, ans_curves, ans_index, weight)
    epsilon_query = (None if costs is None or conversion is None
                     else query_epsilons(costs, stop - start, conversion))
    return ChunkCosts(block, made, log_q, log_pr, weight, costs, epsilon_query)


def run_charges(votes, positions, *, mechanism, accounting: str, seed: int, q_bound: str,
                student=None, decisions=None) -> Callable[[int, int], np.ndarray]:
    """``(start, stop) ->`` the answer step's charge of analysed queries ``start ..
    stop-1`` (0/1 as the seeded replay or the given ``decisions`` decided, ``pr_answered``
    under expected accounting): the run's ``answered`` column, formed again a chunk at a
    time (the replay's noise is keyed by query position, MATH.md s.1)."""
    noise = NoiseSource(seed)

    def charges(start: int, stop: int) -> np.ndarray:
        # the steps looked up per chunk (cheap), not before: the release first names a
        # mechanism it does not apply to (SVT-PATE has no per-query steps)
        selection, answer = mechanism_steps(mechanism, q_bound=q_bound)
        return chunk_costs(votes, positions, start, stop, mechanism=mechanism,
                           selection=selection, answer=answer, noise=noise,
                           accounting=accounting, orders=np.ones(1), student=student,
                           decisions=decisions, curves=False).weight
    return charges


def given_rows(decisions: Decisions, start: int, stop: int) -> Decisions:
    """Queries ``start .. stop-1`` of given decisions; past their end (a budget run that
    halts there), nothing answered."""
    count = stop - start
    have = max(0, min(stop, decisions.answered.size) - start)
    answered = np.zeros(count, dtype=bool)
    labels = np.full(count, -1, dtype=np.int64)
    answered[:have] = decisions.answered[start:start + have]
    labels[:have] = decisions.label[start:start + have]
    code = None
    if decisions.code is not None:
        code = np.full(count, OUTCOME_ABSTAIN, dtype=np.int8)
        code[:have] = decisions.code[start:start + have]
    return Decisions(answered, labels, code)
