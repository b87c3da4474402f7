"""``run_sweep``: the notebook form of ``pate-sweep`` (a DataFrame, one row per point)."""

from __future__ import annotations

import os

import numpy as np

from ..accounting.tuning import tuning_distribution
from ..errors import OptionError
from ..orders import parse_grid
from .columns import GRID_PARAMETERS, MECHANISM_PARAMETERS
from .points import SweepSettings, check_sweep_options, open_sources, plan_points, run_points
from .table import sweep_frame
from .tuning import TUNING_COLUMNS, add_tuning_columns


def run_sweep(files, mechanisms=("confident",), *, labels=None, students=None, repeats: int = 1,
          seed: int = 0, accounting: str = "replay", delta: float = 1e-5,
          budget: float | None = None, conversion: str = "classic", orders=None,
          confidence: float = 0.9, executor=None, tuning=None, screening: str = "exact",
          **grids):
    """The notebook form of ``pate-sweep``: a DataFrame with one row per grid point.

    ``files`` is a path or a list of paths; ``labels`` / ``students`` a path or one per
    file. ``grids`` are ``sigma``, ``threshold``, ``sigma_threshold``, ``laplace_scale``,
    ``svt_scale``, ``svt_cutoff``, ``eta``, ``queries``, each a sequence of values or a grid string
    such as ``"20:200:10"``. ``executor`` is any ``concurrent.futures`` executor (a
    ``ProcessPoolExecutor``, a Dask client's ``get_executor()``); None runs here.
    ``tuning`` (``"poisson:20"``...; MATH.md s.12) adds the columns ``tuning``,
    ``epsilon_tuned`` and ``epsilon_all_points`` (``sweep.tuning``). ``screening``:
    ``exact`` (MATH.md s.17) or ``gaussian`` (the papers') threshold-step curve.

        pate_cli.run_sweep("votes.npy", ["gnmax"], sigma="20:100:20", labels="y.npy", repeats=3)
    """
    files = [files] if isinstance(files, (str, os.PathLike)) else list(files)
    mechanisms = _mechanism_names(mechanisms)
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
    check_sweep_options(mechanisms, accounting=accounting, budget=budget, tuning=tuning,
                        sampling=None, vote_change=None, student_given=students is not None)
    distribution = None if tuning is None else tuning_distribution(tuning)
    settings = SweepSettings(accounting=accounting, delta=delta, budget=budget,
                             repeats=repeats, seed=seed, conversion=conversion,
                             orders=None if orders is None else tuple(map(float, orders)),
                             confidence=confidence, screening=screening,
                             rdp_curves=distribution is not None)
    sources, shapes = open_sources(files, labels, students)
    points = plan_points(sources, mechanisms, parsed, settings=settings, shapes=shapes)
    rows = [None] * len(points)
    for position, row in run_points(points, executor=executor):
        rows[position] = row
    if distribution is None:
        return sweep_frame(rows)
    rows = add_tuning_columns(rows, distribution, orders=settings.orders, delta=delta,
                              conversion=conversion)
    return sweep_frame(rows, TUNING_COLUMNS)


def _mechanism_names(mechanisms) -> list[str]:
    """The mechanisms of a sweep, lower-cased; ``OptionError`` for a name the sweep does
    not run (one line naming the known ones, not a ``KeyError``)."""
    names = [mechanisms] if isinstance(mechanisms, str) else list(mechanisms)
    if not names:
        raise OptionError("give at least one mechanism")
    known = ", ".join(MECHANISM_PARAMETERS)
    checked = []
    for name in names:
        if not isinstance(name, str) or name.lower() not in MECHANISM_PARAMETERS:
            raise OptionError(f"unknown mechanism {name!r} for a sweep (use {known})")
        checked.append(name.lower())
    return checked
