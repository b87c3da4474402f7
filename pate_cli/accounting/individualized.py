"""Individualized PATE (Boenisch et al.): parameters, histograms and per-group accounting.

MATH.md section 9, with sections 2-4 for the kernels and 6-7 for composition, conversion
and charging. In the paper: section 4.1 (upsampling, Algorithm 1), 4.2 (weighting,
Algorithm 2), 4.3 (individual sensitivities, Theorem 1, Corollary 1), Appendix B
(vanishing, Algorithm 3, Proposition 4) and Appendix C (how the parameters are set).

Data points form privacy groups with budgets ``eps_g``. A group's per-query RDP is the one
of the real mechanism with each noise scale divided by the group's sensitivity ``D``::

    rdp_g(alpha) = rdp_sel(log q_sel, sqrt(2) sigma1 / D) + charge * rdp_gnmax(log q, sigma / D)

where ``log q`` and ``pr_answered`` are those of the real mechanism with the real noise
(they describe the output distribution, which does not depend on the group).

Layout of the accounting: a chunk of queries is described by a :class:`CostChunk`: a few
per-query RDP curves (one per distinct sensitivity, shape ``(variants, queries, orders)``)
and, per *member* and query, which curve that member pays (``-1``: nothing). Members are
the groups themselves for upsampling and weighting (every point of a group has the same
sensitivity) and the teachers for vanishing (a point pays only when its teacher took
part). :func:`account_groups` composes the chunks in query order and reports, per group,
the cost of its worst-off member. Nothing here reads files or loops over queries.
"""

from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property

import numpy as np

from ..mechanisms import (
    NOISE_BLOCK,
    STREAM_PARTICIPATION,  # the schedule's own random stream
)
from ..orders import validate_orders
from .conversion import conversion_offset
from .gnmax import rdp_gnmax, rdp_gnmax_data_independent
from .threshold import rdp_threshold, rdp_threshold_data_independent

# Step of the per-query offset of the systematic sample inside a block (golden ratio
# conjugate): the offsets of consecutive queries are a Kronecker sequence, so within a
# block every teacher takes part in a fraction s_i of the queries up to O(log n / n).
_ROTATION = (math.sqrt(5.0) - 1.0) / 2.0
# Elements of (members x queries x orders) work arrays processed at once (8 MB).
_WORK_ELEMENTS = 1 << 20
# Elements of the (queries x orders) blocks of one curve's running sums (1 MB, cache-sized).
_BLOCK_ELEMENTS = 1 << 17
# Elements of one sensitivity's distinct answer curves for a window of queries (8 MB).
_CURVE_ELEMENTS = 1 << 20
# Largest run-wide table of one sensitivity's selection curves (32 MB).
_SELECTION_ELEMENTS = 1 << 22

WEIGHT_RULES = ("budget", "group-size")
# Below this many (queries x orders) elements per group, threads cost more than they save.
_THREAD_MIN_ELEMENTS = 1 << 16


# --- parameters (MATH.md section 9; paper Algorithms 1-3, Appendix C) ------------------------


def upsampling_factors(budgets, *, precision: int = 2) -> np.ndarray:
    """Duplication factor ``u_g`` per group, the smallest integers in the budget ratios.

    MATH.md section 9 (paper section 4.1, Algorithm 1, Appendix C): each ratio
    ``eps_g / eps_min`` is approximated by ``Fraction(r).limit_denominator(10**precision)``
    and all are multiplied by the least common multiple of the denominators. The group
    with the smallest budget gets that multiple, so the factors have no common divisor.
    Budgets (1, 2, 3) give (1, 2, 3); (0.5, 0.75) give (2, 3); (log 2, log 8) give (1, 3).

    The paper's Algorithm 1 instead scales the budgets by ``10^p`` and divides by their
    greatest common divisor; for budgets that are not decimal numbers (log 2, log 8) that
    needs rounding and gives (69, 208) where MATH.md gives (1, 3). MATH.md is followed.
    Returns int64, shape ``(groups,)``; ``D_g = u_g``.
    """
    budgets = _budgets(budgets)
    if not isinstance(precision, (int, np.integer)) or precision < 0:
        raise ValueError(f"precision must be a non-negative integer, got {precision!r}")
    smallest = float(budgets.min())
    ratios = [Fraction(float(b) / smallest).limit_denominator(10 ** int(precision))
              for b in budgets]
    multiple = math.lcm(*(r.denominator for r in ratios))
    return np.array([int(r * multiple) for r in ratios], dtype=np.int64)


def group_weights(budgets, teacher_groups, *, rule: str = "budget") -> np.ndarray:
    """Vote weight ``w_g`` per group for the weighting variant (``D_g = w_g``).

    ``teacher_groups``: the group index of each teacher, shape ``(teachers,)``; the weight
    of teacher ``i`` is ``weights[teacher_groups[i]]``.

    ``rule="budget"`` (MATH.md section 9, paper Appendix C "Details of Weighting"):
    ``w_g = eps_g / mean_i eps(i)``, the mean over teachers of their group's budget, so
    the per-teacher weights sum to the number of teachers ``k``. (Budgets are divided by
    the smallest one first, so equal budgets give weights of exactly 1.)

    ``rule="group-size"``: the paper's Algorithm 2 as printed: with ``n_g`` teachers in
    group g, ``w_bar_g = (eps_g / sum_l eps_l) * (n_g / k)`` and
    ``w_g = k * w_bar_g / sum_l w_bar_l = k * eps_g n_g / sum_l eps_l n_l``, i.e. the
    budget rule multiplied by the group size ``n_g``. Here the *per-group* weights sum to
    ``k``; the per-teacher weights sum to ``k * sum_g n_g^2 eps_g / sum_l n_l eps_l``,
    which is ``k`` only if every group has one teacher. Offered as an option only.
    Returns float64, shape ``(groups,)``.
    """
    budgets = _budgets(budgets)
    groups = _teacher_groups(teacher_groups, budgets.size)
    sizes = np.bincount(groups, minlength=budgets.size).astype(np.float64)
    teachers = groups.size
    ratios = budgets / budgets.min()
    if rule == "budget":
        return ratios / (float(sizes @ ratios) / teachers)
    if rule == "group-size":
        return teachers * (ratios * sizes) / float(sizes @ ratios)
    raise ValueError(f"rule must be one of {', '.join(WEIGHT_RULES)}, got {rule!r}")


def vanishing_frequencies(budgets, *, power: float = 2.0) -> np.ndarray:
    """Participation frequency per group, ``s_g = (eps_g / eps_max) ** power``.

    MATH.md section 9; the paper (Appendix C, "Setting Parameters") suggests ``1/c^2``
    for a budget ratio ``c`` (``power=2``) and used ``1/c^4`` in its experiments
    (``power=4``). The group with the largest budget always takes part.
    """
    budgets = _budgets(budgets)
    if not (math.isfinite(power) and power >= 0):
        raise ValueError(f"power must be a non-negative number, got {power!r}")
    return (budgets / budgets.max()) ** float(power)


# --- histograms ------------------------------------------------------------------------------


def weighted_histogram(predictions, weights=None, *, classes: int) -> np.ndarray:
    """Weighted vote counts ``n_j = sum_i w_i [t_i = j]`` (paper Definition 7, eq. 8).

    ``predictions``: class ids, shape ``(queries, teachers)``, ``-1`` for a teacher that
    did not vote. ``weights``: ``None`` (plain counts), per teacher ``(teachers,)`` or per
    query and teacher ``(queries, teachers)``. One ``bincount`` over offset indices
    ``row * classes + class``. Returns float64 ``(queries, classes)``.
    """
    predictions = _predictions(predictions, classes)
    queries, teachers = predictions.shape
    voted = predictions >= 0
    flat = (np.arange(queries, dtype=np.int64)[:, None] * classes + predictions)[voted]
    values = None
    if weights is not None:
        weights = np.asarray(weights, dtype=np.float64)
        if weights.shape not in ((teachers,), (queries, teachers)):
            raise ValueError(f"weights must have shape ({teachers},) or "
                             f"({queries}, {teachers}), got {weights.shape}")
        if not np.all(np.isfinite(weights)):
            raise ValueError("weights must be finite")
        values = np.broadcast_to(weights, predictions.shape)[voted]
    counts = np.bincount(flat, weights=values, minlength=queries * classes)
    return counts.reshape(queries, classes).astype(np.float64, copy=False)


def vanishing_participation(frequencies, *, seed: int, count: int, start: int = 0):
    """Which teachers take part in each query (vanishing, MATH.md section 9, Appendix B).

    ``frequencies``: ``s_i`` in [0, 1] per teacher (e.g.
    ``vanishing_frequencies(budgets)[teacher_groups]``). Returns bool
    ``(count, teachers)`` for the queries at positions ``start .. start+count-1``.

    Scheme (systematic sampling, chunk-invariant):

    - teachers with ``s_i = 1`` take part in every query, ``s_i = 0`` in none;
    - the others are laid end to end on a line in a random order, teacher ``i`` covering
      an interval of length ``s_i`` (total length ``m'``); query q takes part with the
      teachers whose interval contains one of the points ``u_q, u_q + 1, u_q + 2, ...``
      (``u_q`` in [0, 1)). Each interval is shorter than 1, so it holds at most one
      point: exactly ``ceil(m' - u_q)`` of these teachers take part, i.e.
      ``floor(m')`` or ``ceil(m')``, and the total per query varies by at most one
      (it is constant when ``sum_i s_i`` is an integer);
    - queries are grouped in blocks of ``NOISE_BLOCK`` by position. Block b draws, from a
      generator seeded by ``SeedSequence(seed, spawn_key=(STREAM_PARTICIPATION, b))``,
      first an offset ``u0`` (``random()``) and then the order of the line
      (``permutation``). Query ``q`` at position ``p = q - b * NOISE_BLOCK`` in its block
      uses ``u_q = (u0 + p * phi) mod 1`` with ``phi = (sqrt 5 - 1) / 2``.

    A teacher takes part in query q iff ``(u_q - a_i) mod 1 < s_i`` (``a_i`` the start of
    its interval), and ``u_q`` walks the circle as a Kronecker sequence, so inside a block
    every teacher takes part in a fraction ``s_i`` of the queries up to O(log n / n)
    (the paper's periodic participation with shifted periods); the new order at each block
    is the paper's periodic re-sampling of the teacher sets. Stepping by the golden ratio
    rather than by ``m'`` (plain round-robin) avoids a frozen schedule when ``m'`` is an
    integer. The result depends only on the seed and the query positions, never on how the
    queries are chunked.
    """
    frequencies = np.asarray(frequencies, dtype=np.float64)
    if frequencies.ndim != 1 or frequencies.size == 0:
        raise ValueError("frequencies must be a non-empty 1-D array (one per teacher)")
    if not np.all((frequencies >= 0) & (frequencies <= 1)):
        raise ValueError("participation frequencies must lie in [0, 1]")
    seed = _seed(seed)
    if not (isinstance(count, (int, np.integer)) and count >= 0):
        raise ValueError(f"count must be a non-negative integer, got {count!r}")
    if not (isinstance(start, (int, np.integer)) and start >= 0):
        raise ValueError(f"start must be a non-negative integer, got {start!r}")
    out = np.zeros((count, frequencies.size), dtype=bool)
    out[:, frequencies >= 1.0] = True
    partial = np.flatnonzero((frequencies > 0.0) & (frequencies < 1.0))
    if count == 0 or partial.size == 0:
        return out
    first, last = start // NOISE_BLOCK, (start + count - 1) // NOISE_BLOCK
    for block in range(first, last + 1):
        lo = max(start, block * NOISE_BLOCK)
        hi = min(start + count, (block + 1) * NOISE_BLOCK)
        sequence = np.random.SeedSequence(entropy=seed, spawn_key=(STREAM_PARTICIPATION, block))
        generator = np.random.Generator(np.random.PCG64(sequence))
        offset = generator.random()
        order = partial[generator.permutation(partial.size)]
        ends = np.cumsum(frequencies[order])
        positions = np.arange(lo, hi, dtype=np.float64) - block * NOISE_BLOCK
        u = np.mod(offset + positions * _ROTATION, 1.0)
        # points u + n (n integer) in [0, end): ceil(end - u); first difference per teacher
        points = np.ceil(ends[None, :] - u[:, None])
        hits = np.diff(points, axis=1, prepend=0.0)
        out[lo - start : hi - start, order] = hits > 0
    return out


@dataclass(frozen=True)
class VanishingVotes:
    """Histogram of a vanishing run (MATH.md section 9).

    ``votes``: ``(queries, classes)`` float, ``n_j = (k / |S_q|) #{i in S_q : t_i = j}``;
    ``participation``: bool ``(queries, teachers)``, the sets ``S_q``;
    ``scale``: ``(queries,)`` ``k / |S_q|``, the sensitivity ``D`` a participating
    teacher's points have at that query.
    """

    votes: np.ndarray
    participation: np.ndarray
    scale: np.ndarray


def vanishing_votes(predictions, *, frequencies, seed: int, classes: int,
                    start: int = 0) -> VanishingVotes:
    """Vanishing histogram of ``predictions`` (queries at positions ``start, ...``).

    Participation from :func:`vanishing_participation`; the counts of the participating
    teachers are rescaled to the full teacher count ``k`` (MATH.md section 9, paper
    Appendix B: "the votes are scaled so that the total sum ... equals the number of
    teachers"). Raises ``ValueError`` if some query has no participating teacher.
    """
    predictions = _predictions(predictions, classes)
    queries, teachers = predictions.shape
    frequencies = np.asarray(frequencies, dtype=np.float64)
    if frequencies.shape != (teachers,):
        raise ValueError(f"frequencies must have shape ({teachers},), got {frequencies.shape}")
    participation = vanishing_participation(frequencies, seed=seed, count=queries, start=start)
    taking = participation.sum(axis=1)
    if np.any(taking == 0):
        raise ValueError(f"no teacher takes part in query {start + int(np.argmin(taking))}: "
                         "raise the participation frequencies")
    scale = teachers / taking
    counts = weighted_histogram(np.where(participation, predictions, -1), classes=classes)
    return VanishingVotes(votes=counts * scale[:, None], participation=participation,
                          scale=scale)


# --- per-query RDP (MATH.md section 9 with sections 2-4 and 7) -------------------------------


def rdp_individual(log_q, *, sensitivities, sigma: float, orders, log_pr_answered=None,
                   sigma_threshold: float | None = None, charge=1.0,
                   data_independent: bool = False) -> np.ndarray:
    """Per-query RDP of one data point for each sensitivity ``D`` (MATH.md section 9).

    ``rdp(alpha) = rdp_sel(log q_sel, sqrt(2) sigma1 / D) + charge * rdp_gnmax(log q,
    sigma / D)`` (paper Theorem 1 and Corollary 1: sensitivity D is noise scale / D).
    ``log_q`` and ``log_pr_answered`` (shape ``(queries,)``) are those of the real
    mechanism with the real noise; leave ``log_pr_answered`` and ``sigma_threshold`` unset
    for GNMax (no selection step). ``charge`` (scalar or ``(queries,)``) weighs the answer
    step: 1 for GNMax, the replay's 0/1 ``answered`` or ``pr_answered`` (expected
    accounting) for Confident-GNMax (MATH.md section 7). ``data_independent`` uses section
    2 (``alpha D^2 / (2 sigma1^2) + charge * alpha D^2 / sigma^2``). ``D = 0`` costs 0.
    Returns ``(len(sensitivities), queries, orders)``.
    """
    return CurveFactors(log_q, sensitivities=sensitivities, sigma=sigma, orders=orders,
                        charge=charge, log_pr_answered=log_pr_answered,
                        sigma_threshold=sigma_threshold,
                        data_independent=data_independent).evaluate()


@dataclass(frozen=True, eq=False)
class CurveFactors:
    """The per-query RDP curves of :func:`rdp_individual`, not yet evaluated.

    Curve ``v`` at query ``q`` is ``rdp_sel(log q_sel[q], sqrt(2) sigma1 / D_v) +
    charge[q] * rdp_gnmax(log q[q], sigma / D_v)`` (MATH.md section 9; arguments as in
    :func:`rdp_individual`, which returns ``CurveFactors(...).evaluate()``). Each formula
    runs once per distinct statistic (``log q``, ``log pr_answered``) and distinct ``D``,
    and the rows are gathered from those curves, as ``pate_cli.analysis`` does.
    :func:`account_groups` takes such curves in a :class:`CostChunk` and evaluates them
    one sensitivity at a time, in cache-sized blocks of queries, instead of building the
    ``(variants, queries, orders)`` array; the numbers are the same.
    """

    log_q: np.ndarray
    sensitivities: np.ndarray
    sigma: float
    orders: np.ndarray
    charge: np.ndarray = 1.0
    log_pr_answered: np.ndarray | None = None
    sigma_threshold: float | None = None
    data_independent: bool = False

    def __post_init__(self):
        orders = validate_orders(self.orders)
        log_q = np.asarray(self.log_q, dtype=np.float64)
        if log_q.ndim != 1:
            raise ValueError(f"log_q must be 1-D (one value per query), got shape "
                             f"{log_q.shape}")
        sensitivities = np.atleast_1d(np.asarray(self.sensitivities, dtype=np.float64))
        if sensitivities.ndim != 1 or not np.all(np.isfinite(sensitivities)
                                                 & (sensitivities >= 0)):
            raise ValueError("sensitivities must be a 1-D array of non-negative numbers")
        selection = self.sigma_threshold is not None
        if not self.data_independent and selection != (self.log_pr_answered is not None):
            raise ValueError("give both log_pr_answered and sigma_threshold (Confident-GNMax) "
                             "or neither (GNMax)")
        queries = log_q.shape[0]
        charge = np.broadcast_to(np.asarray(self.charge, dtype=np.float64), (queries,))
        if not np.all(np.isfinite(charge) & (charge >= 0)):
            raise ValueError("charge must be non-negative")
        log_pr = None
        if selection and not self.data_independent:
            log_pr = np.asarray(self.log_pr_answered, dtype=np.float64).reshape(-1)
            if log_pr.shape != (queries,):
                raise ValueError("log_pr_answered must have one value per query")
        for name, value in (("orders", orders), ("log_q", log_q),
                            ("sensitivities", sensitivities), ("charge", charge),
                            ("log_pr_answered", log_pr),
                            ("data_independent", bool(self.data_independent))):
            object.__setattr__(self, name, value)

    @property
    def shape(self) -> tuple:
        return (self.sensitivities.size, self.log_q.shape[0], self.orders.size)

    @cached_property
    def _selection_values(self):
        """Distinct ``log pr_answered`` values of all the queries and, per query, which one
        (there are at most teachers + 1: the statistic is a function of ``round(max v)``)."""
        values, index = np.unique(self.log_pr_answered, return_inverse=True)
        return values, index.reshape(-1)

    def curves(self, variant: int) -> _Curves:
        """The distinct curves of one variant, from which its rows are gathered."""
        return _Curves(self, float(self.sensitivities[variant]))

    def evaluate(self) -> np.ndarray:
        """All curves, ``(variants, queries, orders)``: :func:`rdp_individual`."""
        out = np.zeros(self.shape)
        queries = self.shape[1]

        def fill(v: int) -> None:
            self.curves(v).rows(0, queries, out[v])

        # One evaluation per distinct D (a variant at the same D as another gets a copy).
        # They are independent and numpy releases the GIL in its loops, so they run on
        # threads; each writes only its own slice, so the numbers are the same for any count.
        first_of = _first_of_each_sensitivity(self.sensitivities)
        distinct = sorted(v for v in set(first_of) if self.sensitivities[v] > 0)
        workers = min(len(distinct), os.cpu_count() or 1)
        if workers > 1 and queries * self.orders.size >= _THREAD_MIN_ELEMENTS:
            with ThreadPoolExecutor(max_workers=workers) as pool:
                list(pool.map(fill, distinct))
        else:
            for v in distinct:
                fill(v)
        for v, first in enumerate(first_of):
            if first != v and self.sensitivities[v] > 0:
                out[v] = out[first]
        return out


def _first_of_each_sensitivity(sensitivities) -> list:
    """Per variant, the first variant with the same sensitivity (equal curves)."""
    first_of = {}
    return [first_of.setdefault(float(d), v) for v, d in enumerate(sensitivities)]


class _Curves:
    """One sensitivity's curves (MATH.md sections 2-4, 9) and the exact per-query rows of
    any run of queries, gathered from them.

    The selection curves are computed once for the distinct ``log pr_answered`` values of
    all the queries when they are few (as they are: at most teachers + 1, up to
    ``_SELECTION_ELEMENTS`` values, else per window); the answer
    curves once per distinct ``log q`` of each window of queries, the window covering
    ``_CURVE_ELEMENTS`` values, so memory stays bounded whatever the number of queries.
    """

    def __init__(self, factors: CurveFactors, sensitivity: float):
        self.factors = factors
        self.sensitivity = sensitivity
        self.zero = sensitivity == 0.0
        self.answer = self.selection = None
        self.window = max(1, _CURVE_ELEMENTS // factors.orders.size)
        self.span = (0, 0)  # queries covered by the answer (and windowed selection) curves
        if self.zero:
            return
        orders, sigma1 = factors.orders, factors.sigma_threshold
        if factors.data_independent:
            self.answer = rdp_gnmax_data_independent(sigma=factors.sigma / sensitivity,
                                                     orders=orders)
            if sigma1 is not None:
                self.selection = rdp_threshold_data_independent(
                    sigma_threshold=sigma1 / sensitivity, orders=orders)
            return
        self.run_wide = factors.log_pr_answered is not None and (
            factors._selection_values[0].size * orders.size <= _SELECTION_ELEMENTS)
        if self.run_wide:
            values, self.p_index = factors._selection_values
            self.selection = rdp_threshold(values, sigma_threshold=sigma1 / sensitivity,
                                           orders=orders)

    def _cover(self, lo: int) -> None:
        """Answer curves (and selection curves, if windowed) of the window holding ``lo``."""
        start = lo - lo % self.window
        stop = min(self.factors.shape[1], start + self.window)
        factors = self.factors
        q_values, q_index = np.unique(factors.log_q[start:stop], return_inverse=True)
        self.answer = rdp_gnmax(q_values, sigma=factors.sigma / self.sensitivity,
                                orders=factors.orders)
        self.q_index = q_index.reshape(-1)
        if factors.log_pr_answered is not None and not self.run_wide:
            p_values, p_index = np.unique(factors.log_pr_answered[start:stop],
                                          return_inverse=True)
            self.selection = rdp_threshold(
                p_values, sigma_threshold=factors.sigma_threshold / self.sensitivity,
                orders=factors.orders)
            self.p_index = p_index.reshape(-1)
        self.span = (start, stop)

    def rows(self, lo: int, hi: int, out, scratch=None) -> None:
        """Queries ``lo .. hi-1`` into ``out`` ``(hi - lo, orders)``: ``charge * answer +
        selection``, as :func:`rdp_individual` defines them (``scratch``, same shape,
        saves a temporary)."""
        if self.zero:
            out.fill(0.0)
            return
        factors = self.factors
        if factors.data_independent:
            np.multiply(factors.charge[lo:hi, None], self.answer[None, :], out=out)
            if self.selection is not None:
                out += self.selection
            return
        position = lo
        while position < hi:
            if not self.span[0] <= position < self.span[1]:
                self._cover(position)
            start, stop = self.span
            end = min(hi, stop)
            part = out[position - lo : end - lo]
            np.take(self.answer, self.q_index[position - start : end - start], axis=0,
                    out=part)
            part *= factors.charge[position:end, None]
            if self.selection is not None:
                index = (self.p_index[position:end] if self.run_wide
                         else self.p_index[position - start : end - start])
                gathered = (None if scratch is None
                            else scratch[position - lo : end - lo])
                part += np.take(self.selection, index, axis=0, out=gathered)
            position = end


@dataclass(frozen=True)
class CostChunk:
    """The privacy costs of a run of consecutive queries, per member (see module doc).

    ``curves``: ``(variants, queries, orders)`` per-query RDP curves, or the same as an
    unevaluated :class:`CurveFactors`; ``index``: int ``(members, queries)``, the curve
    member m pays at query q, ``-1`` for none; ``baseline``: ``(queries, orders)``, the
    cost of the query in the uniform run (every point at sensitivity 1), or the number of
    the curve that holds it; ``answered``: bool ``(queries,)``, whether the replay
    released a label; ``baseline_answered``: the same for the uniform run.
    The builders below charge the uniform run on the same statistics and decisions; to
    compare with a different uniform run (plain votes, other parameters) replace
    ``baseline``/``baseline_answered`` (``dataclasses.replace``) with its
    ``rdp_individual(..., sensitivities=[1])[0]`` and answers.
    """

    curves: np.ndarray | CurveFactors
    index: np.ndarray
    baseline: np.ndarray | int
    answered: np.ndarray
    baseline_answered: np.ndarray

    def __post_init__(self):
        curves = self.curves
        if not isinstance(curves, CurveFactors):
            curves = np.asarray(curves, dtype=np.float64)
        index = np.asarray(self.index, dtype=np.intp)
        if len(curves.shape) != 3 or index.ndim != 2 or index.shape[1] != curves.shape[1]:
            raise ValueError("curves must be (variants, queries, orders) and index "
                             "(members, queries)")
        variants, queries, orders = curves.shape
        if np.any(index < -1) or np.any(index >= variants):
            raise ValueError("index entries must be -1 or a curve number")
        baseline = self.baseline
        if isinstance(baseline, (int, np.integer)) and not isinstance(baseline, bool):
            if not 0 <= baseline < variants:
                raise ValueError(f"baseline curve {baseline} is not one of the {variants}")
            baseline = int(baseline)
        else:
            baseline = np.asarray(baseline, dtype=np.float64)
            if baseline.shape != (queries, orders):
                raise ValueError(f"baseline must have shape ({queries}, {orders})")
        answered = np.asarray(self.answered, dtype=bool)
        baseline_answered = np.asarray(self.baseline_answered, dtype=bool)
        if answered.shape != (queries,) or baseline_answered.shape != (queries,):
            raise ValueError(f"answered must have shape ({queries},)")
        for name, value in (("curves", curves), ("index", index), ("baseline", baseline),
                            ("answered", answered), ("baseline_answered", baseline_answered)):
            object.__setattr__(self, name, value)

    @property
    def queries(self) -> int:
        return int(self.curves.shape[1])

    def evaluated(self) -> tuple[np.ndarray, np.ndarray]:
        """``(curves, baseline)`` as arrays."""
        curves = self.curves
        if isinstance(curves, CurveFactors):
            curves = curves.evaluate()
        baseline = self.baseline
        if isinstance(baseline, int):
            baseline = curves[baseline]
        return curves, baseline


def group_costs(log_q, *, sensitivities, sigma: float, orders, answered, charge=None,
                log_pr_answered=None, sigma_threshold: float | None = None,
                data_independent: bool = False, evaluate: bool = True) -> CostChunk:
    """Costs of upsampling (``D_g = u_g``) or weighting (``D_g = w_g``) for one chunk.

    Members are the groups (all points of a group share one sensitivity, paper section
    4.3.3). ``answered``: the replay's decisions (all True for GNMax); ``charge`` defaults
    to them (replay accounting); pass ``pr_answered`` for expected accounting. Other
    arguments as in :func:`rdp_individual`. A group with sensitivity 0 pays nothing.
    ``evaluate=False`` leaves the curves as :class:`CurveFactors` (the baseline is its
    last curve, at sensitivity 1), for :func:`account_groups` to evaluate block by block.
    """
    sensitivities = np.atleast_1d(np.asarray(sensitivities, dtype=np.float64))
    answered = np.asarray(answered, dtype=bool)
    if charge is None:
        charge = answered.astype(np.float64)
    factors = CurveFactors(log_q, sensitivities=np.append(sensitivities, 1.0), sigma=sigma,
                           orders=orders, charge=charge, log_pr_answered=log_pr_answered,
                           sigma_threshold=sigma_threshold, data_independent=data_independent)
    groups = sensitivities.size
    queries = factors.shape[1]
    index = np.where(sensitivities[:, None] > 0, np.arange(groups)[:, None], -1)
    index = np.broadcast_to(index, (groups, queries))
    if evaluate:
        curves = factors.evaluate()
        return CostChunk(curves=curves[:-1], index=index, baseline=curves[-1],
                         answered=answered, baseline_answered=answered)
    return CostChunk(curves=factors, index=index, baseline=groups, answered=answered,
                     baseline_answered=answered)


def vanishing_costs(log_q, *, participation, sigma: float, orders, answered, charge=None,
                    log_pr_answered=None, sigma_threshold: float | None = None,
                    data_independent: bool = False) -> CostChunk:
    """Costs of vanishing for one chunk: members are the teachers (MATH.md section 9).

    ``participation``: bool ``(queries, teachers)`` (:func:`vanishing_participation`).
    A teacher's points pay for query q only if it took part, at sensitivity
    ``D = k / |S_q|``; these take one or two values (``|S_q|`` varies by at most one), so
    the curves are computed once per distinct value. Other arguments as in
    :func:`group_costs`.
    """
    participation = np.asarray(participation, dtype=bool)
    if participation.ndim != 2:
        raise ValueError("participation must have shape (queries, teachers)")
    taking = participation.sum(axis=1)
    if np.any(taking == 0):
        raise ValueError("every query needs at least one participating teacher")
    scale = participation.shape[1] / taking
    values, which = np.unique(scale, return_inverse=True)
    which = which.reshape(-1)
    answered = np.asarray(answered, dtype=bool)
    if charge is None:
        charge = answered.astype(np.float64)
    curves = rdp_individual(log_q, sensitivities=np.append(values, 1.0), sigma=sigma,
                            orders=orders, log_pr_answered=log_pr_answered,
                            sigma_threshold=sigma_threshold, charge=charge,
                            data_independent=data_independent)
    index = np.where(participation.T, which[None, :], -1)
    return CostChunk(curves=curves[:-1], index=index, baseline=curves[-1], answered=answered,
                     baseline_answered=answered)


# --- per-group accounting (MATH.md sections 6 and 9) -----------------------------------------


@dataclass(frozen=True)
class GroupAccounting:
    """Per-group composition of an individualized run (MATH.md section 9).

    Per group (tuples / arrays of length ``groups``): ``names``, ``budgets``,
    ``sensitivities`` (descriptive, as given), ``epsilon`` and ``order`` spent at the
    stopping point (after the last query before it; after the last query if no group is
    exhausted; 0 and NaN if nothing was spent), ``exhausted_at`` (0-based index of the
    first query after which that group's cumulative epsilon exceeds its budget, or None).

    ``cumulative_epsilon``/``cumulative_order``: ``(queries, groups)``, the worst-off
    member's cumulative epsilon after each query and the order achieving it, over every
    analysed query (also past the stopping point, as the paper's figures track them); a
    member that has not yet taken part in any query has epsilon 0 (order NaN).

    ``stopped_at``: the first query after which some group exceeds its budget (the
    minimum of ``exhausted_at``), or None; its label and every later one are not
    released. ``labels_released``: answered queries before ``stopped_at``;
    ``answered_total``: answered queries in the whole run. ``baseline_*``: the uniform
    run (every group at the smallest budget, sensitivity 1): its cumulative epsilon, the
    first query after which it exceeds the smallest budget, and the answered queries
    before that.
    """

    names: tuple
    budgets: np.ndarray
    sensitivities: np.ndarray
    epsilon: np.ndarray
    order: np.ndarray
    exhausted_at: tuple
    cumulative_epsilon: np.ndarray
    cumulative_order: np.ndarray
    stopped_at: int | None
    labels_released: int
    answered_total: int
    baseline_epsilon: np.ndarray
    baseline_stopped_at: int | None
    baseline_labels: int

    @property
    def queries(self) -> int:
        return int(self.cumulative_epsilon.shape[0])


def account_groups(chunks, *, budgets, orders, delta: float, conversion: str = "classic",
                   member_groups=None, names=None, sensitivities=None,
                   uniform=None) -> GroupAccounting:
    """Compose per-query costs per group, convert, and apply the stopping rule.

    ``chunks``: a :class:`CostChunk` or an iterable of them, in query order (the numbers
    do not depend on how the queries are split). ``budgets``: ``eps_g`` per group.
    ``member_groups``: the group of each member (default: member g is group g, as
    :func:`group_costs` builds them; for :func:`vanishing_costs` the teachers' groups).
    Each member's RDP is summed order by order in query order (MATH.md section 6) and
    converted after every query at ``delta`` with ``conversion``; a group reports its
    worst-off member (the largest epsilon, MATH.md section 9). Conversion and summation are
    those of ``pate_cli.analysis``, so a one-group run at sensitivity 1 reproduces its
    ``epsilon_cumulative`` and ``order_cumulative`` exactly.

    ``uniform``: optionally ``(epsilon_cumulative, order_cumulative, rdp_total)`` of that
    run over all the queries, when the caller has it (``analyze_individualized`` passes
    its replay's analysis, which charges the same statistics and decisions at the same
    orders, ``delta`` and conversion). With a single chunk of :class:`CurveFactors`, the
    uniform baseline and every member paying the sensitivity-1 curve throughout then take
    these figures instead of summing the same numbers again.
    """
    budgets = _budgets(budgets)
    groups = budgets.size
    orders = validate_orders(orders)
    offset = conversion_offset(orders=orders, delta=delta, conversion=conversion)
    clip = bool(np.any(offset < 0))  # the improved conversion is clipped at 0
    if names is None:
        names = tuple(f"group{g}" for g in range(groups))
    names = tuple(str(n) for n in names)
    if len(names) != groups:
        raise ValueError(f"{len(names)} names for {groups} groups")
    if sensitivities is None:
        sensitivities = np.full(groups, np.nan)
    sensitivities = np.asarray(sensitivities, dtype=np.float64).reshape(-1)
    if sensitivities.size != groups:
        raise ValueError(f"{sensitivities.size} sensitivities for {groups} groups")
    if isinstance(chunks, CostChunk):
        chunks = (chunks,)

    members_of = None
    carry = None
    seen = None
    base_carry = np.zeros((1, orders.size))
    parts = {"eps": [], "order": [], "base": [], "answered": [], "base_answered": []}
    for chunk in chunks:
        if not isinstance(chunk, CostChunk):
            raise TypeError(f"chunks must be CostChunk objects, got {type(chunk).__name__}")
        if chunk.curves.shape[2] != orders.size:
            raise ValueError(f"chunk has {chunk.curves.shape[2]} orders, the grid has "
                             f"{orders.size}")
        if members_of is None:
            member_groups = _member_groups(member_groups, chunk.index.shape[0], groups)
            members_of = [np.flatnonzero(member_groups == g) for g in range(groups)]
            carry = np.zeros((member_groups.size, orders.size))
            seen = np.zeros(member_groups.size, dtype=bool)
        elif chunk.index.shape[0] != carry.shape[0]:
            raise ValueError("every chunk must describe the same members")
        if _fixed_curves(chunk.index):
            known = (uniform if uniform is not None and not parts["eps"]
                     and np.shape(uniform[0]) == (chunk.queries,) else None)
            eps, order, base, carry, seen, base_carry = _accumulate_fixed(
                chunk, members_of, carry, seen, base_carry, offset, orders, clip, known)
        else:
            eps, order, base, carry, seen, base_carry = _accumulate_chunk(
                chunk, members_of, carry, seen, base_carry, offset, orders, clip)
        parts["eps"].append(eps)
        parts["order"].append(order)
        parts["base"].append(base)
        parts["answered"].append(chunk.answered)
        parts["base_answered"].append(chunk.baseline_answered)
    if members_of is None:
        cum_eps = np.zeros((0, groups))
        cum_order = np.zeros((0, groups))
        base_eps = np.zeros(0)
        answered = base_answered = np.zeros(0, dtype=bool)
    else:
        cum_eps = np.concatenate(parts["eps"])
        cum_order = np.concatenate(parts["order"])
        base_eps = np.concatenate(parts["base"])
        answered = np.concatenate(parts["answered"])
        base_answered = np.concatenate(parts["base_answered"])

    exhausted_at = tuple(_first_above(cum_eps[:, g], budgets[g]) for g in range(groups))
    stops = [t for t in exhausted_at if t is not None]
    stopped_at = min(stops) if stops else None
    released_upto = cum_eps.shape[0] if stopped_at is None else stopped_at
    if released_upto > 0:
        epsilon = cum_eps[released_upto - 1].copy()
        order = cum_order[released_upto - 1].copy()
    else:
        epsilon, order = np.zeros(groups), np.full(groups, np.nan)
    baseline_stop = _first_above(base_eps, float(budgets.min()))
    baseline_upto = base_eps.shape[0] if baseline_stop is None else baseline_stop
    return GroupAccounting(
        names=names, budgets=budgets, sensitivities=sensitivities, epsilon=epsilon,
        order=order, exhausted_at=exhausted_at, cumulative_epsilon=cum_eps,
        cumulative_order=cum_order, stopped_at=stopped_at,
        labels_released=int(np.count_nonzero(answered[:released_upto])),
        answered_total=int(np.count_nonzero(answered)), baseline_epsilon=base_eps,
        baseline_stopped_at=baseline_stop,
        baseline_labels=int(np.count_nonzero(base_answered[:baseline_upto])))


def _accumulate_fixed(chunk, members_of, carry, seen, base_carry, offset, orders, clip,
                      known=None):
    """:func:`_accumulate_chunk` for a chunk in which each member pays one curve (or none)
    at every query, as :func:`group_costs` builds them.

    Members that pay the same curve after the same running sums have the same figures, and
    so has the uniform run when it is one of the curves: each distinct (curve, running
    sums) is accumulated once, one curve at a time, its rows evaluated block by block
    from :class:`CurveFactors` (:func:`_running_epsilon`). Curves at equal sensitivities
    are equal. Curves run on threads when there are several (each task writes only its
    own results, so the numbers do not depend on the thread count). ``known``: the
    uniform run's figures over this chunk, starting from zero sums (``account_groups``'
    ``uniform``): the sensitivity-1 curve from zero sums takes them.
    """
    queries = chunk.queries
    members = carry.shape[0]
    curves = chunk.curves
    factored = isinstance(curves, CurveFactors)
    same = (_first_of_each_sensitivity(curves.sensitivities) if factored
            else list(range(curves.shape[0])))
    paid = chunk.index[:, 0] if queries else np.full(members, -1)
    base_curve = same[chunk.baseline] if isinstance(chunk.baseline, int) else "baseline"
    tasks, starts = {}, []

    def task(curve, start) -> int:
        key = (curve, start.tobytes())
        if key not in tasks:
            tasks[key] = len(starts)
            starts.append(start)
        return tasks[key]

    member_task = [task(same[paid[m]], carry[m]) if paid[m] >= 0 else -1
                   for m in range(members)]
    base_task = task(base_curve, base_carry[0])
    by_curve = {}
    for (curve, _), number in tasks.items():
        by_curve.setdefault(curve, []).append(number)
    results = [None] * len(starts)
    if known is not None and factored:
        ones = [v for v, d in enumerate(curves.sensitivities) if d == 1.0]
        number = tasks.get((same[ones[0]], np.zeros(orders.size).tobytes())) if ones else None
        if number is not None:
            eps, order, sums = known
            results[number] = (np.asarray(eps, dtype=np.float64),
                               np.asarray(order, dtype=np.float64),
                               np.array(sums, dtype=np.float64))
            by_curve[same[ones[0]]].remove(number)

    def run(curve) -> None:
        if curve == "baseline":
            source = _ArrayRows(chunk.baseline)
        elif factored:
            source = curves.curves(curve)
        else:
            source = _ArrayRows(curves[curve])
        for number in by_curve[curve]:
            eps, best, sums = _running_epsilon(source, queries, starts[number], offset, clip)
            results[number] = (eps, orders[best], sums)

    by_curve = {curve: numbers for curve, numbers in by_curve.items() if numbers}
    workers = min(len(by_curve), os.cpu_count() or 1)
    if workers > 1 and queries * orders.size >= _THREAD_MIN_ELEMENTS:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            list(pool.map(run, list(by_curve)))
    else:
        for curve in by_curve:
            run(curve)

    eps_out = np.empty((queries, len(members_of)))
    order_out = np.empty((queries, len(members_of)))
    for g, mine in enumerate(members_of):  # a handful of groups
        columns = {}  # distinct figures among the group's members, in member order
        for m in mine:
            number = member_task[m]
            if number >= 0 and ("task", number) not in columns:
                columns["task", number] = results[number][:2]
            elif number < 0 and ("idle", m) not in columns:
                columns["idle", m] = _idle_figures(carry[m], seen[m], offset, orders, clip)
        if not columns:
            eps_out[:, g] = 0.0
            order_out[:, g] = np.nan
            continue
        eps = np.stack([np.broadcast_to(e, (queries,)) for e, _ in columns.values()])
        order = np.stack([np.broadcast_to(o, (queries,)) for _, o in columns.values()])
        worst = np.argmax(eps, axis=0)
        eps_out[:, g] = np.take_along_axis(eps, worst[None, :], axis=0)[0]
        order_out[:, g] = np.take_along_axis(order, worst[None, :], axis=0)[0]
    carry = carry.copy()
    seen = seen.copy()
    for m, number in enumerate(member_task):
        if number >= 0:
            carry[m] = results[number][2]
            seen[m] |= queries > 0
    base_eps, _, base_sums = results[base_task]
    return eps_out, order_out, base_eps, carry, seen, base_sums[None, :]


def _idle_figures(carry, seen, offset, orders, clip):
    """Epsilon and order of a member that pays nothing in a chunk (constant over it)."""
    if not seen:
        return 0.0, np.nan
    values = carry + offset
    best = int(np.argmin(values))
    eps = max(values[best], 0.0) if clip else values[best]
    return eps, orders[best]


class _ArrayRows:
    """Rows of an evaluated ``(queries, orders)`` curve, as :class:`_Curves` gives them."""

    def __init__(self, array):
        self.array = array

    def rows(self, lo: int, hi: int, out, scratch=None) -> None:
        np.copyto(out, self.array[lo:hi])


def _running_epsilon(source, queries: int, carry, offset, clip):
    """Running RDP sums of one curve's rows after ``carry``, converted after every query.

    Returns per query the epsilon (``min`` over orders of the sum plus ``offset``, MATH.md
    section 6) and the index of the first order achieving it, and the sums after the last
    query. The sum after query i is ``sum_{i-1} + rdp_i`` in query order, as in
    ``pate_cli.analysis``, so the numbers do not depend on the blocking.

    Work goes in cache-sized blocks of queries. When the rows are non-negative the sums
    only grow, and rounding is monotone, so in a block each order's converted value lies
    between its value after the block's first query and after its last: an order whose
    lowest value exceeds the smallest highest value of all orders is above the minimum
    (not even tied) at every query of the block, and its running sums are not formed.
    The block's totals come from one reduction over its queries (numpy adds the rows of a
    C-ordered array one after another, as the running sum does).
    """
    size = offset.size
    eps = np.empty(queries)
    best = np.empty(queries, dtype=np.intp)
    carry = np.array(carry, dtype=np.float64)
    step = max(1, _BLOCK_ELEMENTS // size)
    buffer = np.empty((min(step, queries), size))
    scratch = np.empty_like(buffer)
    low = np.empty(size)
    high = np.empty(size)
    for lo in range(0, queries, step):
        hi = min(queries, lo + step)
        rows = buffer[: hi - lo]
        source.rows(lo, hi, rows, scratch[: hi - lo])
        rows[0] += carry
        kept, shift = None, offset
        growing = bool(rows.min() >= 0.0)  # False for NaN: then every order is kept
        if growing:
            np.add.reduce(rows, axis=0, out=carry)
            np.add(rows[0], offset, out=low)
            np.add(carry, offset, out=high)
            kept = np.flatnonzero(low <= high.min())
            rows, shift = rows[:, kept], offset[kept]
        np.cumsum(rows, axis=0, out=rows)
        if not growing:
            carry[:] = rows[-1]
        rows += shift
        choice = np.argmin(rows, axis=1)
        eps[lo:hi] = np.take_along_axis(rows, choice[:, None], axis=1)[:, 0]
        best[lo:hi] = choice if kept is None else kept[choice]
    if clip:
        np.maximum(eps, 0.0, out=eps)
    return eps, best, carry


def _fixed_curves(index) -> bool:
    """Whether every member pays the same curve (or none) at every query of a chunk."""
    return bool(np.all(index == index[:, :1])) if index.shape[1] else True


def _accumulate_chunk(chunk, members_of, carry, seen, base_carry, offset, orders, clip):
    """Cumulative epsilon per group (worst member) and of the baseline for one chunk,
    in cache-sized blocks of queries; carries the running RDP sums across blocks."""
    curves, baseline = chunk.evaluated()
    members = carry.shape[0]
    queries = chunk.queries
    groups = len(members_of)
    eps_out = np.empty((queries, groups))
    order_out = np.empty((queries, groups))
    base_out = np.empty(queries)
    step = max(1, _WORK_ELEMENTS // max(1, members * orders.size))
    for lo in range(0, queries, step):
        hi = min(queries, lo + step)
        index = chunk.index[:, lo:hi]
        pays = index >= 0
        rows = curves[np.maximum(index, 0), np.arange(lo, hi)[None, :]]
        rows[~pays] = 0.0
        eps, best, carry = _cumulative(rows, carry, offset, clip)
        took_part = np.logical_or.accumulate(pays, axis=1) | seen[:, None]
        seen = took_part[:, -1].copy()
        order = orders[best]
        eps[~took_part] = 0.0
        order[~took_part] = np.nan
        for g, mine in enumerate(members_of):  # a handful of groups
            if mine.size == 0:
                eps_out[lo:hi, g] = 0.0
                order_out[lo:hi, g] = np.nan
                continue
            worst = np.argmax(eps[mine], axis=0)
            columns = np.arange(hi - lo)
            eps_out[lo:hi, g] = eps[mine[worst], columns]
            order_out[lo:hi, g] = order[mine[worst], columns]
        base_rows = baseline[None, lo:hi].copy()
        base_eps, _, base_carry = _cumulative(base_rows, base_carry, offset, clip)
        base_out[lo:hi] = base_eps[0]
    return eps_out, order_out, base_out, carry, seen, base_carry


def _cumulative(rows, carry, offset, clip):
    """Running sums over queries (axis 1) of ``rows`` ``(members, queries, orders)``
    after ``carry``, in place, converted to epsilon (MATH.md section 6). Adds in query
    order exactly as ``pate_cli.analysis`` does, so the sums do not depend on blocking."""
    rows[:, 0] += carry
    np.cumsum(rows, axis=1, out=rows)
    carry = rows[:, -1].copy()
    rows += offset
    best = np.argmin(rows, axis=2)
    eps = np.take_along_axis(rows, best[..., None], axis=2)[..., 0]
    if clip:
        np.maximum(eps, 0.0, out=eps)
    return eps, best, carry


def _first_above(values: np.ndarray, limit: float) -> int | None:
    over = values > limit
    return int(np.argmax(over)) if over.any() else None


# --- validation ------------------------------------------------------------------------------


def _budgets(budgets) -> np.ndarray:
    budgets = np.atleast_1d(np.asarray(budgets, dtype=np.float64))
    if budgets.ndim != 1 or budgets.size == 0:
        raise ValueError("budgets must be a non-empty list of numbers (one per group)")
    if not np.all(np.isfinite(budgets) & (budgets > 0)):
        raise ValueError("every privacy budget must be a positive number")
    return budgets


def _teacher_groups(teacher_groups, groups: int) -> np.ndarray:
    teacher_groups = np.asarray(teacher_groups)
    if teacher_groups.ndim != 1 or teacher_groups.size == 0:
        raise ValueError("teacher_groups must give one group index per teacher")
    if teacher_groups.dtype.kind not in "iu" or np.any(teacher_groups < 0) or np.any(
            teacher_groups >= groups):
        raise ValueError(f"teacher group indices must be integers in 0..{groups - 1}")
    return teacher_groups.astype(np.intp)


def _member_groups(member_groups, members: int, groups: int) -> np.ndarray:
    if member_groups is None:
        if members != groups:
            raise ValueError(f"{members} members for {groups} groups: give member_groups")
        return np.arange(groups)
    member_groups = _teacher_groups(member_groups, groups)
    if member_groups.size != members:
        raise ValueError(f"member_groups has {member_groups.size} entries, the costs "
                         f"describe {members} members")
    return member_groups


def _predictions(predictions, classes) -> np.ndarray:
    if not (isinstance(classes, (int, np.integer)) and classes >= 2):
        raise ValueError(f"classes must be an integer >= 2, got {classes!r}")
    predictions = np.asarray(predictions)
    if predictions.ndim != 2:
        raise ValueError(f"predictions must have shape (queries, teachers), "
                         f"got {predictions.shape}")
    if predictions.dtype.kind == "f":
        if not np.all(np.isfinite(predictions) & (predictions == np.round(predictions))):
            raise ValueError("predictions must be integer class ids")
    elif predictions.dtype.kind not in "iu":
        raise ValueError("predictions must be integer class ids")
    predictions = predictions.astype(np.int64)
    if predictions.size and (predictions.min() < -1 or predictions.max() >= classes):
        raise ValueError(f"class ids must lie in -1..{classes - 1} (-1: no vote)")
    return predictions


def _seed(seed) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    return int(seed)


__all__ = [
    "STREAM_PARTICIPATION", "WEIGHT_RULES", "CostChunk", "GroupAccounting", "VanishingVotes",
    "account_groups", "group_costs", "group_weights", "rdp_individual", "upsampling_factors",
    "vanishing_costs", "vanishing_frequencies", "vanishing_participation", "vanishing_votes",
    "weighted_histogram",
]
