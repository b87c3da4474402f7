"""SVT-PATE analysis: the seeded replay, the data-independent guarantee (math:svt), the
cut-off search of ``--svt-cutoff auto`` and the note of a run that answers little.

The guarantee is converted over a continuous order (``accounting.svt``: never above the pure-DP
bound ``c eps0``), on the grid only with ``--add-rdp`` (math:conversion). The replay goes a
chunk at a time (the table is a second pass, :func:`svt_frames`), carrying only the count of
unstable queries met: query noise is keyed by position, threshold noise by round
(math:mechanisms, ``SVTPATE.pieces``).

The search and the note (``accounting.svt_tuning``) read the distances to instability, computed
once into a ``ScratchColumn``. The search looks at the votes: the epsilon holds for a cut-off
fixed in advance and no composition covers the choice (``--tuning`` does not take ``-m svt``),
so the run says so, its summary marks the cut-off as searched (``svt.cutoff_from_search``) and
pate-report refuses it."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from functools import partial
from types import SimpleNamespace

import numpy as np

from ..accounting.composition import initial_carry
from ..accounting.conversion import grid_edge_notes, rdp_to_epsilon
from ..accounting.svt import (
    rdp_svt,
    rdp_svt_rounds,
    svt_epsilon_so_far,
    svt_guarantee,
    svt_scale_for_epsilon,
    svt_threshold_for,
)
from ..accounting.svt_tuning import cutoff_candidates, distance_pieces, few_answers_note
from ..decisions import SVT_HALTED, SVT_UNSTABLE, Decisions, LabelCounts
from ..inputs.rows import ScratchColumn, integral_maxima, picked_rows
from ..mechanisms import NoiseSource
from ..mechanisms.svt import (
    SVTPATE,
    check_svt_sequence,
    distance_to_instability,
)
from ..numerics import whole as whole_numbers
from ..query_table import per_query_frame
from ..vote_rows import row_width
from ..work_sizes import stream_rows
from .result import AnalysisResult, QueryCounts, RunSetting, SvtPart


def analyze_svt(votes: np.ndarray, mechanism: SVTPATE, setting: RunSetting,
                positions: np.ndarray, seed: int) -> AnalysisResult:
    """SVT-PATE's replay and data-independent guarantee (math:svt) for rows ``positions`` under
    ``seed`` and the resolved ``setting``. ``epsilon``: the guarantee at the cut-off, whatever
    ``accounting`` and the replay; ``decisions`` replace the replay and must follow the
    mechanism's rule; ``per_query`` gives the result ``frames``."""
    teachers, accounting, delta, orders = (setting.teachers, setting.accounting,
                                           setting.delta, setting.orders)
    conversion, labels, initial_rdp, salt = (setting.conversion, setting.labels,
                                             setting.initial_rdp, setting.salt)
    chunk_size, source, decisions, per_query = (setting.chunk_size, setting.source,
                                                setting.decisions, setting.per_query)
    queries = positions.size
    with ScratchColumn(votes, positions, queries, chunk_size, of=distance_to_instability,
                       name="SVT distances") as distances:
        tried = None
        if mechanism.cutoff == "auto":
            tried = search_cutoff(mechanism, distances, delta=delta, conversion=conversion,
                                  seed=seed, salt=salt)
            chosen, _, best = max(tried, key=lambda each: each[2])  # the first on a tie
            mechanism = replace(mechanism, cutoff=chosen)
        target = mechanism.scale is None
        if target:
            mechanism = replace(mechanism, scale=svt_scale_for_epsilon(
                epsilon=mechanism.target_epsilon, cutoff=mechanism.cutoff, queries=queries,
                delta=delta, orders=orders, conversion=conversion,
                threshold=mechanism.threshold))
        guarantee = svt_guarantee(scale=mechanism.scale, cutoff=mechanism.cutoff,
                                  queries=queries, delta=delta, orders=orders,
                                  conversion=conversion, threshold=mechanism.threshold)
        if decisions is not None:
            check_svt_sequence(decisions.code, int(mechanism.cutoff))
        total = initial_carry(initial_rdp, orders) + rdp_svt(
            scale=mechanism.scale, cutoff=mechanism.cutoff, orders=orders)
        notes: tuple[str, ...] = ()
        # The guarantee alone: converted over a continuous order, never above c eps0.
        epsilon, order, bound = guarantee.epsilon, guarantee.order, guarantee.bound
        if initial_rdp is not None:  # a curve known on the grid only: compose, convert there
            epsilon, order = (float(x) for x in rdp_to_epsilon(
                total, orders=orders, delta=guarantee.delta1, conversion=conversion))
            bound, notes = "rdp", grid_edge_notes(orders, order, epsilon)

        # The replay, a chunk at a time, counted.
        answered = unstable = passing = 0
        halted_at: int | None = None
        largest, whole = -np.inf, True  # whole: every plurality count (the table's type)
        counts = LabelCounts(False)
        for piece in replace(mechanism, threshold=guarantee.threshold).pieces(
                votes, positions, queries, noise=NoiseSource(seed, salt=salt),
                given=decisions, chunk_size=chunk_size):
            made = piece.decisions
            answered += int(np.count_nonzero(made.answered))
            unstable += int(np.count_nonzero(made.code == SVT_UNSTABLE))
            if halted_at is None and np.any(made.code == SVT_HALTED):
                halted_at = piece.start + int(np.argmax(made.code == SVT_HALTED))
            largest = max(largest, float(piece.distance.max()))
            passing += int(np.count_nonzero(piece.distance > guarantee.threshold))
            whole = whole and whole_numbers(piece.plurality)
            counts.add(made.label, None, None if labels is None
                       else np.asarray(labels)[np.asarray(positions[piece.start : piece.stop])])

        if tried is not None:
            notes += (f"--svt-cutoff auto chose cut-off {mechanism.cutoff} ({best} answers; "
                      f"{len(tried)} cut-offs tried, 1 to {tried[-1][0]}) by replaying these "
                      "votes with the run's noise; the epsilon holds for a cut-off fixed in "
                      "advance, not for one chosen on these votes (no composition covers the "
                      "choice): for a guarantee, fix the cut-off before looking at the private "
                      "votes, e.g. the one this search prints on public or held-out votes",)
        few = few_answers_note(distances, answered, cutoff=int(mechanism.cutoff),
                               scale=mechanism.scale, threshold=guarantee.threshold,
                               user_threshold=mechanism.threshold, halted_at=halted_at,
                               largest=largest, passing=passing, delta=delta,
                               conversion=conversion, target=target)
    query_index, reordered = picked_rows(positions, queries)
    return AnalysisResult(
        mechanism=mechanism, accounting=accounting, conversion=conversion, delta=delta,
        seed=int(seed), orders=orders, teachers=teachers, classes=int(votes.shape[1]),
        rdp_total=total, epsilon=epsilon, order=order,
        epsilon_data_independent=epsilon, order_data_independent=order,
        answered_total=float(answered),
        rdp_at_order={"selection": float(rdp_svt_rounds(
            scale=mechanism.scale, rounds=mechanism.cutoff, orders=[order])[0]), "answer": 0.0},
        label_accuracy=counts.accuracy(labels is not None)[0], source=source,
        initial_rdp=None if initial_rdp is None else np.asarray(initial_rdp, dtype=float),
        warnings=notes if few is None else notes + (few,),
        svt=SvtPart(scale=mechanism.scale, cutoff=int(mechanism.cutoff),
                    threshold=guarantee.threshold, unstable=unstable,
                    delta1=guarantee.delta1, delta2=guarantee.delta2,
                    scale_from_target_epsilon=target, bound=bound,
                    cutoff_from_search=tried is not None,
                    cutoffs_tried=None if tried is None else tuple(
                        {"cutoff": c, "scale": lam, "answered": n} for c, lam, n in tried)),
        counts=QueryCounts(queries=queries, labels_output=counts.output, outcomes=None,
                           reordered=reordered, correct=counts.correct, whole_maxima=whole),
        query_index=query_index,
        frames=partial(svt_frames, votes=votes, positions=positions, given=decisions,
                       salt=salt) if per_query else None)


def svt_frames(result, *, votes, positions, given: Decisions | None = None, salt: int = 0,
               chunk_size: int | None = None) -> Iterator:
    """The per-query table, one DataFrame a chunk, by a second pass over ``votes`` (the
    arguments ``result`` was analysed with; ``chunk_size`` changes no byte).
    ``epsilon_cumulative``: the guarantee had the mechanism stopped after that query
    (``svt_epsilon_so_far``). ``rdp_selection``: each unstable query's share at the reported
    order, ``alpha eps0^2 / 2``, or ``eps0`` when the pure-DP bound gave epsilon (order
    ``inf``). Extra columns: ``distance``, ``unstable``."""
    svt, queries, orders = result.svt, result.queries, result.orders
    chunk_size = stream_rows(chunk_size, row_width(votes), 1)
    carry = None if result.initial_rdp is None else initial_carry(result.initial_rdp, orders)
    per_round = float(rdp_svt_rounds(scale=svt.scale, rounds=1, orders=[result.order])[0])
    integral = result.counts.whole_maxima
    if integral is None:  # (a result built otherwise: scan the votes)
        integral = integral_maxima(votes, positions, queries, chunk_size)
    for piece in replace(result.mechanism, threshold=svt.threshold).pieces(
            votes, positions, queries, noise=NoiseSource(result.seed, salt=salt), given=given,
            chunk_size=chunk_size):
        count = piece.stop - piece.start
        unstable = piece.decisions.code == SVT_UNSTABLE
        epsilon, order = svt_epsilon_so_far(
            scale=svt.scale, cutoff=svt.cutoff, unstable=unstable, met=piece.met,
            delta=svt.delta1, conversion=result.conversion, carry=carry, orders=orders)
        yield per_query_frame(SimpleNamespace(
            accounting=result.accounting, queries=count,
            query_index=np.asarray(positions[piece.start : piece.stop], dtype=np.int64),
            plurality=piece.plurality, plurality_class=piece.plurality_class,
            answered=piece.decisions.answered.astype(np.float64), label=piece.decisions.label,
            log_q=np.full(count, np.nan), log_pr_answered=np.zeros(count),
            epsilon_query=np.full(count, np.nan),
            epsilon_cumulative=epsilon, order_cumulative=order,
            rdp_selection=np.where(unstable, per_round, 0.0), rdp_answer=np.zeros(count),
            outcome=None,
            columns={"distance": piece.distance, "unstable": unstable.astype(np.int64)}),
            integral=integral)


def search_cutoff(mechanism: SVTPATE, distances: ScratchColumn, *, delta: float,
                  conversion: str, seed: int, salt: int) -> list[tuple[int, float, int]]:
    """``(cutoff, scale, answered)`` per cut-off tried: scale solved for ``target_epsilon``
    (skipped if none in range; ``ValueError`` if none left), seeded replay's answers. The run
    keeps the most answers (smallest cut-off on a tie)."""
    queries = len(distances)
    tried = []
    for cutoff in cutoff_candidates(queries):
        try:
            scale = svt_scale_for_epsilon(epsilon=mechanism.target_epsilon, cutoff=cutoff,
                                          queries=queries, delta=delta, conversion=conversion,
                                          threshold=mechanism.threshold)
        except ValueError:
            continue
        candidate = SVTPATE(scale=scale, cutoff=cutoff, threshold=(
            mechanism.threshold if mechanism.threshold is not None else
            svt_threshold_for(scale=scale, cutoff=cutoff, queries=queries, delta2=delta / 2)))
        answered = candidate.answers(distance_pieces(distances),
                                     noise=NoiseSource(seed, salt=salt))
        tried.append((cutoff, scale, answered))
    if not tried:
        raise ValueError(f"no SVT cut-off reaches target epsilon "
                         f"{mechanism.target_epsilon:g} with a scale in [1e-6, 1e9]")
    return tried
