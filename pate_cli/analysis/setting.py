"""What every analysis path shares: the accounting setting, analysed rows, released labels."""

from __future__ import annotations

import numpy as np

from ..accounting.conversion import Conversion
from ..decisions import INTERACTIVE_NAMES, OUTCOME_ABSTAIN, OUTCOME_STUDENT
from ..errors import OptionError
from ..inputs.vote_checks import integer_votes
from ..orders import default_orders
from ..work_sizes import READ_VALUES

ACCOUNTING_MODES = ("replay", "expected", "data-independent")
# The default chunk is sized by elements (rows x classes) so wide vote files stay bounded;
# results never depend on it (composition adds in query order, MATH.md s.6).
DEFAULT_CHUNK = None
CHUNK_ROWS = 8192


def chunk_rows(chunk_size: int | None, classes: int) -> int:
    """Rows per chunk: ``chunk_size`` when given, else the element budget's share."""
    if chunk_size is not None:
        return chunk_size
    return min(CHUNK_ROWS, max(1, READ_VALUES // max(1, int(classes))))


def needs_integer_votes(name: str, parameters: dict, vote_set) -> bool:
    """Whether a run's threshold step compares whole counts (MATH.md s.17's integer
    grid): a Confident aggregator on plain votes, with the exact curve."""
    return (name in ("confident", "confident-exponential")
            and parameters.get("screening") != "gaussian" and integer_votes(vote_set.votes))


def checked_setting(accounting: str, delta: float, orders: np.ndarray | None,
                    conversion: str) -> tuple[np.ndarray, Conversion]:
    """The validated orders and the conversion (MATH.md s.6) of an accounting setting."""
    if accounting not in ACCOUNTING_MODES:
        raise ValueError(f"accounting must be one of {', '.join(ACCOUNTING_MODES)}, "
                         f"got {accounting!r}")
    converter = Conversion.of(orders=default_orders() if orders is None else orders,
                              delta=delta, conversion=conversion)
    return converter.orders, converter


class FirstRows:
    """The analysed positions ``0 .. size-1`` without their array (slices give aranges)."""

    def __init__(self, size: int):
        self.size = int(size)

    def __getitem__(self, part: slice) -> np.ndarray:
        return np.arange(*part.indices(self.size))


def picked_rows(positions, queries: int) -> tuple[np.ndarray | None, bool]:
    """The first ``queries`` analysed rows if ``--query-indices`` picked them (else None)
    and whether they differ from the file's first rows (``QueryCounts.reordered``)."""
    if isinstance(positions, FirstRows):
        return None, False
    rows = np.asarray(positions[:queries])
    return rows, not np.array_equal(rows, np.arange(queries))


def checked_queries(queries) -> int | None:
    """``--queries N`` as an int or None (``True``, ``10.5``, ``"10"`` refused; ``10.0`` is 10)."""
    if queries is None:
        return None
    whole = (isinstance(queries, (int, np.integer))
             or (isinstance(queries, (float, np.floating)) and float(queries).is_integer()))
    if isinstance(queries, (bool, np.bool_)) or not whole:
        raise OptionError(f"queries must be a whole number of queries (the first N rows), "
                          f"got {queries!r}")
    return int(queries)


def checked_mechanism(mechanism) -> None:
    """``OptionError`` unless ``mechanism`` is a mechanism object (not a name)."""
    if isinstance(mechanism, str):
        raise OptionError(f"analyze_votes takes a mechanism object, not the name "
                          f"{mechanism!r}: use pate_cli.analyze(votes, {mechanism!r}) or "
                          f"pate_cli.build_mechanism({mechanism!r}, teachers=M)")
    if not all(hasattr(mechanism, name) for name in ("uses_student", "sequential", "name")):
        raise OptionError(f"analyze_votes takes a mechanism object (GNMax, LNMax, "
                          f"ConfidentGNMax...), got {type(mechanism).__name__}")


def analysed_positions(total: int, query_indices: np.ndarray | None,
                       queries: int | None, *, lazy: bool = False) -> np.ndarray:
    """File rows analysed, in order: ``query_indices`` (or all rows), first ``queries``
    (``lazy``: all rows from the first as :class:`FirstRows`)."""
    available = total
    if query_indices is not None:
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
    queries = checked_queries(queries)
    if queries is None:
        queries = available
    elif queries < 1 or queries > available:
        raise ValueError(f"--queries {queries} is outside 1..{available} "
                         "(the number of queries available)")
    if query_indices is None:
        return FirstRows(queries) if lazy else np.arange(queries)  # type: ignore[return-value]
    return query_indices[:queries].astype(np.int64)


def released_labels(decisions, released: np.ndarray, with_outcome: bool
                    ) -> tuple[np.ndarray, np.ndarray | None]:
    """Each query's output label (-1 for none) and, for Interactive-GNMax, its outcome
    code (reinforced student labels are output too, at no cost)."""
    labels = np.where(released, decisions.label, -1)
    if not with_outcome:
        return labels, None
    from_student = decisions.code == OUTCOME_STUDENT
    labels = np.where(from_student, decisions.label, labels)
    outcome = np.where(released | from_student, decisions.code, OUTCOME_ABSTAIN)
    return labels, outcome.astype(np.int8)


class LabelCounts:
    """Counts behind ``label_accuracy``, ``labels_output`` and the outcome figures."""

    def __init__(self, with_outcome: bool):
        self.output = self.correct = 0
        self.outcomes = np.zeros(len(INTERACTIVE_NAMES), dtype=np.int64) if with_outcome else None
        self.outcome_correct = np.zeros(len(INTERACTIVE_NAMES), dtype=np.int64)

    def merge_in(self, other: LabelCounts) -> None:
        self.output += other.output
        self.correct += other.correct
        if self.outcomes is not None and other.outcomes is not None:
            self.outcomes += other.outcomes
        self.outcome_correct += other.outcome_correct

    def add(self, labels: np.ndarray, outcome: np.ndarray | None,
            truth: np.ndarray | None) -> None:
        output = labels >= 0
        self.output += int(np.count_nonzero(output))
        right = None if truth is None else labels == truth
        if right is not None:
            self.correct += int(np.count_nonzero(right & output))
        if self.outcomes is not None and outcome is not None:
            codes = outcome.astype(np.int64)
            self.outcomes += np.bincount(codes, minlength=self.outcomes.size)
            if right is not None:
                self.outcome_correct += np.bincount(codes[right], minlength=self.outcomes.size)

    def accuracy(self, labelled: bool) -> tuple[float | None, dict[str, float | None] | None]:
        """Accuracy over output labels, and per outcome for Interactive-GNMax."""
        if not labelled:
            return None, None
        accuracy = self.correct / self.output if self.output else None
        return accuracy, None if self.outcomes is None else {
            name: int(self.outcome_correct[code]) / int(self.outcomes[code])
            if self.outcomes[code] else None
            for code, name in enumerate(INTERACTIVE_NAMES) if name != "abstain"}
