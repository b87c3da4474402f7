"""``run_sweep``: the notebook form of ``pate-sweep`` (a DataFrame, one row per point), and
the steps the command shares with it: the settings checked against pate-analyze's rules
(``sweep_settings``) and the grid planned over the vote files (``planned_points``)."""

from __future__ import annotations

import contextlib
import os

import numpy as np

from ..accounting.tuning import TuningDistribution, tuning_distribution
from ..errors import OptionError, OverBudget
from ..orders import parse_grid
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


def run_sweep(files, mechanisms=("confident",), *, labels=None, students=None, repeats: int = 1,
              seed: int = 0, accounting: str = "replay", delta: float = 1e-5,
              budget: float | None = None, conversion: str = "classic", orders=None,
              order: float | None = None, confidence: float = 0.9, executor=None,
              workers: int | None = None, tuning=None, screening: str = "exact",
              sampling=None, vote_change: str | None = None,
              sampling_steps: str | None = None, index_col: int | None = None,
              classes: int | None = None, columns=None, best: float | None = None,
              pareto: bool = False, max_points: int = MAX_POINTS, **grids):
    """The notebook form of ``pate-sweep``: a DataFrame with one row per grid point.

    Every option of the command is a keyword of the same name (``files`` for VOTES,
    ``mechanisms`` for ``-m``, ``students`` for ``--student``; ``COMMAND_ONLY`` lists those
    about the command's output), checked with the command's rules and messages.

    ``files``: a path or a list of paths; ``labels`` / ``students``: a path or one per
    file. ``grids``: ``sigma``, ``threshold``, ``sigma_threshold``, ``laplace_scale``,
    ``svt_scale``, ``svt_cutoff``, ``eta``, ``queries``, each a sequence of values or a
    grid string such as ``"20:200:10"``. ``executor``: any ``concurrent.futures``
    executor (a ``ProcessPoolExecutor``, a Dask client's ``get_executor()``); else
    ``workers`` local processes, or (None) this process. ``tuning`` (``"poisson:20"``...;
    math:tuning) adds the columns ``tuning``, ``epsilon_tuned`` and ``epsilon_all_points``
    (``sweep.tuning``). ``screening``: ``exact`` (math:screening) or ``gaussian`` (the
    papers') threshold-step curve. ``sampling`` (``"poisson:RATE"``,
    ``"without-replacement:m/N"``), ``vote_change`` and ``sampling_steps`` (math:sampling)
    as in ``analyze``.
    ``index_col`` drops that column of CSV/TSV files; ``classes`` and ``columns`` read long
    tables (``load_votes``). ``order`` fixes one order (overrides ``orders``).
    ``pareto=True`` keeps the rows on the epsilon / score frontier; ``best=EPS`` returns
    the one best row within EPS with its ``command`` (``OverBudget`` when none is).
    ``max_points``: refuse a larger grid before any work.

        pate_cli.run_sweep("votes.npy", ["gnmax"], sigma="20:100:20", labels="y.npy", repeats=3)
        pate_cli.run_sweep("votes.npy", ["gnmax"], sigma=[20, 40], accounting="data-independent",
                           sampling="poisson:0.01", vote_change="add")
    """
    files = [files] if isinstance(files, (str, os.PathLike)) else list(files)
    mechanisms = _mechanism_names(mechanisms)
    parsed = grid_values(grids)
    check_grid_size(mechanisms, parsed, files=len(files), max_points=max_points)
    settings, distribution = sweep_settings(
        mechanisms, accounting=accounting, delta=delta, budget=budget, repeats=repeats,
        seed=seed, conversion=conversion, orders=orders, order=order, confidence=confidence,
        tuning=tuning, screening=screening, sampling=sampling, vote_change=vote_change,
        sampling_steps=sampling_steps, student_given=students is not None)
    points = planned_points(files, mechanisms, parsed, settings=settings, labels=labels,
                            students=students, index_col=index_col, classes=classes,
                            columns=columns)
    rows: list = [None] * len(points)
    pool = (contextlib.nullcontext(executor) if executor is not None or workers in (None, 1)
            else local_pool(min(workers, max(1, len(points)))))
    with pool as running:
        for position, row in run_points(points, executor=running):
            rows[position] = row
    extra: tuple = ()
    if distribution is not None:
        rows = add_tuning_columns(rows, distribution, orders=settings.orders, delta=delta,
                                  conversion=conversion)
        extra = TUNING_COLUMNS
    if pareto:
        rows = pareto_rows(rows)
    if best is not None:
        chosen = best_row(rows, best)
        if chosen is None:
            raise OverBudget(no_best_text(rows, best))
        line = best_command(chosen, files=files, labels=labels, students=students,
                            orders=settings.orders, conversion=conversion,
                            index_col=index_col, classes=classes, columns=columns)
        rows, extra = [dict(chosen, command=line)], (*extra, "command")
    return sweep_frame(rows, extra)


def sweep_settings(mechanisms, *, accounting: str, delta: float, budget, repeats: int,
                   seed: int, conversion: str, orders, order, confidence: float, tuning,
                   screening: str, sampling, vote_change, student_given: bool,
                   sampling_steps=None) -> tuple[SweepSettings, TuningDistribution | None]:
    """What every point of a sweep shares, checked against pate-analyze's option rules for
    each mechanism (``check_sweep_options``) before any file is read, and the ``tuning``
    law (or None). ``order`` overrides ``orders``."""
    if order is not None:
        orders = (order,)
    parsed = check_sweep_options(mechanisms, accounting=accounting, budget=budget,
                                 tuning=tuning, sampling=sampling, vote_change=vote_change,
                                 sampling_steps=sampling_steps, student_given=student_given)
    distribution = None if tuning is None else tuning_distribution(tuning)
    settings = SweepSettings(
        accounting=accounting, delta=delta, budget=budget, repeats=repeats, seed=seed,
        conversion=conversion, orders=None if orders is None else tuple(map(float, orders)),
        confidence=confidence, screening=screening, rdp_curves=distribution is not None,
        sampling=None if parsed is None else parsed.text(),
        vote_change=None if parsed is None else parsed.vote_change,
        sampling_steps=None if parsed is None else parsed.steps)
    return settings, distribution


def planned_points(files, mechanisms, grids: dict, *, settings: SweepSettings, labels=None,
                   students=None, index_col: int | None = None, classes: int | None = None,
                   columns=None) -> list:
    """Every grid point over the vote files, each file (with its labels and student)
    read and checked once here (``open_sources``, ``plan_points``)."""
    sources, shapes = open_sources(files, labels, students, index_col=index_col,
                                   classes=classes, columns=columns)
    return plan_points(sources, mechanisms, grids, settings=settings, shapes=shapes)


def grid_values(grids: dict) -> dict:
    """Each grid (values or a ``"start:stop:step"`` string) as a tuple of numbers;
    ``TypeError`` for a name that is not a grid parameter."""
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
            parsed[name] = tuple(int(v) if integer else float(v) for v in values)
    return parsed


def _mechanism_names(mechanisms) -> list[str]:
    """The mechanisms of a sweep, lower-cased, each once; ``OptionError`` for a name the
    sweep does not run (one line naming the known ones, not a ``KeyError``)."""
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
