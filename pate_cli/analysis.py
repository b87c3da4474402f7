"""Votes + mechanism + accounting mode -> per-query costs and totals.

The only module that knows the cost table of MATH.md section 7. Queries are processed in
chunks (a memory-mapped file is never loaded whole); inside a chunk every formula runs
over whole arrays. Cost curves are computed once per distinct statistic (the selection
step depends only on ``round(max n)``, the answer step only on ``log q``) and gathered,
and cumulative sums run in file order with an explicit carry, so every number is
identical whatever the chunk size.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from .accounting.conversion import check_delta, conversion_offset, rdp_to_epsilon
from .accounting.gnmax import log_q_gnmax, rdp_gnmax, rdp_gnmax_data_independent
from .accounting.laplace import log_q_lnmax, rdp_lnmax, rdp_lnmax_data_independent
from .accounting.threshold import (
    log_pr_answered,
    rdp_threshold,
    rdp_threshold_data_independent,
)
from .mechanisms import GNMax, LNMax, NoiseSource
from .orders import default_orders, validate_orders

ACCOUNTING_MODES = ("replay", "expected", "data-independent")

# Rows of (queries x orders) work arrays processed at once: about 1 MB per array, so the
# element-wise passes stay in cache.
_WORK_ELEMENTS = 1 << 17
DEFAULT_CHUNK = 8192


class OrderGridWarning(UserWarning):
    """The best order is the first or last of the grid: a wider grid may give less."""


@dataclass(frozen=True)
class _Step:
    """One privacy-costing step of a mechanism (MATH.md section 7).

    ``statistic`` maps a vote chunk to the per-query number its cost depends on
    (``log q`` or ``log pr_answered``); ``rdp`` maps distinct statistics to RDP curves;
    ``independent`` gives the data-independent curve (MATH.md section 2).
    """

    statistic: Callable[[np.ndarray], np.ndarray]
    rdp: Callable[[np.ndarray, np.ndarray], np.ndarray]
    independent: Callable[[np.ndarray], np.ndarray]


def _steps(mechanism) -> tuple[_Step | None, _Step]:
    """The (selection, answer) steps of a mechanism; selection is None if it has none."""
    if isinstance(mechanism, LNMax):
        lam = mechanism.laplace_scale
        answer = _Step(lambda v: log_q_lnmax(v, scale=lam),
                       lambda s, o: rdp_lnmax(s, scale=lam, orders=o),
                       lambda o: rdp_lnmax_data_independent(scale=lam, orders=o))
        return None, answer
    sigma = mechanism.sigma
    answer = _Step(lambda v: log_q_gnmax(v, sigma=sigma),
                   lambda s, o: rdp_gnmax(s, sigma=sigma, orders=o),
                   lambda o: rdp_gnmax_data_independent(sigma=sigma, orders=o))
    if isinstance(mechanism, GNMax):
        return None, answer
    t, s1 = mechanism.threshold, mechanism.sigma_threshold
    selection = _Step(lambda v: log_pr_answered(v.max(axis=1), threshold=t, sigma_threshold=s1),
                      lambda s, o: rdp_threshold(s, sigma_threshold=s1, orders=o),
                      lambda o: rdp_threshold_data_independent(sigma_threshold=s1, orders=o))
    return selection, answer


@dataclass
class AnalysisResult:
    """Everything one analysis produced: per-query arrays (file order) and totals.

    ``answered`` per query is the charge weight of the answer step: 0/1 in replay and
    data-independent accounting (what was released), ``pr_answered`` in expected
    accounting. ``rdp_selection``/``rdp_answer`` are at the reported ``order``, the
    answer column already multiplied by that weight, so each column sums to the
    corresponding entry of ``rdp_at_order``. ``.summary`` and ``.per_query`` give the
    dict / DataFrame forms (see ``pate_cli.report``).
    """

    mechanism: object
    accounting: str
    conversion: str
    delta: float
    seed: int
    orders: np.ndarray
    teachers: float
    classes: int
    budget_limit: float | None
    plurality: np.ndarray
    plurality_class: np.ndarray
    answered: np.ndarray
    label: np.ndarray
    log_q: np.ndarray
    log_pr_answered: np.ndarray
    epsilon_query: np.ndarray
    epsilon_cumulative: np.ndarray
    order_cumulative: np.ndarray
    rdp_selection: np.ndarray
    rdp_answer: np.ndarray
    rdp_total: np.ndarray
    epsilon: float
    order: float
    epsilon_data_independent: float
    order_data_independent: float
    answered_total: float
    rdp_at_order: dict
    label_accuracy: float | None
    budget_stopped_at: int | None
    warnings: list = field(default_factory=list)
    source: object = None

    @property
    def queries(self) -> int:
        return int(self.plurality.shape[0])

    @property
    def summary(self) -> dict:
        from .report import summary_dict

        return summary_dict(self)

    @property
    def per_query(self):
        from .report import per_query_frame

        return per_query_frame(self)


def analyze_votes(votes, mechanism, *, teachers: float | None = None,
                  accounting: str = "replay", delta: float = 1e-5, orders=None,
                  conversion: str = "classic", seed: int = 0, queries: int | None = None,
                  budget: float | None = None, labels=None,
                  chunk_size: int = DEFAULT_CHUNK, source=None) -> AnalysisResult:
    """Analyse ``votes`` (``(queries, K)``, array or memory map) under ``mechanism``.

    ``accounting``: ``replay`` charges what the seeded run did, ``expected`` charges the
    answer step with ``pr_answered`` (the 2018 paper's analysis), ``data-independent``
    charges MATH.md section 2's costs for the replay's decisions. ``budget`` turns the
    replay into a budget run (MATH.md section 7). Labels always come from the seeded
    replay. Raises ``ValueError`` for bad parameters.
    """
    if accounting not in ACCOUNTING_MODES:
        raise ValueError(f"accounting must be one of {', '.join(ACCOUNTING_MODES)}, "
                         f"got {accounting!r}")
    check_delta(delta)
    orders = default_orders() if orders is None else validate_orders(orders)
    offset = conversion_offset(orders=orders, delta=delta, conversion=conversion)
    if budget is not None:
        if accounting == "expected":
            raise ValueError("--budget runs are replays: use --accounting replay or "
                             "data-independent")
        if not (math.isfinite(budget) and budget > 0):
            raise ValueError(f"budget must be positive, got {budget!r}")
    if not (isinstance(chunk_size, (int, np.integer)) and chunk_size >= 1):
        raise ValueError(f"chunk size must be a positive integer, got {chunk_size!r}")
    total_queries = votes.shape[0]
    if queries is None:
        queries = total_queries
    elif queries < 1 or queries > total_queries:
        raise ValueError(f"--queries {queries} is outside 1..{total_queries} "
                         "(the number of queries in the file)")
    if teachers is None:
        teachers = float(np.asarray(votes[0], dtype=np.float64).sum())

    selection, answer = _steps(mechanism)
    independent = accounting == "data-independent"
    noise = NoiseSource(seed)
    columns = {name: np.empty(queries) for name in
               ("plurality", "answered", "log_q", "log_pr_answered", "epsilon_query",
                "epsilon_cumulative", "order_cumulative")}
    plurality_class = np.empty(queries, dtype=np.int64)
    label = np.empty(queries, dtype=np.int64)
    carry = np.zeros(orders.size)
    stopped_at = None
    for start in range(0, queries, chunk_size):
        stop = min(queries, start + chunk_size)
        block = np.asarray(votes[start:stop], dtype=np.float64)
        decisions = mechanism.replay(block, noise=noise, start=start)
        log_q = answer.statistic(block)
        log_pr = np.zeros(stop - start) if selection is None else selection.statistic(block)
        sel_curves, sel_index = _curves(selection, log_pr, orders, independent)
        ans_curves, ans_index = _curves(answer, log_q, orders, independent)
        if accounting == "expected":
            weight = np.exp(log_pr)
        else:
            weight = decisions.answered.astype(np.float64)
        if budget is not None:
            weight, first_refusal = _budget_run(sel_curves, sel_index, ans_curves, ans_index,
                                                weight, carry, offset, budget)
            if stopped_at is None and first_refusal is not None:
                stopped_at = start + first_refusal
        released = weight > 0 if accounting != "expected" else decisions.answered
        eps_query, eps_cum, order_index, carry = _accumulate(
            sel_curves, sel_index, ans_curves, ans_index, weight, carry, offset)
        part = slice(start, stop)
        columns["plurality"][part] = block.max(axis=1)
        plurality_class[part] = np.argmax(block, axis=1)
        columns["answered"][part] = weight
        label[part] = np.where(released, decisions.labels, -1)
        columns["log_q"][part] = log_q
        columns["log_pr_answered"][part] = log_pr
        columns["epsilon_query"][part] = eps_query
        columns["epsilon_cumulative"][part] = eps_cum
        columns["order_cumulative"][part] = orders[order_index]

    epsilon, order = (float(x) for x in rdp_to_epsilon(carry, orders=orders, delta=delta,
                                                      conversion=conversion))
    notes = []
    best = int(np.flatnonzero(orders == order)[0])
    if orders.size > 1 and best in (0, orders.size - 1) and epsilon > 0:
        edge = "first" if best == 0 else "last"
        notes.append(f"the best order {order:g} is the {edge} of the grid; "
                     "a wider --orders grid may give a smaller epsilon")
        warnings.warn(notes[-1], OrderGridWarning, stacklevel=2)

    weight = columns["answered"]
    answered_total = float(np.sum(weight))
    at_order = np.array([order])
    rdp_sel_q, rdp_ans_q = _per_query_at_order(selection, answer, columns, weight, at_order,
                                               independent)
    di_curve = answered_total * answer.independent(orders)
    if selection is not None:
        di_curve = di_curve + queries * selection.independent(orders)
    eps_di, order_di = (float(x) for x in rdp_to_epsilon(di_curve, orders=orders, delta=delta,
                                                        conversion=conversion))
    accuracy = None
    if labels is not None:
        truth = np.asarray(labels)[:queries]
        mask = label >= 0
        if mask.any():
            accuracy = float(np.mean(label[mask] == truth[mask]))
    return AnalysisResult(
        mechanism=mechanism, accounting=accounting, conversion=conversion, delta=delta,
        seed=int(seed), orders=orders, teachers=teachers, classes=int(votes.shape[1]),
        budget_limit=budget, plurality=columns["plurality"], plurality_class=plurality_class,
        answered=weight, label=label, log_q=columns["log_q"],
        log_pr_answered=columns["log_pr_answered"], epsilon_query=columns["epsilon_query"],
        epsilon_cumulative=columns["epsilon_cumulative"],
        order_cumulative=columns["order_cumulative"], rdp_selection=rdp_sel_q,
        rdp_answer=rdp_ans_q, rdp_total=carry, epsilon=epsilon, order=order,
        epsilon_data_independent=eps_di, order_data_independent=order_di,
        answered_total=answered_total,
        rdp_at_order={"selection": float(np.sum(rdp_sel_q)),
                      "answer": float(np.sum(rdp_ans_q))},
        label_accuracy=accuracy, budget_stopped_at=stopped_at, warnings=notes, source=source)


def _curves(step, statistic, orders, independent):
    """Distinct RDP curves of a step and, per query, the index of its curve."""
    count = statistic.shape[0]
    if step is None:
        return np.zeros((1, orders.size)), np.zeros(count, dtype=np.intp)
    if independent:
        return step.independent(orders)[None, :], np.zeros(count, dtype=np.intp)
    distinct, index = np.unique(statistic, return_inverse=True)
    return step.rdp(distinct, orders), index.reshape(-1)


def _rows(sel_curves, sel_index, ans_curves, ans_index, weight):
    """Per-query RDP curves ``selection + weight * answer`` (MATH.md section 7)."""
    rows = ans_curves[ans_index]
    rows *= weight[:, None]
    rows += sel_curves[sel_index]
    return rows


def _accumulate(sel_curves, sel_index, ans_curves, ans_index, weight, carry, offset):
    """Per-query and cumulative epsilon for one chunk, in cache-sized slices.

    The cumulative curve after query i is ``cum_{i-1} + rdp_i`` added in file order, so it
    does not depend on where chunks or slices start.
    """
    count = weight.shape[0]
    eps_query = np.empty(count)
    eps_cum = np.empty(count)
    order_index = np.empty(count, dtype=np.intp)
    step = max(1, _WORK_ELEMENTS // offset.size)
    carry = carry.copy()
    for lo in range(0, count, step):
        hi = min(count, lo + step)
        rows = _rows(sel_curves, sel_index[lo:hi], ans_curves, ans_index[lo:hi], weight[lo:hi])
        eps_query[lo:hi] = (rows + offset).min(axis=1)
        rows[0] += carry
        np.cumsum(rows, axis=0, out=rows)
        carry = rows[-1].copy()
        rows += offset
        best = np.argmin(rows, axis=1)
        order_index[lo:hi] = best
        eps_cum[lo:hi] = rows[np.arange(hi - lo), best]
    if np.any(offset < 0):  # the improved conversion is clipped at 0
        np.maximum(eps_query, 0.0, out=eps_query)
        np.maximum(eps_cum, 0.0, out=eps_cum)
    return eps_query, eps_cum, order_index, carry


def _epsilon_rows(curves, offset):
    eps = (curves + offset).min(axis=1)
    return np.maximum(eps, 0.0) if np.any(offset < 0) else eps


def _budget_run(sel_curves, sel_index, ans_curves, ans_index, weight, carry, offset, limit):
    """Decide which replay answers a budget run releases (MATH.md section 7).

    A query the replay answered is released only if the cumulative epsilon after it,
    answer included, stays within ``limit``; otherwise it abstains (its selection is still
    charged). Alternates between two vectorised searches: from a released state, the
    first query whose answer would break the budget (assuming all before are released);
    from a refusal, the first query whose answer fits again (assuming all before are
    refused). Windows double while nothing changes, so the work is linear in the chunk
    plus a short window per change of state.
    """
    count = weight.shape[0]
    released = weight.copy()
    carry = carry.copy()
    first_refusal = None
    position, window, refusing = 0, 256, False
    while position < count:
        end = min(count, position + window)
        part = slice(position, end)
        wanted = weight[part] > 0
        if not refusing:
            rows = _rows(sel_curves, sel_index[part], ans_curves, ans_index[part], weight[part])
            rows[0] += carry
            np.cumsum(rows, axis=0, out=rows)
            over = wanted & (_epsilon_rows(rows, offset) > limit)
            if not over.any():
                carry, position, window = rows[-1].copy(), end, window * 2
                continue
            k = int(np.argmax(over))
            before = carry if k == 0 else rows[k - 1]
            carry = before + sel_curves[sel_index[position + k]]
            released[position + k] = 0.0
            if first_refusal is None:
                first_refusal = position + k
            position, window, refusing = position + k + 1, 256, True
        else:
            base = sel_curves[sel_index[part]].copy()
            base[0] += carry
            np.cumsum(base, axis=0, out=base)
            previous = np.vstack([carry[None, :], base[:-1]])
            answered_rows = _rows(sel_curves, sel_index[part], ans_curves, ans_index[part],
                                  np.ones(end - position))
            fits = wanted & (_epsilon_rows(previous + answered_rows, offset) <= limit)
            if not fits.any():
                released[part][wanted] = 0.0
                carry, position, window = base[-1].copy(), end, window * 2
                continue
            k = int(np.argmax(fits))
            refused = np.flatnonzero(wanted[:k]) + position
            released[refused] = 0.0
            carry = previous[k] + answered_rows[k]
            position, window, refusing = position + k + 1, 256, False
    return released, first_refusal


def _per_query_at_order(selection, answer, columns, weight, at_order, independent):
    """Per-query selection and (weighted) answer RDP at the reported order."""
    count = weight.shape[0]
    if selection is None:
        rdp_sel = np.zeros(count)
    else:
        curves, index = _curves(selection, columns["log_pr_answered"], at_order, independent)
        rdp_sel = curves[index, 0]
    curves, index = _curves(answer, columns["log_q"], at_order, independent)
    return rdp_sel, weight * curves[index, 0]
