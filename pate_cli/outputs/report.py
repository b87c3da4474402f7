"""``pate-report``'s privacy statement: HTML (figures inline as SVG) or Markdown (figures in
``<stem>_files/``), from the Jinja2 templates in ``outputs/templates`` (autoescaped: a group
named ``<script>`` shows as text); returned as bytes, written as one set.
"""

from __future__ import annotations

import os
from urllib.parse import quote

from ..errors import OptionError
from .figure_style import figure_bytes
from .report_content import report_content
from .report_figures import FIGURE_TITLES, publication_note, report_figures, risk_plot, svg_markup

REPORT_FORMATS = {".html": "html", ".htm": "html", ".md": "markdown", ".markdown": "markdown"}
TEMPLATES = {"html": "report.html.j2", "markdown": "report.md.j2"}


def environment(fmt: str = "html"):
    """The Jinja2 environment over the package's templates (autoescape on). For Markdown,
    :func:`_markdown_text` escapes values (``&``, ``<``, ``>`` only) and marks them safe, so
    autoescape does not escape them twice."""
    try:
        import jinja2
    except ImportError:
        raise ValueError("writing a report needs jinja2 (pip install 'pate_cli[report]')") \
            from None
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(os.path.join(os.path.dirname(__file__), "templates")),
        autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True,
        lstrip_blocks=True, keep_trailing_newline=True,
        finalize=_markdown_text if fmt == "markdown" else None)
    env.filters["cell"] = _markdown_cell
    env.filters["code"] = _code_block
    return env


def _markdown_text(value):
    """A value in Markdown: ``&``, ``<`` and ``>`` as entities (text, never markup)."""
    from markupsafe import Markup

    if isinstance(value, Markup):
        return value
    text = str(value).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return Markup(text)  # noqa: S704 - escaped on the line above


def _code_block(value):
    """Text in a Markdown code fence: literal, so not entity-escaped; an inner fence would
    close the block early."""
    from markupsafe import Markup

    return Markup(str(value).replace("`" * 3, "'" * 3))  # noqa: S704 - literal in a fence


def _markdown_cell(value) -> str:
    """A Markdown table cell: pipes and line breaks would end the cell or the row."""
    return str(value).replace("|", "\\|").replace("\n", " ")


def report_format(path: str) -> str:
    """``html`` or ``markdown`` from the output's extension (a ``ValueError`` otherwise)."""
    extension = os.path.splitext(str(path))[1].lower()
    if extension not in REPORT_FORMATS:
        raise ValueError(f"{path}: the extension picks the report format: use .html or .md")
    return REPORT_FORMATS[extension]


def files_folder(path: str) -> str:
    """``report.md`` -> ``report_files`` (where a Markdown report's figures go)."""
    return os.path.splitext(str(path))[0] + "_files"


# --svt-cutoff auto: the cut-offs tried replay one noise draw, so the epsilon (that of a
# cut-off fixed in advance) does not cover the choice (math:svt).
SEARCHED_CUTOFF = ("a report publishes a guarantee, and the automatic choice on these votes "
                   "is not covered by it; give the cut-off explicitly")


def render_report(summary: dict, frame=None, *, fmt: str = "html", votes=None,
                  command: str | None = None, dataset_size: int | None = None,
                  output: str = "report.md", given: dict | None = None
                  ) -> tuple[str, dict[str, bytes]]:
    """The statement as text, and the figure files a Markdown report links to.

    ``frame``: the per-query table (history and group figures); ``votes``: the analysed rows
    in order (the selection figure). Markdown figures are SVG files in ``files_folder(output)``,
    linked relatively. ``given``: the run's options as pate-analyze names them (files the
    summary does not record)."""
    if fmt not in TEMPLATES:
        raise ValueError(f"report format must be html or markdown, got {fmt!r}")
    if (summary.get("svt") or {}).get("cutoff_from_search"):  # result.report() too
        raise OptionError(f"svt_cutoff='auto' (--svt-cutoff auto): {SEARCHED_CUTOFF}")
    files: dict[str, bytes] = {}
    folder = files_folder(output)
    figures = [{**_embedded(key, figure, fmt, folder, files),
                "note": publication_note(key, summary)}
               for key, figure in report_figures(summary, frame, votes=votes)]
    risk = risk_plot(summary)  # the attack risk section's figure
    content = report_content(summary, command=command, dataset_size=dataset_size,
                             figures=figures, given=given,
                             risk_figure=None if risk is None else
                             _embedded("risk", risk, fmt, folder, files))
    text = environment(fmt).get_template(TEMPLATES[fmt]).render(**content, summary=summary)
    return text, files


def _embedded(key: str, figure, fmt: str, folder: str, files: dict) -> dict:
    """A figure as the templates embed it: inline ``svg`` (HTML), or a ``file`` in ``folder``
    linked relative to the report (Markdown; its bytes added to ``files``)."""
    entry = {"id": key, "title": FIGURE_TITLES[key]}
    if fmt == "html":
        from markupsafe import Markup

        entry["svg"] = Markup(svg_markup(figure, f"figure-{key}"))  # noqa: S704 - matplotlib escapes text
    else:
        files[os.path.join(folder, f"{key}.svg")] = figure_bytes(figure, "svg")
    # percent-encoded (non-UTF-8 bytes too: %FF): spaces, parentheses or non-ASCII letters in
    # the report's name must not end the link's destination
    entry["file"] = quote(os.fsencode(f"{os.path.basename(folder)}/{key}.svg"), safe="/")
    return entry
