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
from .mechanisms import (
    OUTCOME_ABSTAIN,
    OUTCOME_NAMES,
    OUTCOME_STUDENT,
    SVTPATE,
    GNMax,
    InteractiveGNMax,
    LNMax,
    NoiseSource,
)
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


def mechanism_steps(mechanism) -> tuple[_Step | None, _Step]:
    """The (selection, answer) steps of a mechanism; selection is None if it has none.

    Statistics take ``(votes, student)``; ``student`` is None except for Interactive.
    """
    if isinstance(mechanism, LNMax):
        lam = mechanism.laplace_scale
        answer = _Step(lambda v, p: log_q_lnmax(v, scale=lam),
                       lambda s, o: rdp_lnmax(s, scale=lam, orders=o),
                       lambda o: rdp_lnmax_data_independent(scale=lam, orders=o))
        return None, answer
    sigma = mechanism.sigma
    answer = _Step(lambda v, p: log_q_gnmax(v, sigma=sigma),
                   lambda s, o: rdp_gnmax(s, sigma=sigma, orders=o),
                   lambda o: rdp_gnmax_data_independent(sigma=sigma, orders=o))
    if isinstance(mechanism, GNMax):
        return None, answer
    t, s1 = mechanism.threshold, mechanism.sigma_threshold
    if isinstance(mechanism, InteractiveGNMax):
        def statistic(v, p):  # selection on v = n - M p (MATH.md s.4)
            return log_pr_answered(mechanism.shifted_max(v, p), threshold=t, sigma_threshold=s1)
    else:
        def statistic(v, p):
            return log_pr_answered(v.max(axis=1), threshold=t, sigma_threshold=s1)
    selection = _Step(statistic,
                      lambda s, o: rdp_threshold(s, sigma_threshold=s1, orders=o),
                      lambda o: rdp_threshold_data_independent(sigma_threshold=s1, orders=o))
    return selection, answer


@dataclass
class AnalysisResult:
    """Everything one analysis produced: per-query arrays (file order) and totals.

    ``query_index`` is the file row of each analysed query (``--query-indices`` may pick
    and order rows). ``answered`` per query is the charge weight of the answer step: 0/1
    in replay and data-independent accounting (what was released), ``pr_answered`` in expected
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
    query_index: np.ndarray | None = None
    outcome: np.ndarray | None = None
    accuracy_by_outcome: dict | None = None
    initial_rdp: np.ndarray | None = None
    extra: dict = field(default_factory=dict)

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
                  budget: float | None = None, labels=None, student=None,
                  query_indices=None, initial_rdp=None, salt: int = 0,
                  chunk_size: int = DEFAULT_CHUNK, source=None) -> AnalysisResult:
    """Analyse ``votes`` (``(queries, K)``, array or memory map) under ``mechanism``.

    ``accounting``: ``replay`` charges what the seeded run did, ``expected`` charges the
    answer step with ``pr_answered`` (the 2018 paper's analysis), ``data-independent``
    charges MATH.md section 2's costs for the replay's decisions. ``budget`` turns the
    replay into a budget run (MATH.md section 7). Labels always come from the seeded
    replay. ``student`` (``(queries, K)`` probabilities) is required by Interactive-GNMax.
    ``query_indices`` analyses those rows in that order (``queries`` then takes the first
    N of them). ``initial_rdp`` (one value per order) is RDP already spent, added before
    the first query (``--add-rdp``, earlier rounds). ``salt`` gives independent noise
    under the same seed. Raises ``ValueError`` for bad parameters.
    """
    orders, offset = _checked_setting(accounting, delta, orders, conversion)
    if budget is not None:
        if accounting == "expected":
            raise ValueError("--budget runs are replays: use --accounting replay or "
                             "data-independent")
        if not (math.isfinite(budget) and budget > 0):
            raise ValueError(f"budget must be positive, got {budget!r}")
    if not (isinstance(chunk_size, (int, np.integer)) and chunk_size >= 1):
        raise ValueError(f"chunk size must be a positive integer, got {chunk_size!r}")
    positions = _positions(votes.shape[0], query_indices, queries)
    queries = positions.size
    if teachers is None:
        teachers = float(np.asarray(votes[0], dtype=np.float64).sum())
    if isinstance(mechanism, InteractiveGNMax):
        if student is None:
            raise ValueError("Interactive-GNMax needs the student's probabilities (--student)")
        if student.shape != votes.shape:
            raise ValueError(f"the student file has shape {student.shape}, the votes "
                             f"{votes.shape}")
    if isinstance(mechanism, SVTPATE):
        from .svt_analysis import analyze_svt  # SVT's own path (MATH.md s.8)

        return analyze_svt(votes, mechanism, positions=positions, teachers=teachers,
                            accounting=accounting, delta=delta, orders=orders,
                            conversion=conversion, seed=seed, labels=labels,
                            initial_rdp=initial_rdp, salt=salt, chunk_size=chunk_size,
                            source=source)

    selection, answer = mechanism_steps(mechanism)
    independent = accounting == "data-independent"
    noise = NoiseSource(seed, salt=salt)
    columns = {name: np.empty(queries) for name in
               ("plurality", "answered", "log_q", "log_pr_answered", "epsilon_query",
                "epsilon_cumulative", "order_cumulative")}
    plurality_class = np.empty(queries, dtype=np.int64)
    label = np.empty(queries, dtype=np.int64)
    interactive = isinstance(mechanism, InteractiveGNMax)
    if student is not None and not interactive:
        raise ValueError(f"a student applies to Interactive-GNMax, not {mechanism.name}")
    outcome = np.empty(queries, dtype=np.int8) if interactive else None
    carry = initial_carry(initial_rdp, orders)
    stopped_at = None
    for start in range(0, queries, chunk_size):
        stop = min(queries, start + chunk_size)
        block = rows_of(votes, positions, start, stop)
        block_student = None if student is None else rows_of(student, positions, start, stop)
        if interactive:
            decisions = mechanism.replay(block, noise=noise, start=start, student=block_student)
        else:
            decisions = mechanism.replay(block, noise=noise, start=start)
        log_q = answer.statistic(block, block_student)
        log_pr = (np.zeros(stop - start) if selection is None
                  else selection.statistic(block, block_student))
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
        block_labels = np.where(released, decisions.labels, -1)
        if interactive:  # reinforced student labels are output too (no teacher cost)
            from_student = decisions.outcome == OUTCOME_STUDENT
            block_labels = np.where(from_student, decisions.labels, block_labels)
            outcome[part] = np.where(released | from_student, decisions.outcome,
                                     OUTCOME_ABSTAIN)
        label[part] = block_labels
        columns["log_q"][part] = log_q
        columns["log_pr_answered"][part] = log_pr
        columns["epsilon_query"][part] = eps_query
        columns["epsilon_cumulative"][part] = eps_cum
        columns["order_cumulative"][part] = orders[order_index]

    epsilon, order = (float(x) for x in rdp_to_epsilon(carry, orders=orders, delta=delta,
                                                      conversion=conversion))
    notes = grid_edge_notes(orders, order, epsilon)

    weight = columns["answered"]
    answered_total = float(np.sum(weight))
    at_order = np.array([order])
    rdp_sel_q, rdp_ans_q = per_query_at_order(selection, answer, columns, weight, at_order,
                                               independent)
    di_curve = data_independent_curve(selection, answer, answered=answered_total,
                                      queries=queries, orders=orders)
    eps_di, order_di = (float(x) for x in rdp_to_epsilon(di_curve, orders=orders, delta=delta,
                                                        conversion=conversion))
    accuracy, by_outcome = label_accuracy(label, labels, positions, outcome)
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
        label_accuracy=accuracy, budget_stopped_at=stopped_at, warnings=notes, source=source,
        query_index=positions, outcome=outcome, accuracy_by_outcome=by_outcome,
        initial_rdp=None if initial_rdp is None else np.asarray(initial_rdp, dtype=float))


def _checked_setting(accounting, delta, orders, conversion) -> tuple[np.ndarray, np.ndarray]:
    """Validate the accounting setting; the orders and the conversion's offset per order."""
    if accounting not in ACCOUNTING_MODES:
        raise ValueError(f"accounting must be one of {', '.join(ACCOUNTING_MODES)}, "
                         f"got {accounting!r}")
    check_delta(delta)
    orders = default_orders() if orders is None else validate_orders(orders)
    return orders, conversion_offset(orders=orders, delta=delta, conversion=conversion)


def data_independent_curve(selection, answer, *, answered, queries, orders) -> np.ndarray:
    """The worst-case RDP curve of a run (MATH.md section 2): ``answered`` answer steps
    plus, for a selecting aggregator, ``queries`` selection steps."""
    curve = answered * answer.independent(orders)
    if selection is not None:
        curve = curve + queries * selection.independent(orders)
    return curve


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
        eps_query[lo:hi] = _epsilon_rows(rows, offset)
        rows[0] += carry
        np.cumsum(rows, axis=0, out=rows)
        carry = rows[-1].copy()
        rows += offset
        best = np.argmin(rows, axis=1)
        order_index[lo:hi] = best
        eps_cum[lo:hi] = rows[np.arange(hi - lo), best]
    if np.any(offset < 0):  # the improved conversion is clipped at 0
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


def per_query_at_order(selection, answer, columns, weight, at_order, independent):
    """Per-query selection and (weighted) answer RDP at the reported order."""
    count = weight.shape[0]
    if selection is None:
        rdp_sel = np.zeros(count)
    else:
        curves, index = _curves(selection, columns["log_pr_answered"], at_order, independent)
        rdp_sel = curves[index, 0]
    curves, index = _curves(answer, columns["log_q"], at_order, independent)
    return rdp_sel, weight * curves[index, 0]


def grid_edge_notes(orders, order, epsilon) -> list[str]:
    """A warning when the best order is the first or last of a grid of several."""
    best = int(np.flatnonzero(orders == order)[0])
    if orders.size > 1 and best in (0, orders.size - 1) and epsilon > 0:
        edge = "first" if best == 0 else "last"
        note = (f"the best order {order:g} is the {edge} of the grid; "
                "a wider --orders grid may give a smaller epsilon")
        warnings.warn(note, OrderGridWarning, stacklevel=3)
        return [note]
    return []


def _positions(total: int, query_indices, queries) -> np.ndarray:
    """File rows analysed, in order: ``query_indices`` (or all rows), first ``queries``."""
    if query_indices is None:
        available = total
    else:
        query_indices = np.asarray(query_indices)
        if query_indices.ndim != 1 or query_indices.size == 0:
            raise ValueError("query indices must be a non-empty list of row numbers")
        if query_indices.dtype.kind not in "iu":
            raise ValueError("query indices must be integers")
        bad = np.flatnonzero((query_indices < 0) | (query_indices >= total))
        if bad.size:
            raise ValueError(f"query index {int(query_indices[bad[0]])} (entry {bad[0]}) is "
                             f"outside 0..{total - 1}")
        seen, first = np.unique(query_indices, return_index=True)
        if seen.size != query_indices.size:
            repeated = np.setdiff1d(np.arange(query_indices.size), first)[0]
            raise ValueError(f"query index {int(query_indices[repeated])} is listed twice "
                             f"(entry {repeated})")
        available = query_indices.size
    if queries is None:
        queries = available
    elif queries < 1 or queries > available:
        raise ValueError(f"--queries {queries} is outside 1..{available} "
                         "(the number of queries available)")
    if query_indices is None:
        return np.arange(queries)
    return query_indices[:queries].astype(np.int64)


def rows_of(array, positions, start, stop) -> np.ndarray:
    """Rows ``positions[start:stop]`` of ``array`` as float64 (contiguous slices stay views
    of a memory map until converted)."""
    chosen = positions[start:stop]
    if chosen.size and chosen[-1] - chosen[0] == chosen.size - 1 and np.all(np.diff(chosen) == 1):
        return np.asarray(array[chosen[0] : chosen[-1] + 1], dtype=np.float64)
    return np.asarray(array[np.sort(chosen)], dtype=np.float64)[
        np.argsort(np.argsort(chosen))]


def initial_carry(initial_rdp, orders) -> np.ndarray:
    if initial_rdp is None:
        return np.zeros(orders.size)
    initial_rdp = np.asarray(initial_rdp, dtype=np.float64)
    if initial_rdp.shape != orders.shape or np.any(np.isnan(initial_rdp)) \
            or np.any(initial_rdp < 0):
        raise ValueError("the added RDP curve needs one non-negative value per order")
    return initial_rdp.copy()


def label_accuracy(label, labels, positions, outcome):
    """Accuracy over output labels, and per outcome for Interactive-GNMax."""
    if labels is None:
        return None, None
    truth = np.asarray(labels)[positions]
    mask = label >= 0
    accuracy = float(np.mean(label[mask] == truth[mask])) if mask.any() else None
    if outcome is None:
        return accuracy, None
    by_outcome = {}
    for code, name in enumerate(OUTCOME_NAMES):
        if name == "abstain":
            continue
        chosen = outcome == code
        by_outcome[name] = float(np.mean(label[chosen] == truth[chosen])) if chosen.any() \
            else None
    return accuracy, by_outcome




@dataclass(frozen=True)
class ReplayTotals:
    """The end-of-run figures of one seeded replay (what a sweep row averages)."""

    seed: int
    answered: float
    epsilon: float
    order: float
    epsilon_data_independent: float
    label_accuracy: float | None
    labels_output: int


def analyze_totals(votes, mechanism, *, seeds, teachers: float | None = None,
                   accounting: str = "replay", delta: float = 1e-5, orders=None,
                   conversion: str = "classic", queries: int | None = None,
                   budget: float | None = None, labels=None, student=None,
                   chunk_size: int = DEFAULT_CHUNK) -> list[ReplayTotals]:
    """End-of-run totals of ``analyze_votes`` for several seeds, sharing the work.

    The same numbers as ``analyze_votes(..., seed=s)`` for each ``s`` in ``seeds`` (the
    final RDP curve is summed in the same order, so epsilons are bit-identical), but the
    statistics and cost curves, which do not depend on the seed, are computed once, and
    no per-query epsilon is formed. This is what a parameter sweep needs. Budget runs,
    Interactive-GNMax and SVT-PATE, whose costs depend on the replay's path, run the full
    analysis once per seed.
    """
    seeds = [int(seed) for seed in seeds]
    if budget is not None or isinstance(mechanism, (InteractiveGNMax, SVTPATE)):
        return [_totals_of(analyze_votes(votes, mechanism, teachers=teachers,
                                         accounting=accounting, delta=delta, orders=orders,
                                         conversion=conversion, seed=seed, queries=queries,
                                         budget=budget, labels=labels, student=student,
                                         chunk_size=chunk_size))
                for seed in seeds]
    if student is not None:
        raise ValueError(f"a student applies to Interactive-GNMax, not {mechanism.name}")
    orders, _ = _checked_setting(accounting, delta, orders, conversion)
    positions = _positions(votes.shape[0], None, queries)
    queries = positions.size
    selection, answer = mechanism_steps(mechanism)
    independent = accounting == "data-independent"
    expected = accounting == "expected"
    noises = [NoiseSource(seed) for seed in seeds]
    carries = np.zeros((len(seeds), orders.size))
    answered = np.zeros(len(seeds)) if not expected else None
    expected_weight = np.empty(queries) if expected else None
    truth = None if labels is None else np.asarray(labels)
    correct = np.zeros(len(seeds), dtype=np.int64)
    output = np.zeros(len(seeds), dtype=np.int64)
    for start in range(0, queries, chunk_size):
        stop = min(queries, start + chunk_size)
        block = rows_of(votes, positions, start, stop)
        log_q = answer.statistic(block, None)
        log_pr = (np.zeros(stop - start) if selection is None
                  else selection.statistic(block, None))
        sel_curves, sel_index = _curves(selection, log_pr, orders, independent)
        ans_curves, ans_index = _curves(answer, log_q, orders, independent)
        curves = (sel_curves, sel_index, ans_curves, ans_index)
        if expected:
            expected_weight[start:stop] = np.exp(log_pr)
            carries[0] = _chunk_total(*curves, expected_weight[start:stop], carries[0])
        for run, noise in enumerate(noises):
            decisions = mechanism.replay(block, noise=noise, start=start)
            if not expected:
                weight = decisions.answered.astype(np.float64)
                answered[run] += np.count_nonzero(decisions.answered)
                carries[run] = _chunk_total(*curves, weight, carries[run])
            released = decisions.answered
            output[run] += np.count_nonzero(released)
            if truth is not None:
                correct[run] += np.count_nonzero(
                    released & (decisions.labels == truth[positions[start:stop]]))
    if expected:
        carries[1:] = carries[0]
        answered = np.full(len(seeds), float(np.sum(expected_weight)))
    totals = []
    for run, seed in enumerate(seeds):
        epsilon, order = (float(x) for x in rdp_to_epsilon(
            carries[run], orders=orders, delta=delta, conversion=conversion))
        di_curve = data_independent_curve(selection, answer, answered=answered[run],
                                          queries=queries, orders=orders)
        eps_di, _ = rdp_to_epsilon(di_curve, orders=orders, delta=delta, conversion=conversion)
        accuracy = (float(correct[run] / output[run])
                    if truth is not None and output[run] else None)
        totals.append(ReplayTotals(seed=seed, answered=float(answered[run]), epsilon=epsilon,
                                   order=order, epsilon_data_independent=float(eps_di),
                                   label_accuracy=accuracy, labels_output=int(output[run])))
    return totals


def _chunk_total(sel_curves, sel_index, ans_curves, ans_index, weight, carry):
    """``carry`` plus the chunk's per-query curves, added in file order in the slices
    ``_accumulate`` uses (so the sum equals its cumulative sum's last row bit for bit)."""
    count = weight.shape[0]
    step = max(1, _WORK_ELEMENTS // carry.size)
    for lo in range(0, count, step):
        hi = min(count, lo + step)
        rows = _rows(sel_curves, sel_index[lo:hi], ans_curves, ans_index[lo:hi], weight[lo:hi])
        rows[0] += carry
        carry = np.add.reduce(rows, axis=0)
    return carry


def _totals_of(result: AnalysisResult) -> ReplayTotals:
    return ReplayTotals(seed=result.seed, answered=float(result.answered_total),
                        epsilon=result.epsilon, order=float(result.order),
                        epsilon_data_independent=result.epsilon_data_independent,
                        label_accuracy=result.label_accuracy,
                        labels_output=int(np.count_nonzero(result.label >= 0)))
