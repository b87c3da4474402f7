"""Package attributes imported on first use (PEP 562), so ``import pate_cli`` stays fast.

A package's ``__init__`` lists where each export lives; nothing (numpy, pandas,
matplotlib...) is imported until a name is used, so ``pate-analyze --help`` stays fast.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping


def lazy_exports(package: str, where: Mapping[str, str]
                 ) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``: ``where[name]`` is the module (relative
    to ``package``, e.g. ``".api"``) that defines ``name``.

    A name is imported once, then kept in the package's namespace like an eager import.
    """
    namespace = importlib.import_module(package).__dict__

    def __getattr__(name: str) -> object:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *where})

    return __getattr__, __dir__
