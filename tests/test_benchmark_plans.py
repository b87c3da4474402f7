"""The benchmark script plans its sweep rows with pate-sweep's own planner
(``benchmarks/run_benchmarks.py``): a change of the planner's inputs must reach the script
(``make bench`` stopped on a ``shapes`` entry of the old form). No timing is asserted."""

from __future__ import annotations

import importlib.util
import sys

from tests import ROOT


def _benchmarks():
    spec = importlib.util.spec_from_file_location(
        "run_benchmarks", ROOT / "benchmarks" / "run_benchmarks.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # (its dataclasses look their module up)
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
    return module


def test_the_benchmark_sweep_is_planned_as_pate_sweep_plans_it(tmp_path):
    bench = _benchmarks()
    glyph = bench.datasets(quick=True)["glyph"]
    path = str(tmp_path / glyph.filename)
    bench.synthesize(path, glyph)
    points = bench._sweep_points(path, glyph)
    size = 1
    for values in bench.SWEEP_GRID.values():
        size *= len(tuple(values))
    assert len(points) == size and points[0].queries == glyph.queries
