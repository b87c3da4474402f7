"""Every reference to documentation in the shipped files points to a page the project ships.

The code, tests and docs cite the page that explains a formula or a format by its path
(``docs/tutorials/svt-pate.md``) or in the short form of docs/contributing.md: ``math:KEY``
(a page of docs/explanation/ by its file name, or a heading's id there) and ``cli:KEY``
(docs/reference/ and docs/commands/). This fails when a tracked file

- names one of the team's internal specifications, which the project does not ship (the
  mathematics, the command-line contract and the layers, by their file names), or cites a numbered
  section of them (``s.N``);
- cites a ``docs/...md`` page that does not exist, or an anchor that is not one of that
  page's headings, or a ``math:``/``cli:`` key that names no page or heading (or several).
"""

from __future__ import annotations

import re
import subprocess
import unicodedata
from functools import cache
from pathlib import Path

import pytest

from tests import ROOT

SPECIFICATIONS = ("MATH" + ".md", "CLI" + ".md", "LAYOUT" + ".md")
SECTION = re.compile(r"(?<![\w./#-])s\.\d+(?!\.?\d)")
PAGE = re.compile(r"(?<![\w/.-])(docs/[\w./-]+?\.md)(#[\w-]+)?")
SHORT = re.compile(r"(?<![\w/.-])(math|cli):([a-z0-9][a-z0-9-]*)")
SHORT_PLACES = {"math": ["docs/explanation"], "cli": ["docs/reference", "docs/commands"]}
THIS = Path(__file__).resolve()


def tracked_text_files() -> list[Path]:
    try:
        names = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                               check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    files = []
    for name in names:
        path = ROOT / name
        if path.resolve() == THIS or not path.is_file():
            continue
        try:
            path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        files.append(path)
    return files


def slug(heading: str) -> str:
    """The anchor MkDocs (Python-Markdown's toc) gives a heading."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = text.replace("`", "").replace("*", "")
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


@cache
def anchors(page: Path) -> frozenset[str]:
    """The ids of a page's headings: ``{ #id }`` where given, else the heading's slug."""
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.DOTALL)
    ids = set()
    for heading in re.findall(r"^#{1,6} (.+?)\s*$", text, re.MULTILINE):
        given = re.search(r"\{\s*#([\w-]+)\s*\}\s*$", heading)
        ids.add(given.group(1) if given else slug(heading))
    return frozenset(ids)


@cache
def given_ids(page: Path) -> frozenset[str]:
    """The ids a page's headings are given explicitly (``{ #id }``)."""
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.DOTALL)
    return frozenset(re.findall(r"^#{1,6} .+?\{\s*#([\w-]+)\s*\}\s*$", text, re.MULTILINE))


def resolve(kind: str, key: str) -> list[str]:
    """The pages (``path#id``) a short form ``kind:key`` names: a page by its file name, or
    a heading by the id it is given."""
    found = []
    for place in SHORT_PLACES[kind]:
        for page in sorted((ROOT / place).glob("*.md")):
            if page.stem == key:
                found.append(str(page.relative_to(ROOT)))
            elif key in given_ids(page):
                found.append(f"{page.relative_to(ROOT)}#{key}")
    return found


def test_no_reference_to_an_unshipped_specification():
    bad = []
    for path in tracked_text_files():
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            where = f"{path.relative_to(ROOT)}:{number}"
            bad += [f"{where}: {name}" for name in SPECIFICATIONS if name in line]
            bad += [f"{where}: section reference {m.group(0)!r}" for m in SECTION.finditer(line)]
    assert not bad, "references to pages the project does not ship (cite docs/...md):\n" \
        + "\n".join(bad)


def test_cited_docs_pages_and_anchors_exist():
    bad = []
    for path in tracked_text_files():
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for page, anchor in PAGE.findall(line):
                target = ROOT / page
                where = f"{path.relative_to(ROOT)}:{number}: {page}{anchor}"
                if not target.is_file():
                    bad.append(f"{where}: no such page")
                elif anchor and anchor[1:] not in anchors(target):
                    bad.append(f"{where}: no such heading")
            for kind, key in SHORT.findall(line):
                pages = resolve(kind, key)
                if len(pages) != 1:
                    bad.append(f"{path.relative_to(ROOT)}:{number}: {kind}:{key} names "
                               f"{len(pages)} pages or headings {pages}")
    assert not bad, "\n".join(bad)


def test_headings_give_the_anchors_the_code_cites():
    assert "integral" in anchors(ROOT / "docs/explanation/data-dependent.md")
    assert resolve("math", "gnmax") == ["docs/explanation/data-dependent.md#gnmax"]
    assert resolve("math", "sampling") == ["docs/explanation/sampling.md"]
    assert resolve("cli", "decisions") == ["docs/reference/formats.md#decisions"]
    assert slug("Choosing parameters costs privacy: `--tuning`") == \
        "choosing-parameters-costs-privacy-tuning"
