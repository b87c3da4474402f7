"""SVT-PATE analysis: the seeded replay and the data-independent guarantee (MATH.md s.8).

The rounds compose in closed form (zCDP, ``accounting.svt.rdp_svt``); the guarantee is
converted over a continuous order (``accounting.svt.svt_epsilon``: never above the pure-DP
bound ``c eps0``, no order grid). Only with an external RDP curve (``--add-rdp``, known on
the grid alone) is the sum converted on the grid by ``rdp_to_epsilon`` (MATH.md s.6).
``--svt-cutoff auto`` and the note of a run that answers little are in ``svt_advice``.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..accounting.conversion import rdp_to_epsilon
from ..accounting.svt import (
    rdp_svt,
    rdp_svt_rounds,
    svt_epsilon,
    svt_guarantee,
    svt_scale_for_epsilon,
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
from .result import AnalysisResult, SvtPart
from .setting import grid_edge_notes, initial_carry, label_accuracy, rows_of
from .svt_advice import few_answers_note, search_cutoff, search_note


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
        plurality=plurality, plurality_class=plurality_class,
        answered=answered, label=label, log_q=np.full(queries, np.nan),
        log_pr_answered=np.zeros(queries), epsilon_query=np.full(queries, np.nan),
        epsilon_cumulative=eps_rounds[index.reshape(-1)],
        order_cumulative=order_rounds[index.reshape(-1)], rdp_selection=rdp_selection,
        rdp_answer=np.zeros(queries), rdp_total=total, epsilon=epsilon, order=order,
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
                        for c, lam, n in search.tried)),
        columns={"distance": distance, "unstable": unstable.astype(np.int64)})


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
