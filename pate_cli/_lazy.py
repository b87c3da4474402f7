"""Package attributes imported on first use (PEP 562): nothing (numpy, pandas, matplotlib)
is imported until a name is used, so ``import pate_cli`` and ``--help`` stay fast."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping


def lazy_exports(package: str, where: Mapping[str, str]
                 ) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``: ``where[name]`` is the module (relative,
    e.g. ``".api"``) defining ``name``, imported once, then kept like an eager import."""
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
