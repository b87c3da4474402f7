"""SVT-PATE analysis: the seeded replay and the data-independent guarantee (MATH.md s.8).

The rounds compose in closed form (zCDP, ``accounting.svt.rdp_svt``); the guarantee is
converted over a continuous order (``accounting.svt.svt_epsilon``: never above the pure-DP
bound ``c eps0``, no order grid). Only with an external RDP curve (``--add-rdp``, known on
the grid alone) is the sum converted on the grid by ``rdp_to_epsilon`` (MATH.md s.6).

The replay goes a chunk at a time (``analysis.svt_pass``): the run keeps counts only, and
its table is a second pass, so memory is bounded by the chunk. The cut-off
search of ``--svt-cutoff auto`` and the few-answers note read the distances to
instability from a temporary file (``analysis.svt_advice``).
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial

import numpy as np

from ..accounting.conversion import rdp_to_epsilon
from ..accounting.svt import (
    rdp_svt,
    rdp_svt_rounds,
    svt_guarantee,
    svt_scale_for_epsilon,
)
from ..mechanisms import SVT_HALTED, SVT_UNSTABLE, SVTPATE
from .result import AnalysisResult, QueryCounts, SvtPart
from .setting import FirstRows, grid_edge_notes, initial_carry
from .svt_advice import DistanceFile, few_answers_note, search_cutoff, search_note
from .svt_pass import SvtTally, run_columns, svt_frames, svt_pieces


def analyze_svt(votes: np.ndarray, mechanism: SVTPATE, *, positions: np.ndarray,
                teachers: float, accounting: str, delta: float, orders: np.ndarray,
                conversion: str, seed: int, labels: np.ndarray | None,
                initial_rdp: np.ndarray | None, salt: int, chunk_size: int,
                source: object | None, decisions=None,
                per_query: bool = True) -> AnalysisResult:
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

    The replay is counted a chunk at a time and no per-query array is kept
    (``result.counts``); ``per_query`` gives the result its table's pass
    (``result.frames``, ``svt_pass.svt_frames``).
    """
    queries = positions.size
    with DistanceFile(votes, positions, queries, chunk_size) as distances:
        return _analyze(votes, mechanism, distances, positions=positions, teachers=teachers,
                        accounting=accounting, delta=delta, orders=orders,
                        conversion=conversion, seed=seed, labels=labels,
                        initial_rdp=initial_rdp, salt=salt, chunk_size=chunk_size,
                        source=source, given=decisions, per_query=per_query)


def _analyze(votes, mechanism: SVTPATE, distances: DistanceFile, *, positions, teachers,
             accounting, delta, orders, conversion, seed, labels, initial_rdp, salt,
             chunk_size, source, given, per_query) -> AnalysisResult:
    queries = distances.size
    search = None
    if mechanism.cutoff == "auto":
        search = search_cutoff(mechanism, distances, delta=delta, conversion=conversion,
                               seed=seed, salt=salt)
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
    if given is not None:
        check_svt_sequence(given.outcome, int(mechanism.cutoff))

    carry = initial_carry(initial_rdp, orders)
    total = carry + rdp_svt(scale=mechanism.scale, cutoff=mechanism.cutoff, orders=orders)
    if initial_rdp is None:
        # The guarantee alone: converted over a continuous order, never above c eps0.
        epsilon, order, bound = guarantee.epsilon, guarantee.order, guarantee.bound
        notes: tuple[str, ...] = ()
    else:
        # An external curve is known on the grid only: compose and convert there.
        epsilon, order = (float(x) for x in rdp_to_epsilon(total, orders=orders,
                                                          delta=guarantee.delta1,
                                                          conversion=conversion))
        bound = "rdp"
        notes = grid_edge_notes(orders, order, epsilon)
    at_order = float(rdp_svt_rounds(scale=mechanism.scale, rounds=mechanism.cutoff,
                                    orders=[order])[0])
    part = SvtPart(scale=mechanism.scale, cutoff=int(mechanism.cutoff),
                   threshold=guarantee.threshold, unstable=0,
                   delta1=guarantee.delta1, delta2=guarantee.delta2,
                   scale_from_target_epsilon=target, bound=bound,
                   cutoff_from_search=search is not None,
                   cutoffs_tried=None if search is None else tuple(
                       {"cutoff": c, "scale": lam, "answered": n}
                       for c, lam, n in search.tried))
    result = AnalysisResult(
        mechanism=mechanism, accounting=accounting, conversion=conversion, delta=delta,
        seed=int(seed), orders=orders, teachers=teachers, classes=int(votes.shape[1]),
        rdp_total=total, epsilon=epsilon, order=order,
        epsilon_data_independent=epsilon, order_data_independent=order, answered_total=0.0,
        rdp_at_order={"selection": at_order, "answer": 0.0}, label_accuracy=None,
        source=source,
        initial_rdp=None if initial_rdp is None else np.asarray(initial_rdp, dtype=float),
        svt=part)

    # The replay, a chunk at a time, counted.
    run = run_columns(result, salt=salt)
    tally = SvtTally(guarantee.threshold, None if labels is None else np.asarray(labels),
                     positions)
    for piece in svt_pieces(votes, positions, queries, mechanism=run["mechanism"],
                            noise=run["noise"], given=given, chunk_size=chunk_size):
        tally.add(piece)

    if search is not None:
        notes += (search_note(search),)
    few = few_answers_note(mechanism, distances, tally.answered,
                           threshold=guarantee.threshold, halted_at=tally.halted_at,
                           largest=tally.largest, passing=tally.passing, delta=delta,
                           conversion=conversion, target=target)
    if few is not None:
        notes += (few,)
    result = replace(result, answered_total=float(tally.answered),
                     label_accuracy=tally.labels.accuracy(labels is not None)[0],
                     warnings=notes, svt=replace(part, unstable=tally.unstable))
    picked = not isinstance(positions, FirstRows)
    counts = QueryCounts(queries=queries, labels_output=tally.labels.output, outcomes=None,
                         reordered=picked and not np.array_equal(positions,
                                                                 np.arange(queries)),
                         correct=tally.labels.correct)
    result = replace(result, counts=counts,
                     query_index=np.asarray(positions[:queries]) if picked else None)
    if per_query:
        result = replace(result, frames=partial(svt_frames, votes=votes, positions=positions,
                                                given=given, salt=salt))
    return result


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
