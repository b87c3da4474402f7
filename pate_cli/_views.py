"""Where a result's notebook views come from, named by the package facade.

``analysis.result.AnalysisResult`` shows itself in a notebook (``_repr_html_``, ``.plot``,
``.report()``) through views the outputs layer draws. The analysis layer may not import the
outputs layer (imports point down, docs/contributing.md#architecture), so the package's
``__init__`` names the module that registers the views here, and the result imports it the
first time a view is asked for. ``import pate_cli`` therefore stays free of numpy,
matplotlib and jinja2.
"""

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
