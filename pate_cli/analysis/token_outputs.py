"""Queries grouped into outputs: the generated sequences token votes belong to (CLI.md).

``--halt-at output`` (with ``--budget B``) halts before the first output whose tokens
could take the total above B: output o is processed only if the spend before it plus
every one of its tokens charged in full (both steps; the expected cost under expected
accounting) converts within B, so a generation is never cut mid-sequence (:func:`output_halt`).

Each query of a sparse vote file may carry an ``output`` id (the sequence its token is part
of). An output's cost is the conversion of the RDP its own tokens spent (MATH.md s.6: RDP
adds up over its tokens, both steps charged as the run charged them). The summary gives the
number of outputs, tokens per output and epsilon per output (min, median, max over the
outputs the run processed), and how many were processed whole before a halt. An output's
queries must be consecutive rows (a generation is a sequence).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..errors import InputError, OptionError
from ..mechanisms import NoiseSource
from ..sparse_rows import row_width
from ..work_sizes import READ_VALUES, TASK_VALUES
from .result import BudgetPart
from .setting import analysed_positions, checked_setting
from .steps import chunk_costs, mechanism_steps

# The output halt is checked on curves raised by this factor: the run then summed up to
# the halt (another order of additions) converts within the budget (README, tolerance).
_HALT_MARGIN = 1.0 + 2.0**-32


def check_outputs(outputs: np.ndarray, name: str | None) -> None:
    """One line when an output's queries are not consecutive rows."""
    change = np.flatnonzero(np.diff(outputs) != 0) + 1
    starts = outputs[np.concatenate(([0], change))]
    order = np.argsort(starts, kind="stable")
    repeated = np.flatnonzero(np.diff(starts[order]) == 0)
    if repeated.size:
        again = np.sort(order[repeated[0] : repeated[0] + 2])[1]
        row = int(np.concatenate(([0], change))[again])
        raise InputError(f"{name}: query {row} returns to output {int(outputs[row])} after "
                         "another output (an output's queries must be consecutive rows)")


def outputs_summary(result, votes, outputs: np.ndarray, *, q_bound: str = "union",
                    decisions=None, query_indices=None, salt: int = 0) -> dict:
    """CLI.md's JSON ``outputs`` of a single run (module docstring). ``result`` is the
    run's ``AnalysisResult``; ``votes`` and ``decisions`` what it was analysed with."""
    if query_indices is not None:
        raise OptionError("an output grouping needs the queries in file order: it does not "
                          "combine with --query-indices")
    if result.rounds is not None or result.groups is not None or result.svt is not None:
        raise OptionError("the per-output summary applies to single runs of lnmax, gnmax "
                          "and confident (not --rounds, --individualized or svt)")
    processed = int(result.queries)
    ids = np.asarray(outputs)
    tokens = np.diff(np.flatnonzero(np.concatenate(([True], np.diff(ids) != 0, [True]))))
    epsilons = _per_output_epsilons(result, votes, ids, processed, q_bound, decisions, salt)
    # an output is complete when each of its tokens in the file was processed
    completed = int(np.count_nonzero(np.cumsum(tokens) <= processed))
    return {
        "count": int(tokens.size),
        "tokens_per_output": _spread(tokens),
        "epsilon_per_output": _spread(epsilons) if epsilons.size else None,
        "completed": completed,
    }


def _spread(values: np.ndarray) -> dict:
    return {"min": _plain(values.min()), "median": _plain(np.median(values)),
            "max": _plain(values.max())}


def _plain(value):
    value = float(value)
    return int(value) if value.is_integer() and abs(value) < 2**53 else value


def _per_output_epsilons(result, votes, ids: np.ndarray, processed: int, q_bound: str,
                         decisions, salt: int) -> np.ndarray:
    """Each processed output's epsilon: its processed tokens' summed curves, converted."""
    epsilons = [converter.epsilon(actual)[0] for _, actual, _, converter in _output_sums(
        result, votes, ids, processed, q_bound, decisions, salt)]
    return np.concatenate(epsilons) if epsilons else np.empty(0)


def _output_sums(setting, votes, ids: np.ndarray, count: int, q_bound: str, decisions,
                 salt: int):
    """The outputs of the first ``count`` queries in order, a batch at a time: ``(first
    query of each, (outputs, orders) curves charged, curves if every token were charged
    in full, the run's conversion)``. An output's tokens are summed over the chunks they
    span; ``setting`` names the mechanism, accounting, delta, orders, conversion, seed."""
    if count == 0:
        return
    orders, converter = checked_setting(setting.accounting, setting.delta, setting.orders,
                                        setting.conversion)
    selection, answer = mechanism_steps(setting.mechanism, q_bound=q_bound)
    noise = NoiseSource(setting.seed, salt=salt)
    positions = analysed_positions(votes.shape[0], None, count, lazy=True)
    rows = max(1, min(READ_VALUES // max(1, row_width(votes)),
                      TASK_VALUES // orders.size))
    pending = None  # (first query, actual, full) of the output the last chunk ended in
    for start in range(0, count, rows):
        stop = min(count, start + rows)
        costs = chunk_costs(votes, positions, start, stop, mechanism=setting.mechanism,
                            selection=selection, answer=answer, noise=noise,
                            accounting=setting.accounting, orders=orders,
                            decisions=decisions).costs
        chosen = costs.selection[costs.selection_index]
        answered = costs.answer[costs.answer_index]
        actual = chosen + costs.weight[:, None] * answered
        full = actual if setting.accounting == "expected" else chosen + answered
        firsts = np.flatnonzero(np.concatenate(([True], np.diff(ids[start:stop]) != 0)))
        actual = np.add.reduceat(actual, firsts, axis=0)
        full = np.add.reduceat(full, firsts, axis=0)
        first_query = start + firsts
        if pending is not None and ids[start - 1] == ids[start]:  # the output goes on
            first_query[0] = pending[0]
            actual[0] += pending[1]
            full[0] += pending[2]
        elif pending is not None:  # the output before ended with the previous chunk
            yield (np.array([pending[0]]), pending[1][None, :], pending[2][None, :],
                   converter)
        if first_query.size > 1:
            yield first_query[:-1], actual[:-1], full[:-1], converter
        pending = (int(first_query[-1]), actual[-1], full[-1])
    yield np.array([pending[0]]), pending[1][None, :], pending[2][None, :], converter


def output_halt(setting, votes, ids: np.ndarray, *, budget: float, initial_rdp=None,
                q_bound: str = "union", decisions=None, salt: int = 0) -> int | None:
    """The first query of the first output that could take the total above ``budget``
    (module docstring), or None if every output of ``ids`` (one id per analysed query)
    fits. ``setting`` carries the mechanism, accounting, delta, orders, conversion and
    seed (an ``AnalysisResult`` or a namespace with those names)."""
    carry = None
    for first_query, actual, full, converter in _output_sums(
            setting, votes, ids, ids.size, q_bound, decisions, salt):
        if carry is None:
            carry = (np.zeros(actual.shape[1]) if initial_rdp is None
                     else np.asarray(initial_rdp, dtype=np.float64))
        spent = np.cumsum(np.concatenate((carry[None, :], actual)), axis=0)
        over = converter.epsilon((spent[:-1] + full) * _HALT_MARGIN)[0] > budget
        if over.any():
            return int(first_query[int(np.argmax(over))])
        carry = spent[-1]
    return None


def halted_at_output(result, budget: float, halted: int | None):
    """The run up to an output halt (``analysis.token_outputs.output_halt``) as a budget run."""
    if result.epsilon > budget:  # the halt's margin covers every rounding: never happens
        raise RuntimeError(f"the run up to the output halt spent {result.epsilon!r}, above "
                           f"the budget {budget!r}")
    return replace(result, budget=BudgetPart(limit=budget, halted_at=halted,
                                             remaining=max(0.0, budget - result.epsilon),
                                             halt_at="output"))
