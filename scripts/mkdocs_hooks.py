"""MkDocs hook: serve MathJax from the built site, so formulas render offline.

The script comes from the ``django-static-mathjax`` package (MathJax 3, Apache-2.0), a
dependency of the ``docs`` extra; ``tex-svg.js`` carries its fonts as SVG paths, so it
needs no other file.
"""

from __future__ import annotations

import re
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


# The API reference renders docstrings: Sphinx roles (":class:`X`") as the name alone, and the
# short citations math:KEY and cli:KEY (docs/contributing.md) as links to their pages.
ROLE = re.compile(r":(?:class|func|meth|data|attr|mod|exc|obj):<code>(~?)([\w.]+)</code>")
CITATION = re.compile(r"(?<![\w:/#.-])(math|cli):([a-z][a-z0-9-]*[a-z0-9])")
HEADING_ID = re.compile(r"\{ *#([a-z][a-z0-9-]*) *\}")
FOLDERS = {"math": ("explanation",), "cli": ("reference", "commands")}


def citation_targets(docs: Path) -> dict[str, str]:
    """``math:KEY`` and ``cli:KEY`` -> the page (and heading) they name, as site paths."""
    targets = {}
    for kind, folders in FOLDERS.items():
        for folder in folders:
            for page in sorted((docs / folder).glob("*.md")):
                targets[f"{kind}:{page.stem}"] = f"{folder}/{page.stem}/"
                for anchor in HEADING_ID.findall(page.read_text(encoding="utf-8")):
                    targets.setdefault(f"{kind}:{anchor}", f"{folder}/{page.stem}/#{anchor}")
    return targets


def rendered_docstrings(html: str, targets: dict[str, str], depth: int) -> str:
    """``html`` with roles as plain names and citations as links (``depth``: the page's
    folders below the site's root)."""
    html = ROLE.sub(lambda m: f"<code>{m[2].rsplit('.', 1)[-1] if m[1] else m[2]}</code>", html)
    up = "../" * depth

    def link(match: re.Match) -> str:
        target = targets.get(match[0])
        return match[0] if target is None else f'<a href="{up}{target}">{match[0]}</a>'

    return CITATION.sub(link, html)


def on_page_content(html, page, config, files):
    if "doc-contents" not in html:  # only pages mkdocstrings rendered docstrings into
        return html
    return rendered_docstrings(html, citation_targets(Path(config["docs_dir"])),
                               page.url.rstrip("/").count("/") + 1)
