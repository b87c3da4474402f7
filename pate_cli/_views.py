"""Where a result's notebook views come from: the outputs layer, which the analysis layer may
not import (docs/contributing.md#architecture), imported at the first view."""

from __future__ import annotations

import importlib

PROVIDERS: list[str] = []


def provide(module: str) -> None:
    """Import ``module`` (absolute name) when a view is first needed; it registers views."""
    if module not in PROVIDERS:
        PROVIDERS.append(module)


def load_providers() -> None:
    """Import every named provider (each import registers its views once)."""
    for module in PROVIDERS:
        importlib.import_module(module)
