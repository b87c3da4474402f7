"""Grids of analyses on a concurrent.futures Executor (local processes or a Dask client)."""

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:  # the lazy names below, for type checkers and readers
    from .api import run_sweep

__all__ = ["run_sweep"]

__getattr__, __dir__ = lazy_exports(__name__, {
    "run_sweep": ".api",
})
