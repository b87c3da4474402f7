"""``run_sweep``: ``pate-sweep`` for notebooks (a DataFrame, one row per point), and the steps
the command shares: settings checked against pate-analyze's rules (``sweep_settings``), the
grid planned over the vote files (``planned_points``)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import Any

import numpy as np

from ..accounting.tuning import TuningDistribution, tuning_distribution
from ..errors import OptionError, OverBudget
from ..inputs.npy_files import npz_holds
from ..numerics import real_number
from ..orders import parse_grid, validate_orders, whole_numbers
from .columns import GRID_PARAMETERS, MECHANISM_PARAMETERS
from .executors import local_pool
from .points import SweepSettings, check_sweep_options, open_sources, plan_points, run_points
from .run import check_grid_size
from .select import best_command, best_row, no_best_text, pareto_rows
from .table import sweep_frame
from .tuning import TUNING_COLUMNS, add_tuning_columns

# The most points a sweep plans unless told otherwise (``--max-points``).
MAX_POINTS = 100_000

# pate-sweep's options that are the command's own business, with what the API does instead.
COMMAND_ONLY = {
    "out": "the DataFrame is returned (write it with to_csv/to_parquet)",
    "fmt": "the DataFrame is returned",
    "resume": "rows are not journalled: the DataFrame is returned whole",
    "progress": "no progress bar",
    "quiet": "nothing is printed",
    "debug": "exceptions propagate",
    "scheduler": "executor=a Dask client's get_executor()",
}


@dataclass(frozen=True, eq=False)
class SweepSpec:
    """``run_sweep``'s keywords (pate-sweep's options; ``files``: VOTES, ``mechanisms``: ``-m``,
    ``grids``: the parameter grids)."""

    files: tuple = ()
    mechanisms: tuple = ("confident",)
    grids: Mapping[str, tuple] = field(default_factory=lambda: MappingProxyType({}))
    labels: Any = None
    students: Any = None
    repeats: int = 1
    seed: int = 0
    accounting: str = "replay"
    delta: float = 1e-5
    budget: float | None = None
    conversion: str = "classic"
    orders: Any = None
    order: float | None = None
    confidence: float | None = None  # None: 0.9
    executor: Any = None
    workers: int | None = None
    tuning: Any = None
    screening: str = "exact"
    sampling: Any = None
    vote_change: str | None = None
    sampling_steps: str | None = None
    index_col: int | None = None
    classes: int | None = None
    columns: Any = None
    best: float | None = None
    pareto: bool = False
    max_points: int = MAX_POINTS

    @classmethod
    def of(cls, files, mechanisms=("confident",), **options: Any) -> SweepSpec:
        """The spec of ``run_sweep(files, mechanisms, **options)``, grid parameters
        (``sigma="20:200:10"``, ``queries=[100, 200]``...) parsed into ``grids``; ``TypeError``
        for any other unknown keyword."""
        known = {item.name for item in fields(cls)} - {"files", "mechanisms", "grids"}
        grids = grid_values({name: value for name, value in options.items()
                             if name not in known})
        files = [files] if isinstance(files, (str, os.PathLike)) else list(files)
        if not all(isinstance(file, (str, os.PathLike)) for file in files):
            raise TypeError("run_sweep reads vote files by path (each row names its file and "
                            "its sha256); save an array with numpy.save and give the path")
        names = tuple(_mechanism_names(mechanisms))
        if ("interactive" in names and options.get("students") is None
                and files and all(npz_holds(file, "student") for file in files)):
            options["students"] = tuple(files)  # each archive's own student (as pate-analyze)
        return cls(files=tuple(files), mechanisms=names, grids=MappingProxyType(grids),
                   **{name: value for name, value in options.items() if name in known})


def run_sweep(files, mechanisms=("confident",), **options: Any):
    """The notebook form of ``pate-sweep``: a DataFrame with one row per grid point.

    Every option of the command is a keyword of the same name, checked with the command's
    rules and messages.

        pate_cli.run_sweep("votes.npy", ["gnmax"], sigma="20:100:20", labels="y.npy", repeats=3)
        pate_cli.run_sweep("votes.npy", ["gnmax"], sigma=[20, 40], accounting="data-independent",
                           sampling="poisson:0.01", vote_change="add")

    Args:
      files: VOTES: a path or a list of paths.
      mechanisms: ``-m``: one name or several (default ``confident``).
      **options: the other fields of :class:`SweepSpec` (``students`` for ``--student``;
        ``COMMAND_ONLY`` lists the command's options about its output, not keywords):
        labels, students: a path or one per file.
        sigma, threshold, sigma_threshold, laplace_scale, svt_scale, svt_cutoff, eta, queries:
          the grids, each a sequence of values or a grid string such as ``"20:200:10"``.
        repeats, seed, accounting, delta, budget, conversion, orders, confidence: as
          pate-analyze's; ``order``: one order, instead of ``orders`` (not both).
        executor: any ``concurrent.futures`` executor (a ``ProcessPoolExecutor``, a Dask
          client's ``get_executor()``); else ``workers`` local processes, or (None) this one.
        tuning: ``"poisson:20"``... (math:tuning): adds the columns ``tuning``,
          ``epsilon_tuned`` and ``epsilon_all_points`` (``sweep.tuning``).
        screening: ``exact`` (math:screening) or ``gaussian`` (the papers') threshold-step curve.
        sampling, vote_change, sampling_steps: (math:sampling) as in ``analyze``
          (``"poisson:RATE"``, ``"without-replacement:m/N"``).
        index_col: drops that column of CSV/TSV files.
        classes, columns: read long tables (``load_votes``).
        pareto: True keeps the rows on the epsilon / score frontier.
        best: ``EPS`` returns the one best row within EPS, with its ``command``.
        max_points: refuse a larger grid before any work (default 100,000).

    Returns:
      A pandas DataFrame, one row per grid point (or per ``pareto`` / ``best`` row).

    Raises:
      OptionError: a refused option or combination, or more points than ``max_points``.
      TypeError: an unknown keyword.
      OverBudget: with ``best``, when no row is within EPS.
    """
    spec = SweepSpec.of(files, mechanisms, **options)
    check_grid_size(spec.mechanisms, spec.grids, files=len(spec.files),
                    max_points=spec.max_points)
    settings, distribution = sweep_settings(spec)
    points = planned_points(spec, settings)
    rows: list = [None] * len(points)
    workers, executor = spec.workers, spec.executor
    pool = (contextlib.nullcontext(executor) if executor is not None or workers in (None, 1)
            else local_pool(min(workers, max(1, len(points)))))
    with pool as running:
        for position, row in run_points(points, executor=running):
            rows[position] = row
    extra: tuple = ()
    if distribution is not None:
        rows = add_tuning_columns(rows, distribution, orders=settings.orders,
                                  delta=spec.delta, conversion=spec.conversion)
        extra = TUNING_COLUMNS
    if spec.pareto:
        rows = pareto_rows(rows)
    if spec.best is not None:
        chosen = best_row(rows, spec.best)
        if chosen is None:
            raise OverBudget(no_best_text(rows, spec.best))
        rows, extra = [dict(chosen, command=best_command(chosen, spec, settings.orders))], (
            *extra, "command")
    return sweep_frame(rows, extra)


def sweep_settings(spec: SweepSpec) -> tuple[SweepSettings, TuningDistribution | None]:
    """What every point shares, checked before any file is read, and the ``tuning`` law (or
    None)."""
    parsed = check_sweep_options(spec.mechanisms, spec)
    if spec.best is not None and not real_number(spec.best, positive=True):
        raise OptionError(f"--best must be a positive number, got {spec.best!r}")
    try:  # as pate-analyze reads them: "32" is the order 32, "2:10:2,20" a grid
        orders = (None if spec.order is None and spec.orders is None else validate_orders(
            spec.orders if spec.order is None else [spec.order]))
    except ValueError as error:
        raise OptionError(f"--order{'' if spec.order is not None else 's'}: {error}") from None
    distribution = None if spec.tuning is None else tuning_distribution(spec.tuning)
    settings = SweepSettings(
        accounting=spec.accounting, delta=spec.delta, budget=spec.budget,
        repeats=spec.repeats, seed=spec.seed, conversion=spec.conversion,
        orders=None if orders is None else tuple(map(float, orders)),
        confidence=0.9 if spec.confidence is None else spec.confidence,
        screening=spec.screening,
        rdp_curves=distribution is not None,
        sampling=None if parsed is None else parsed.text(),
        vote_change=None if parsed is None else parsed.vote_change,
        sampling_steps=None if parsed is None else parsed.steps)
    return settings, distribution


def planned_points(spec: SweepSpec, settings: SweepSettings) -> list:
    """Every grid point over the vote files, each read and checked once here."""
    sources, shapes = open_sources(spec.files, spec.labels, spec.students,
                                   index_col=spec.index_col, classes=spec.classes,
                                   columns=spec.columns, spec=spec)
    return plan_points(sources, spec.mechanisms, dict(spec.grids), settings=settings,
                       shapes=shapes)


def grid_values(grids: dict) -> dict:
    """Each grid (values or ``"start:stop:step"``) as a tuple of numbers; ``TypeError`` for a
    name that is not a grid parameter."""
    unknown = set(grids) - {*GRID_PARAMETERS, "queries"}
    if unknown:
        raise TypeError(f"unknown grid parameters: {', '.join(sorted(unknown))}")
    parsed = {}
    for name, values in grids.items():
        integer = name in ("svt_cutoff", "queries")
        if isinstance(values, str):
            parsed[name] = parse_grid(values, name=name, integer=integer)
        else:
            values = [values] if np.isscalar(values) else list(values)
            try:
                parsed[name] = tuple(whole_numbers(values) if integer else map(float, values))
            except ValueError as error:  # the command's message for a grid text
                raise OptionError(f"--{name.replace('_', '-')}: {error}") from None
    if any(value < 1 for value in parsed.get("svt_cutoff", ())):
        raise OptionError("--svt-cutoff takes whole numbers of at least 1 in a sweep (fixed "
                          f"cut-offs; no 'auto'), got {min(parsed['svt_cutoff'])}")
    return parsed


def _mechanism_names(mechanisms) -> list[str]:
    """The mechanisms, lower-cased, each once; ``OptionError`` naming the known ones."""
    names = [mechanisms] if isinstance(mechanisms, str) else list(mechanisms)
    if not names:
        raise OptionError("give at least one mechanism")
    known = ", ".join(MECHANISM_PARAMETERS)
    checked = []
    for name in names:
        if not isinstance(name, str) or name.lower() not in MECHANISM_PARAMETERS:
            raise OptionError(f"unknown mechanism {name!r} for a sweep (use {known})")
        checked.append(name.lower())
    return list(dict.fromkeys(checked))
