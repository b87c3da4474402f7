"""Parameter sweeps: one analysis per grid point, averaged over seeded replays (cli:per-query).

Grid order: vote files, mechanisms as given, parameters in column order (``sigma, threshold,
sigma_threshold, laplace_scale, svt_scale, svt_cutoff, eta, queries``; confident-exponential:
``eta, threshold, sigma_threshold``), the last fastest. A point is a task with seeds ``seed,
seed+1, ...`` naming its vote file (each worker maps it once): rows do not depend on the
worker. Over the R replays: means and sample standard deviations (``ddof=1``; 0 when R = 1);
``order`` the most chosen (smallest among ties); ``epsilon_data_independent`` the mean (it
depends on the answered count); attack-risk columns the largest. ``--resume`` reuses a row
only for the same KEY_COLUMNS.
Size: one concept, a sweep's points: planning them, running one (its row) and many.
"""

from __future__ import annotations

import itertools
import math
import os
import warnings
from collections import Counter
from collections.abc import Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, wait
from dataclasses import dataclass, field, replace

import numpy as np

from .._version import __version__
from ..analysis import analyze_totals
from ..analysis.run_spec import RunSpec, check_input, check_options
from ..errors import InputError, OptionError, PateWarning
from ..inputs.long_table import ColumnMap, column_map
from ..inputs.output_ids import kept_note, output_starts, whole_outputs_kept
from ..inputs.readers import file_sha256, is_regular
from ..inputs.votes import load_student, load_votes
from ..mechanisms import build_mechanism
from ..mechanisms.aggregators import SELECTING, TAKEN_BY, needs_integer_votes, not_taken
from ..mechanisms.sampled import SampledMechanism, parse_sampling
from ..orders import orders_text
from .columns import (
    GRID_PARAMETERS,
    MECHANISM_PARAMETERS,
    SWEEP_COLUMNS,
    place_key,
    point_key,
    risk_columns,
)
from .executors import abandon
from .point_memory import PointMemory
from .tuning import RDP_KEY

SEED_LIMIT = 2**63 - 1


@dataclass(frozen=True)
class SweepSettings:
    """What every point of a sweep shares."""

    accounting: str = "replay"
    delta: float = 1e-5
    budget: float | None = None
    repeats: int = 1
    seed: int = 0
    conversion: str = "classic"
    orders: tuple | None = None
    confidence: float = 0.9
    screening: str = "exact"  # the threshold step's data-independent curve (math:screening)
    rdp_curves: bool = False  # rows carry their total RDP curve (``--tuning``)
    sampling: str | None = None  # --sampling, canonical text (math:sampling)
    vote_change: str | None = None  # --vote-change (with sampling)
    sampling_steps: str | None = None  # --sampling-steps (with sampling)

    def __post_init__(self):
        if not (isinstance(self.repeats, int) and self.repeats >= 1):
            raise ValueError(f"repeats must be a positive integer, got {self.repeats!r}")

    @property
    def orders_text(self) -> str:
        """The order grid as the ``orders`` column writes it (``orders_text``)."""
        return orders_text(self.orders)


@dataclass(frozen=True)
class VoteSource:
    """A vote file as the sweep's tasks see it: absolute paths and the expected sha256."""

    file: str  # as the user wrote it (the ``file`` column)
    path: str
    sha256: str
    labels: str | None = None
    student: str | None = None
    labels_sha256: str | None = None
    student_sha256: str | None = None
    index_col: int | None = None  # --index-col: the column of a CSV/TSV to drop
    classes: int | None = None  # --classes: a long table's vocabulary size
    columns: ColumnMap | None = None  # --columns: a long table's column names
    label_queries: int | None = None  # one -n: --labels may hold a label per analysed query

    @property
    def read(self) -> str | None:
        """The ``read`` column: the reading options that change the votes, or None."""
        parts = [f"{name}={value}" for name, value in (
            ("index_col", self.index_col), ("classes", self.classes),
            ("columns", self.columns)) if value is not None]
        return " ".join(parts) or None


@dataclass(frozen=True)
class SweepPoint:
    """One grid point: a mechanism with every parameter resolved (defaults filled from M)."""

    index: int
    source: VoteSource
    mechanism: str
    params: tuple  # ((name, value), ...) in GRID_PARAMETERS order, only those used
    queries: int
    teachers: float
    settings: SweepSettings = field(default_factory=SweepSettings)

    def key(self) -> tuple:
        """The identity --resume matches rows on (every KEY_COLUMN)."""
        return point_key(self.row_head())

    def place(self) -> tuple:
        """The row's place in a table (POINT_COLUMNS)."""
        return place_key(self.row_head())

    def row_head(self) -> dict:
        """The row's columns known before it runs: KEY_COLUMNS and ``teachers``."""
        params = dict(self.params)
        head = {"file": self.source.file, "mechanism": self.mechanism}
        head.update({name: params.get(name) for name in GRID_PARAMETERS})
        head["confidence"] = (self.settings.confidence if self.mechanism == "interactive"
                              else None)
        head.update({"queries": self.queries, "teachers": self.teachers,
                     "repeats": self.settings.repeats, "seed": self.settings.seed,
                     "accounting": self.settings.accounting, "delta": self.settings.delta,
                     "budget": self.settings.budget,
                     "conversion": self.settings.conversion,
                     "orders": self.settings.orders_text,
                     "sha256": self.source.sha256,
                     "labels_sha256": self.source.labels_sha256,
                     "student_sha256": (self.source.student_sha256
                                        if self.mechanism == "interactive" else None),
                      "version": __version__, "sampling": self.settings.sampling,
                      "vote_change": self.settings.vote_change, "read": self.source.read})
        selecting = self.mechanism in SELECTING  # a threshold step: its curve, its sample
        head.update(screening=self.settings.screening if selecting else None,
                    sampling_steps=self.settings.sampling_steps if selecting else None)
        return head


def plan_points(sources: Iterable[VoteSource], mechanisms: Iterable[str], grids: dict, *,
                settings: SweepSettings, shapes: dict) -> list[SweepPoint]:
    """Every grid point in grid order, parameters resolved and validated (``ValueError`` names
    the first invalid one). ``grids``: name (or ``queries``) -> values, iterated only for
    mechanisms using them (else the default from M); ``shapes``: path -> (queries, teachers,
    output starts or None): a ``queries`` value inside an output keeps the whole outputs
    before it, as pate-analyze's ``-n`` (a ``PateWarning``; one point where two meet)."""
    mechanisms = list(mechanisms)
    points = []
    for source in sources:
        total, teachers, starts = shapes[source.path]
        queries_axis = _whole_outputs(grids.get("queries", (None,)), starts, total,
                                      source.file)
        for name in mechanisms:
            used = MECHANISM_PARAMETERS[name]
            axes = [grids.get(parameter, (None,)) for parameter in used]
            for values in itertools.product(*axes, queries_axis):
                *chosen, queries = values
                if queries is not None and queries > total:
                    raise ValueError(f"--queries {queries} exceeds the {total} queries of "
                                     f"{source.file}")
                given = {parameter: value for parameter, value in zip(used, chosen, strict=True)
                         if value is not None}
                try:
                    mechanism = build_mechanism(name, teachers=teachers, **given)
                except ValueError as error:
                    described = ", ".join(f"{key} {value:g}" for key, value in given.items())
                    raise ValueError(f"{name} with {described or 'defaults'}: {error}") \
                        from None
                params = _resolved(name, mechanism)
                points.append(SweepPoint(index=len(points), source=source, mechanism=name,
                                         params=params,
                                         queries=total if queries is None else int(queries),
                                         teachers=teachers, settings=settings))
    return points


def _whole_outputs(values, starts, total: int, file: str) -> tuple:
    """The ``queries`` grid over a file with outputs: a value inside an output rounded down to
    the outputs before it, its note a ``PateWarning``; values that meet, once; values beyond
    the file left to refuse."""
    kept = []
    for value in values:
        if value is not None and value <= total:
            try:
                whole, cut = whole_outputs_kept(starts, int(value), total)
            except OptionError as error:
                raise OptionError(f"{file}: {error}") from None
            if cut is not None:
                warnings.warn(f"{file}: {kept_note(cut, whole)}", PateWarning, stacklevel=2)
            value = whole
        if value not in kept:
            kept.append(value)
    return tuple(kept)


def _resolved(name: str, mechanism) -> tuple:
    """The mechanism's parameters under their sweep column names, in column order."""
    values = dict(mechanism.params)
    return tuple((parameter, _number(values[parameter])) for parameter in GRID_PARAMETERS
                 if parameter in MECHANISM_PARAMETERS[name])


def _number(value):
    value = value.item() if isinstance(value, np.generic) else value
    return int(value) if isinstance(value, (int, np.integer)) else float(value)


# A worker process's memory, made by its first point; this process's comes from run_points.
_WORKER_MEMORY: list[PointMemory] = []


def run_point_in_worker(point: SweepPoint) -> dict:
    """``run_point`` in a worker process, with the memory that process keeps."""
    if not _WORKER_MEMORY:
        _WORKER_MEMORY.append(PointMemory())
    return run_point(point, _WORKER_MEMORY[0])



# A row's notes, printed once per kind by the command; never a table column.
WARNINGS_KEY = "warnings"


def check_sweep_options(mechanisms, spec):
    """pate-analyze's option rules for every mechanism of ``spec``, before any work (the first
    broken one's ``OptionError``); an option only some take is refused when none does.
    Returns the parsed ``--sampling`` (or None)."""
    if spec.seed + spec.repeats - 1 > SEED_LIMIT:  # the table's seed column is int64
        raise OptionError(f"--seed: a sweep's seeds (seed .. seed + repeats - 1) are at most "
                          f"2^63 - 1 = {SEED_LIMIT} (its table stores them as 64-bit "
                          f"integers), got {spec.seed} with {spec.repeats} repeats")
    for name in mechanisms:  # each mechanism alone (-m interactive needs --student...)
        check_options(_run_spec(name, spec))
    optional = _grid_options(spec)
    taken = {name: {} for name in mechanisms}
    for key, value in optional.items():  # refused when no mechanism of the grid takes it
        refusals = []
        for name in mechanisms:
            try:
                check_options(_run_spec(name, spec, **{key: value}))
                taken[name][key] = value
            except OptionError as error:
                refusals.append(str(error))
        if len(refusals) == len(mechanisms):
            raise OptionError((key in TAKEN_BY and not_taken(key, *mechanisms)) or refusals[0])
    for name in mechanisms:  # and what each takes, together
        check_options(_run_spec(name, spec, **taken[name]))
    return None if spec.sampling is None else parse_sampling(
        spec.sampling, spec.vote_change or "move", spec.sampling_steps or "shared")


def _run_spec(name: str, spec, **options) -> RunSpec:
    """pate-analyze's spec of ``name`` in sweep ``spec``, with the grid's ``options``."""
    student = "given" if spec.students and name == "interactive" else None
    return RunSpec.of(name, **{"accounting": spec.accounting, "budget": spec.budget,
                               "delta": spec.delta,
                               "tuning": spec.tuning, "sampling": spec.sampling,
                               "vote_change": spec.vote_change, "student": student, **options})


def _grid_options(spec) -> dict:
    """``spec``'s options only some mechanisms take: each grid parameter given (first value),
    ``--confidence``, ``--screening gaussian``, ``--sampling-steps``, ``--student``, the order
    grid; pate-sweep refuses one no mechanism takes."""
    given = {key: values[0] for key, values in spec.grids.items() if key != "queries"}
    given.update({key: value for key, value in (
        ("orders", spec.orders), ("order", spec.order),
        ("confidence", spec.confidence), ("sampling_steps", spec.sampling_steps),
        ("screening", None if spec.screening == "exact" else spec.screening),
        ("student", "given" if spec.students else None)) if value is not None})
    return given


def run_point(point: SweepPoint, memory: PointMemory | None = None) -> dict:
    """Analyse one point with its R seeds: the row of SWEEP_COLUMNS. ``memory`` (fresh when
    None) keeps the noise and curves points share (``analysis.run.SharedWork``): same bits."""
    memory = PointMemory() if memory is None else memory
    settings = point.settings
    vote_set, student = memory.opened(point.source)
    given = dict(point.params)
    if point.mechanism == "interactive":
        given["confidence"] = settings.confidence
    if point.mechanism in SELECTING:
        given["screening"] = settings.screening
        given["integer_votes"] = needs_integer_votes(point.mechanism, given, vote_set)
    mechanism = build_mechanism(point.mechanism, teachers=point.teachers, **given)
    if settings.sampling is not None:  # sampled voters: amplified curves (math:sampling)
        mechanism = SampledMechanism(mechanism, parse_sampling(
            settings.sampling, settings.vote_change, settings.sampling_steps or "shared"))
    seeds = range(settings.seed, settings.seed + settings.repeats)
    totals = analyze_totals(
        vote_set.votes, mechanism, seeds=seeds, teachers=point.teachers,
        accounting=settings.accounting, delta=settings.delta,
        orders=None if settings.orders is None else np.asarray(settings.orders),
        conversion=settings.conversion, queries=point.queries, budget=settings.budget,
        labels=vote_set.labels, outputs=None if vote_set.outputs is None  # summed as
        else vote_set.outputs[:point.queries],  # pate-analyze sums an output grouping
        student=student if point.mechanism == "interactive" else None,
        shared=memory.shared)
    row = point.row_head()
    answered = np.array([run.answered for run in totals])
    epsilon = np.array([run.epsilon for run in totals])
    accuracy = [run.label_accuracy for run in totals if run.label_accuracy is not None]
    orders = Counter(run.order for run in totals)
    most = max(orders.values())
    row.update({
        "answered": float(np.mean(answered)),
        "answered_std": _std(answered),
        "epsilon": _mean(epsilon),
        "epsilon_std": _std(epsilon),
        "epsilon_max": float(np.max(epsilon)),
        "epsilon_any_run": (None if any(run.epsilon_any_run is None for run in totals)
                            else max(run.epsilon_any_run for run in totals)),
        "order": _finite(min(order for order, count in orders.items() if count == most)),
        "epsilon_data_independent": _mean(np.array([run.epsilon_data_independent
                                                     for run in totals])),
        "label_accuracy": float(np.mean(accuracy)) if accuracy else None,
        "label_accuracy_std": _std(np.array(accuracy)) if accuracy else None,
        "labels_output": float(np.mean([run.labels_output for run in totals])),
        "epsilon_method": "pure" if not all(math.isfinite(run.order) for run in totals)
        else "pld" if any(run.epsilon_method == "pld" for run in totals) else "rdp",
        **risk_columns([run.risk for run in totals]),
    })
    notes = tuple(dict.fromkeys(note for run in totals for note in run.warnings))
    extra = {}
    if settings.rdp_curves:  # the largest over the replays, at each order (--tuning)
        extra[RDP_KEY] = np.max([run.rdp_total for run in totals], axis=0)
    return {**{column: row.get(column) for column in SWEEP_COLUMNS}, WARNINGS_KEY: notes,
            **extra}


def _mean(values: np.ndarray) -> float:
    """The mean; the value itself where all are equal (``np.mean`` of equal floats can end an
    ulp below them, and a row of identical replays then showed its largest apart)."""
    return float(values[0]) if np.all(values == values[0]) else float(np.mean(values))


def _std(values: np.ndarray) -> float:
    """Sample standard deviation; exactly 0 for equal values (centred on the first)."""
    return float(np.std(values - values[0], ddof=1)) if values.size > 1 else 0.0


def run_points(points: list[SweepPoint], *, executor=None,
               in_flight: int | None = None) -> Iterator[tuple[int, dict]]:
    """Yield ``(position in points, row)`` as points finish: in order here without an executor,
    else at most ``in_flight`` queued (default 4 per worker, else 8); a task's exception is
    raised here after the pending tasks are given up (``abandon``)."""
    if executor is None:
        memory = PointMemory()  # dropped with the generator
        for position, point in enumerate(points):
            yield position, run_point(point, memory)
        return
    limit = in_flight or 4 * getattr(executor, "_max_workers", 2)
    pending = {}
    queue = iter(enumerate(points))
    try:
        while True:
            for position, point in queue:
                pending[executor.submit(run_point_in_worker, point)] = position
                if len(pending) >= limit:
                    break
            if not pending:
                return
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in sorted(done, key=pending.get):
                position = pending.pop(future)
                yield position, future.result()
    finally:
        abandon(executor, list(pending))


def one_per_file(values, files, name: str) -> list:
    """One entry per vote file from None, a path, or paths given once or once per file."""
    if values is None or isinstance(values, (str, os.PathLike)):
        values = [values]
    values = list(values) or [None]
    if len(values) == 1:
        return values * len(files)
    if len(values) != len(files):
        raise ValueError(f"{name} was given {len(values)} times for {len(files)} vote files "
                         "(give it once, or once per file)")
    return values


def open_sources(files, labels=None, students=None, index_col: int | None = None,
                 classes: int | None = None, columns=None, spec=None
                 ) -> tuple[list[VoteSource], dict]:
    """Validate every vote file (with labels and student) once, here: the sources and
    ``{path: (queries, teachers)}``. ``labels``, ``students``: None, one path or one per file;
    each file must pass every mechanism's ``run_spec.INPUT_RULES`` in ``spec`` (with a single
    ``-n N`` a labels file may hold one label per analysed query, as pate-analyze's); the rest
    as ``load_votes``'s. Raises ``InputError`` / ``ValueError`` / ``OptionError``."""
    labels = one_per_file(labels, files, "--labels")
    students = one_per_file(students, files, "--student")
    columns = column_map(columns)
    reading = dict(index_col=index_col, classes=classes,
                   columns=columns if columns.given else None)
    counts = () if spec is None else spec.grids.get("queries", ())
    label_queries = counts[0] if len(counts) == 1 else None
    sources, shapes = [], {}
    for file, label_file, student_file in zip(files, labels, students, strict=True):
        for path in (file, label_file, student_file):
            _check_reopenable(path)
        vote_set = load_votes(file, labels=label_file, queries=label_queries, **reading)
        for name in () if spec is None else spec.mechanisms:
            check_input(_run_spec(name, spec), vote_set)  # --sampling's m, say
        if student_file is not None:
            load_student(student_file, queries=vote_set.queries, classes=vote_set.classes)
        source = replace(source_for(str(file), sha256=vote_set.sha256, labels=label_file,
                                    student=student_file), label_queries=label_queries,
                         **reading)
        if source.path in shapes:
            raise InputError(f"{file} is given twice")
        sources.append(source)
        shapes[source.path] = (vote_set.queries, vote_set.teachers,
                               output_starts(vote_set.outputs))
    return sources, shapes


def _check_reopenable(path) -> None:
    """Refuse, before reading, standard input and pipes (FIFO, process substitution): workers
    open each file themselves, and those read once only."""
    if path is None:
        return
    name = os.fspath(path)  # (missing, or a directory: load_votes says so)
    if name == "-" or (os.path.exists(name) and not os.path.isdir(name)
                       and not is_regular(name)):
        raise InputError(f"{path}: standard input or a pipe, which can be read once only; "
                         "pate-sweep's workers open each file themselves: give a file")


def source_for(file: str, *, sha256: str, labels: str | None, student: str | None):
    """A VoteSource with absolute paths (workers on the same file system open them) and the
    labels and student files' sha256."""
    def absolute(path):
        return None if path is None else os.path.abspath(path)

    def digest(path):
        return None if path is None else file_sha256(path)

    return VoteSource(file=file, path=absolute(file), sha256=sha256, labels=absolute(labels),
                      student=absolute(student), labels_sha256=digest(labels),
                      student_sha256=digest(student))


def grid_size(mechanisms: Iterable[str], grids: dict, *, files: int) -> int:
    """How many points ``plan_points`` makes of ``grids`` (known before reading a file)."""
    per_file = 0
    for name in mechanisms:
        size = len(grids.get("queries", (None,)))
        for parameter in MECHANISM_PARAMETERS[name]:
            size *= len(grids.get(parameter, (None,)))
        per_file += size
    return per_file * files


def _finite(order: float) -> float | None:
    """An order, or None (an empty cell) for SVT-PATE's pure-DP bound (order ``inf``)."""
    return None if math.isinf(order) else order
