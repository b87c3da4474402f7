"""MkDocs hook: serve MathJax from the built site, so formulas render offline.

The script comes from the ``django-static-mathjax`` package (MathJax 3, Apache-2.0), a
dependency of the ``docs`` extra; ``tex-svg.js`` carries its fonts as SVG paths, so it
needs no other file.
"""

from __future__ import annotations

import shutil
from importlib import resources
from pathlib import Path

SCRIPT = "javascripts/mathjax/tex-svg.js"


def on_post_build(config, **kwargs) -> None:
    source = resources.files("mathjax") / "static" / "mathjax" / "es5" / "tex-svg.js"
    target = Path(config["site_dir"]) / SCRIPT
    target.parent.mkdir(parents=True, exist_ok=True)
    with resources.as_file(source) as path:
        shutil.copyfile(path, target)
