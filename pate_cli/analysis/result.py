"""One analysis's setting (``RunSetting``), result (totals, typed parts, per-query table as a
stream or arrays) and what a sweep row averages (``ReplayTotals``).
Size: one concept, a run's result: its typed parts and fields and their views."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, fields
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from .._views import load_providers
from ..accounting.conversion import rdp_to_epsilon
from ..errors import InputError
from ..inputs.readers import votes_state
from ..query_table import QueryTable, per_query_frame
from ..work_sizes import DEFAULT_CHUNK

if TYPE_CHECKING:
    import pandas as pd

    from ..accounting.grouped import GroupedCounts
    from ..accounting.risk import AttackRisk
    from ..accounting.smooth_sensitivity import SmoothSensitivityResult
    from ..inputs.votes import VoteSet
    from ..mechanisms import Mechanism


@dataclass(frozen=True, eq=False)
class RunSetting:
    """``analyze_votes``'s keywords, as pate-analyze's where named alike.

    ``teachers`` (default: the first row's total); ``accounting``: ``replay``, ``expected`` or
    ``data-independent``; ``orders`` (default: the paper's grid); ``queries``: the first N
    analysed rows; ``query_indices``: those rows, in order; ``chunk_size``: rows per chunk;
    ``halt_at``: ``query`` or ``output``; ``outputs``: each query's output; ``labels``: true
    labels, per file row; ``student``: Interactive's probabilities; ``decisions``: charged
    instead of the replay's; ``initial_rdp``: spent before the first query; ``salt``:
    independent noise, same seed; ``source``: the ``VoteSet``, for the summary;
    ``per_query``: the table as a stream (``iter_frames()``); ``workers``, ``executor``: where
    chunks are counted; ``consumer``: called with each chunk's ``QueryChunk`` in query order
    by a totals-only pass (no budget, outputs or SVT-PATE); with ``composes_costs`` true it
    composes the data-dependent costs and the run's own totals are math:independent's."""

    teachers: float | None = None
    accounting: str = "replay"
    delta: float = 1e-5
    orders: Any = None
    conversion: str = "classic"
    seed: int = 0
    queries: int | None = None
    budget: float | None = None
    labels: Any = None
    student: Any = None
    query_indices: Any = None
    initial_rdp: Any = None
    salt: int = 0
    chunk_size: int | None = DEFAULT_CHUNK
    source: Any = None
    decisions: Any = None
    progress: Callable[[int, int], object] | None = None
    q_bound: str = "union"
    per_query: bool = True
    workers: int | None = None
    executor: Any = None
    outputs: Any = None
    halt_at: str = "query"
    consumer: Callable[[Any], object] | None = None

    @classmethod
    def of(cls, **options: Any) -> RunSetting:
        """The setting of these keywords; ``TypeError`` naming any that is not one."""
        unknown = sorted(set(options) - {item.name for item in fields(cls)})
        if unknown:
            raise TypeError(f"unexpected keyword arguments: {', '.join(unknown)}")
        return cls(**options)


# A result's views, which the outputs layer above registers (``pate_cli._views``).
PRESENTERS: dict[str, Callable[..., Any]] = {}
register_presenter = PRESENTERS.__setitem__  # (name, view): dict, html, plot, report


def _presenter(name: str) -> Callable[..., Any]:
    if name not in PRESENTERS:
        load_providers()  # the modules ``pate_cli/__init__`` names, registering every view
    return PRESENTERS[name]


@dataclass(frozen=True)
class BudgetPart:
    """A budget run (math:costs): ``halted_at``: first query not processed (or None);
    ``carries``: RDP spent before each ``block``-query block after the first, where the
    per-query table restarts its sums."""

    limit: float
    halted_at: int | None
    remaining: float
    halt_at: str = "query"
    carries: np.ndarray | None = field(default=None, repr=False, compare=False)
    block: int = 0


@dataclass(frozen=True)
class DecisionsPart:
    """Where the accounted decisions came from (``--decisions FILE``)."""

    path: str | None
    sha256: str | None
    rows: int


@dataclass(frozen=True)
class SvtPart:
    """SVT-PATE's parameters and what its replay met (math:svt); ``bound``: "rdp" (zCDP)
    or "pure" (c eps0); ``cutoffs_tried``: --svt-cutoff auto's {cutoff, scale, answered}."""

    scale: float
    cutoff: int
    threshold: float
    unstable: int
    delta1: float
    delta2: float
    scale_from_target_epsilon: bool
    bound: str = "rdp"
    cutoff_from_search: bool = False
    cutoffs_tried: tuple | None = None


@dataclass(frozen=True)
class RoundPart:
    """One round of a multi-round run: its rows, what it answered, its epsilon alone."""

    round: int
    mechanism: str
    params: Mapping[str, Any]
    first_row: int
    queries: int
    answered: float | int
    epsilon: float
    order: float
    label_accuracy: float | None


@dataclass(frozen=True)
class GroupsPart:
    """Individualized PATE (math:individualized): each group's row, the stop, and ``baseline``:
    the uniform run at the least budget, with its data-independent figures (the result's are
    the largest group's at the stop)."""

    variant: str
    groups: tuple[Mapping[str, Any], ...]
    stopped_at: int | None
    labels_released: int
    baseline: Mapping[str, Any]
    rule: tuple = ()  # the variant's rule option and value (GroupParameters.rule)


@dataclass(frozen=True)
class AddedRdp:
    """An external RDP curve added before the first query (``--add-rdp``)."""

    path: str | None  # None: a table given to the API
    sha256: str | None
    note: str | None


@dataclass(frozen=True)
class InputFile:
    """A non-vote file a run read (``--labels``...): option, path as given, sha256 of its bytes
    (None for a pipe, which cannot be read again)."""

    option: str
    path: str
    sha256: str | None


@dataclass(frozen=True)
class TuningPart:
    """``--tuning`` (math:tuning): the search's law of K (``shape`` None for Poisson), the
    run alone (``epsilon_single``) and the whole search (``epsilon_tuned``)."""

    distribution: str
    text: str
    mean: float
    shape: float | None
    epsilon_single: float
    epsilon_tuned: float
    order: float
    # data-dependent run's data-independent bound with the search (None: data-independent
    # run, epsilon_tuned is that bound)
    epsilon_tuned_data_independent: float | None = None
    # math:risk: the attack risk of the search's data-independent curve (published with it)
    risk: AttackRisk | None = None


@dataclass(frozen=True)
class MultilabelPart:
    """``--multilabel``: a query's squared L2 sensitivity; (query, label) pairs released."""

    variant: str
    labels: int
    tau: float | None
    sensitivity_squared: float
    labels_output: int


@dataclass(frozen=True)
class QueryCounts:
    """A run's queries, Interactive-GNMax's ``outcomes``, and for ``analysis.rounds`` the
    selection and answer RDP sums (``step_sums``) and correct labels (all, by outcome)."""

    queries: int
    labels_output: int
    outcomes: tuple[int, ...] | None
    reordered: bool
    step_sums: tuple[np.ndarray, np.ndarray] | None = field(default=None, compare=False)
    correct: int = 0
    outcome_correct: tuple[int, ...] | None = None
    # every plurality count whole? (first pass, for the table's column type; None: not
    # recorded, the table's pass scans the votes)
    whole_maxima: bool | None = field(default=None, compare=False)


class NoColumnsError(ValueError):
    """A per-query view asked of a result analysed without per-query columns."""


@dataclass(frozen=True, repr=False, eq=False)
class AnalysisResult:
    """One analysis's totals and parts; its per-query table as a stream (``iter_frames()``)
    or arrays (``result.epsilon_cumulative``); ``query_index``: --query-indices' rows.

    Which figure is which (docs/reference/json.md): ``epsilon`` is the run's figure under
    its ``accounting``, data-dependent and unsanitised (not for publication) unless that is
    ``data-independent``; ``epsilon_data_independent`` composes the run's own answers, and
    where the votes decide how many a run answers (a selection step, a budget) the bound for
    any run is ``epsilon_data_independent_worst`` (``_pld``: its PLD figure, where
    smaller). Two results are equal when their JSON summaries (``to_dict()``) are.
    """

    mechanism: Mechanism
    accounting: str
    conversion: str
    delta: float
    seed: int
    orders: np.ndarray
    teachers: float
    classes: int
    rdp_total: np.ndarray
    epsilon: float
    order: float
    epsilon_data_independent: float
    order_data_independent: float
    answered_total: float
    rdp_at_order: Mapping[str, float] | None  # None: an individualized run's (per group)
    label_accuracy: float | None
    warnings: tuple[str, ...] = ()
    # Data-independent bound with all ``requested`` queries answered (a budget run's too,
    # past its halt; run.reports_any_run_bound).
    epsilon_data_independent_worst: float | None = None
    requested: int | None = None
    # The data-independent RDP curve the publishable bound rests on (with --add-rdp), if any.
    rdp_data_independent: np.ndarray | None = None
    source: VoteSet | None = None
    query_index: np.ndarray | None = None
    accuracy_by_outcome: Mapping[str, float | None] | None = None
    initial_rdp: np.ndarray | None = None
    budget: BudgetPart | None = None
    svt: SvtPart | None = None
    rounds: tuple[RoundPart, ...] | None = None
    groups: GroupsPart | None = None
    # --smooth-sensitivity's release or a PendingRelease: read it as ``smooth_sensitivity``
    release: Any = None
    added_rdp: AddedRdp | None = None
    tuning: TuningPart | None = None
    # cli:json's ``outputs``: queries grouped by output (analysis.added_figures), or None
    outputs: Mapping[str, Any] | None = None
    multilabel: MultilabelPart | None = None
    decisions: DecisionsPart | None = None
    q_bound: str = "union"
    data_independent_method: str = "rdp"
    # The RDP figure a PLD ``epsilon`` replaced (``data_independent_method == "pld"``).
    epsilon_rdp: float | None = None
    # The Gaussian steps' data-independent PLD figure (replay: the run's answers, expected:
    # all); None without one (--add-rdp, rounds...).
    epsilon_data_independent_pld: float | None = None
    epsilon_data_independent_worst_pld: float | None = None  # its PLD figure
    counts: QueryCounts | None = None
    # The per-query table by a second pass over the votes (or ``table``, columns in memory).
    frames: Callable[[AnalysisResult], Iterator[pd.DataFrame]] | None = field(
        default=None, repr=False, compare=False)
    # The distinct (answer, selection) statistic pairs, kept for the per-query table's pass.
    distinct_pairs: GroupedCounts | None = field(default=None, repr=False, compare=False)
    table: QueryTable | None = field(default=None, repr=False, compare=False)
    # math:risk: attack risk of the headline epsilon's accounting and the publishable one
    risk: AttackRisk | None = None
    risk_data_independent: AttackRisk | None = None
    input_files: tuple[InputFile, ...] = ()
    # cli:json's read: how the votes were read (analysis.api.read_options)
    read_options: Mapping[str, Any] | None = None
    # ``votes_state`` of the votes ``frames`` reads again, when the run was analysed
    source_state: tuple | None = field(default=None, repr=False, compare=False)

    @property
    def queries(self) -> int:
        assert self.counts is not None  # every analysis counts its queries
        return self.counts.queries

    @property
    def smooth_sensitivity(self) -> SmoothSensitivityResult | None:
        """The smooth-sensitivity release (math:smooth), or None; streamed: formed by the
        table's pass if that ran to its end, else by a pass of its own now."""
        release = self.release  # a PendingRelease has report() (added_figures reads this module)
        report = getattr(release, "report", None)
        return report() if callable(report) else release

    @property
    def epsilon_improved(self) -> float | None:
        """The total RDP curve's improved conversion (math:conversion), whatever
        ``--conversion`` chose; None for SVT-PATE and individualized groups (not RDP)."""
        if self.svt is not None or self.groups is not None or self.rdp_total is None:
            return None
        epsilon, _ = rdp_to_epsilon(self.rdp_total, orders=self.orders, delta=self.delta,
                                    conversion="improved")
        if self.data_independent_method == "pld":  # the PLD figure is valid and smaller
            return min(float(epsilon), self.epsilon)
        return float(epsilon)

    @property
    def has_columns(self) -> bool:
        """Whether the per-query table is available (not ``analyze(..., per_query=False)``)."""
        return self.table is not None or self.frames is not None

    def require_columns(self, what: str = "the per-query table") -> None:
        if not self.has_columns:
            raise NoColumnsError(f"{what} is not available: this result was analysed without "
                                 "its per-query table (analyze(..., per_query=False)); "
                                 "analyse again with per_query=True")

    @cached_property
    def _table(self) -> QueryTable:
        return self.table or QueryTable.of_frame(self.to_frame())

    def __getattr__(self, name: str) -> Any:
        """The per-query columns as arrays (the stream is put together once, on first use)."""
        if name in QueryTable.__dataclass_fields__:
            return getattr(self._table, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __eq__(self, other) -> bool:
        """Equal results: equal JSON summaries (:meth:`to_dict`)."""
        if not isinstance(other, AnalysisResult):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]  # arrays: not hashable

    def to_dict(self) -> dict:
        """The JSON summary of cli:json (``--format json``), with provenance."""
        return _presenter("dict")(self)

    def to_frame(self) -> pd.DataFrame:
        """The per-query table of cli:per-query: ``iter_frames()``'s pieces put together."""
        import pandas as pd
        return pd.concat(list(self.iter_frames()), ignore_index=True)

    def iter_frames(self) -> Iterator[pd.DataFrame]:
        """The per-query table in consecutive pieces, so memory holds one chunk at a time."""
        self.require_columns()
        if self.frames is not None and self.source_state is not None and \
                votes_state(getattr(self.source, "votes", None)) != self.source_state:
            name = getattr(self.source, "name", "the votes")
            raise InputError(f"{name}: changed since the run was analysed: its per-query "
                             "table would not be the run's (analyse the votes again)")
        outputs = getattr(self.source, "outputs", None)  # cli:per-query's output grouping, if any
        for frame in [per_query_frame(self)] if self.frames is None else self.frames(self):
            if outputs is not None:  # the ``output`` column after the others
                frame["output"] = outputs[frame["query"].to_numpy()]
            yield frame

    @property
    def plot(self):
        """``pate-plot``'s figures: ``.history()``, ``.selection()``, ``.groups()``."""
        return _presenter("plot")(self)

    def report(self, fmt: str = "html", **options) -> str:
        """The ``pate-report`` privacy statement (``fmt``: html or markdown)."""
        return _presenter("report")(self, fmt=fmt, **options)

    def _repr_html_(self) -> str:
        """A compact summary table and a cost sparkline (Jupyter's rich display)."""
        return _presenter("html")(self)

    def __repr__(self) -> str:
        """One line: the counts, and epsilon as the summary states it (with its caveats)."""
        answered = (f"{self.answered_total:.1f} expected" if self.accounting == "expected"
                    else f"{int(round(self.answered_total))}")
        return (f"<AnalysisResult {self.mechanism.name}, {self.accounting}: {self.queries} "
                f"queries, answered {answered}, epsilon {_presenter('epsilon')(self)}>")


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
    warnings: tuple[str, ...] = ()
    rdp_total: tuple[float, ...] | None = None  # the curve a search composes (--tuning)
    risk: AttackRisk | None = None  # the run's publishable attack risk (math:risk)
    epsilon_method: str = "rdp"  # whose figure ``epsilon`` is: ``rdp`` or ``pld``
    # the bound with every query answered (``epsilon_data_independent_worst``, or its PLD
    # figure where smaller), where the run reports one
    epsilon_any_run: float | None = None
