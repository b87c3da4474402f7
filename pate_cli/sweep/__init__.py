"""Grids of analyses on a concurrent.futures Executor (local processes or a Dask client)."""

from .api import run_sweep

__all__ = ["run_sweep"]
