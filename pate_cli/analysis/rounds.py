"""Multi-round runs (``--rounds``): successive analyses composed into one RDP curve.

RDP adds up order by order (MATH.md section 6), so a run in rounds (for instance the 2018
paper's Confident-GNMax round followed by an Interactive-GNMax round with a student) costs
the sum of its rounds' curves. Each round starts from the RDP the earlier rounds spent, so
per-query cumulative figures run across rounds: the carry goes into ``analyze_votes``,
whose running sums are the composition kernel's; whole curves are converted by
``rdp_to_epsilon`` (the kernel's offset + minimum + clip, MATH.md s.6).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

from ..accounting.conversion import check_delta, rdp_to_epsilon
from ..accounting.svt import rdp_svt, rdp_svt_rounds
from ..errors import InputError
from ..inputs import load_rounds, load_student
from ..mechanisms import MECHANISMS, Mechanism, build_mechanism
from ..orders import default_orders, validate_orders
from .result import AnalysisResult, RoundPart
from .run import analyze_votes
from .setting import (
    DEFAULT_CHUNK,
    grid_edge_notes,
    initial_carry,
    label_accuracy,
    needs_integer_votes,
)
from .steps import data_independent_curve, mechanism_steps, per_query_at_order


@dataclass(frozen=True)
class Round:
    """One round of a multi-round run: which file rows, which mechanism, which student."""

    rows: np.ndarray
    mechanism: Mechanism
    student: np.ndarray | None = None


def analyze_rounds(votes: np.ndarray, rounds: list[Round], *, teachers: float | None = None,
                   accounting: str = "replay", delta: float = 1e-5,
                   orders: np.ndarray | None = None, conversion: str = "classic",
                   seed: int = 0, labels: np.ndarray | None = None,
                   initial_rdp: np.ndarray | None = None, chunk_size: int | None = DEFAULT_CHUNK,
                   source: object | None = None) -> AnalysisResult:
    """Compose successive rounds into one RDP curve and one epsilon (RDP adds up, s.6).

    Round k is analysed on its rows with the RDP spent by rounds 0..k-1 as its starting
    point (so per-query cumulative figures run across rounds) and independent noise (salt
    k). The result concatenates the rounds' queries; ``rounds`` has one summary
    per round, with the epsilon of that round alone.
    """
    check_delta(delta)
    orders = default_orders() if orders is None else validate_orders(orders)
    if not rounds:
        raise ValueError("a multi-round run needs at least one round")
    carry = initial_carry(initial_rdp, orders)
    parts, summaries = [], []
    for number, spec in enumerate(rounds):
        part = analyze_votes(votes, spec.mechanism, teachers=teachers, accounting=accounting,
                             delta=delta, orders=orders, conversion=conversion, seed=seed,
                             labels=labels, student=spec.student, query_indices=spec.rows,
                             initial_rdp=carry, salt=number, chunk_size=chunk_size,
                             source=source)
        # Orders an added curve leaves out (+inf) carry no information about this round.
        alone = np.where(np.isfinite(carry), part.rdp_total - carry, np.inf)
        eps_alone, order_alone = rdp_to_epsilon(alone, orders=orders, delta=delta,
                                                conversion=conversion)
        summaries.append(RoundPart(
            round=number, mechanism=spec.mechanism.name,
            params=dict(spec.mechanism.params), first_row=int(spec.rows[0]),
            queries=part.queries,
            answered=part.answered_total if accounting == "expected"
            else int(round(part.answered_total)),
            epsilon=float(eps_alone), order=float(order_alone),
            label_accuracy=part.label_accuracy,
        ))
        carry = part.rdp_total
        parts.append(part)
    epsilon, order = (float(x) for x in rdp_to_epsilon(carry, orders=orders, delta=delta,
                                                      conversion=conversion))
    notes = grid_edge_notes(orders, order, epsilon)
    at_order = np.array([order])
    rdp_sel, rdp_ans = zip(*(per_query_rdp_at(part, at_order) for part in parts), strict=True)
    di_curve = sum(_data_independent_curve(part, orders) for part in parts)
    eps_di, order_di = (float(x) for x in rdp_to_epsilon(di_curve, orders=orders, delta=delta,
                                                        conversion=conversion))

    def joined(name: str) -> np.ndarray:
        return np.concatenate([getattr(part, name) for part in parts])

    label = joined("label")
    positions = joined("query_index")
    outcome = None
    if any(part.outcome is not None for part in parts):
        outcome = np.concatenate([part.outcome if part.outcome is not None else
                                  np.where(part.label >= 0, 1, 0).astype(np.int8)
                                  for part in parts])
    accuracy, by_outcome = label_accuracy(label, labels, positions, outcome)
    rdp_sel, rdp_ans = np.concatenate(rdp_sel), np.concatenate(rdp_ans)
    return AnalysisResult(
        mechanism=_Rounds(tuple(spec.mechanism for spec in rounds)), accounting=accounting,
        conversion=conversion, delta=delta, seed=int(seed), orders=orders,
        teachers=parts[0].teachers, classes=parts[0].classes,
        plurality=joined("plurality"), plurality_class=joined("plurality_class"),
        answered=joined("answered"), label=label, log_q=joined("log_q"),
        log_pr_answered=joined("log_pr_answered"), epsilon_query=joined("epsilon_query"),
        epsilon_cumulative=joined("epsilon_cumulative"),
        order_cumulative=joined("order_cumulative"), rdp_selection=rdp_sel, rdp_answer=rdp_ans,
        rdp_total=carry, epsilon=epsilon, order=order, epsilon_data_independent=eps_di,
        order_data_independent=order_di, answered_total=float(sum(p.answered_total
                                                                  for p in parts)),
        rdp_at_order={"selection": float(np.sum(rdp_sel)), "answer": float(np.sum(rdp_ans))},
        label_accuracy=accuracy, warnings=notes, source=source,
        query_index=positions, outcome=outcome, accuracy_by_outcome=by_outcome,
        initial_rdp=None if initial_rdp is None else np.asarray(initial_rdp, dtype=float),
        rounds=tuple(summaries),
        columns={"round": np.concatenate([np.full(p.queries, k)
                                          for k, p in enumerate(parts)])})


@dataclass(frozen=True)
class _Rounds:
    """The mechanism of a composed multi-round run (for reporting)."""

    mechanisms: tuple[Mechanism, ...]
    name: str = field(default="rounds", init=False)

    @property
    def params(self) -> dict:
        return {"rounds": len(self.mechanisms)}


def per_query_rdp_at(result: AnalysisResult, at_order: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray]:
    """Per-query selection and charged answer RDP of ``result`` at other orders."""
    if result.mechanism.sequential:
        share = rdp_svt_rounds(scale=result.mechanism.scale, rounds=1, orders=at_order[:1])[0]
        return (np.where(result.columns["unstable"] > 0, share, 0.0),
                np.zeros(result.queries))
    selection, answer = mechanism_steps(result.mechanism)
    columns = {"log_pr_answered": result.log_pr_answered, "log_q": result.log_q}
    return per_query_at_order(selection, answer, columns, result.answered, at_order,
                               result.accounting == "data-independent")


def _data_independent_curve(result: AnalysisResult, orders: np.ndarray) -> np.ndarray:
    if result.mechanism.sequential:
        return rdp_svt(scale=result.mechanism.scale, cutoff=result.mechanism.cutoff,
                       orders=orders)
    selection, answer = mechanism_steps(result.mechanism)
    return data_independent_curve(selection, answer, answered=result.answered_total,
                                  queries=result.queries, orders=orders)


def rounds_of(rounds, vote_set, defaults: dict, parameter_names) -> list[Round]:
    """``--rounds``: a JSON file's rounds (or given specs / ``Round`` objects), each with
    its rows and mechanism (the call's ``defaults`` for parameters it does not set)."""
    specs = load_rounds(rounds) if isinstance(rounds, (str, os.PathLike)) else rounds
    return [_round(dict(spec) if not isinstance(spec, Round) else spec, vote_set, defaults,
                   parameter_names) for spec in specs]


def _round(spec, vote_set, defaults: dict, parameter_names) -> Round:
    """One round of ``--rounds``: its rows, mechanism (the call's values as defaults)."""
    if isinstance(spec, Round):
        return spec
    name = spec["mechanism"]
    if name not in MECHANISMS or name == "svt":
        raise InputError(f"--rounds: mechanism {name!r} is not one of "
                         f"{', '.join(m for m in MECHANISMS if m != 'svt')}")
    rows = np.asarray(spec["rows"])
    if rows.max() >= vote_set.queries:
        raise InputError(f"--rounds: rows up to {int(rows.max())} but {vote_set.path} has "
                         f"{vote_set.queries} queries")
    keys = set(parameter_names)
    parameters = {**defaults, **{key: value for key, value in spec.items() if key in keys}}
    student = None
    if name == "interactive":
        if "student" not in spec:
            raise InputError("--rounds: an interactive round needs a 'student' file")
        student = load_student(spec["student"], queries=vote_set.queries,
                               classes=vote_set.classes)
    mechanism = build_mechanism(name, teachers=vote_set.teachers, **parameters,
                                integer_votes=needs_integer_votes(name, parameters, vote_set))
    return Round(rows=rows, mechanism=mechanism, student=student)
