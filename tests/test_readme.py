"""The documentation's examples run: every ```console and ```python block of README.md and
of docs/**/*.md.

A console block is a terminal session: a line ``$ command`` (continued by lines while the
previous one ends in ``\\``) is run with ``bash -c``, and the lines after it up to the next
``$ `` line are what the terminal shows: stdout and stderr merged in the order written
(Python runs unbuffered, as on a terminal). A line that is exactly ``...`` stands for any
number of lines; trailing whitespace and trailing blank lines do not count.

Each file runs in a temporary directory of its own, its blocks in the order they appear,
so a page may use a file one of its own earlier commands wrote, never one another page
wrote: every page can be read, and tested, alone (and the files run in parallel under
pytest-xdist). The directory holds a copy of the repository's ``sample_votes/``, so the
pages' relative paths work and nothing is written into the checkout, and of ``examples/``
(the aggregators users copy). ``pate-analyze``, ``pate-sweep``, ``pate-plot``,
``pate-calibrate``, ``pate-report``, ``pate-audit`` and ``python`` are shims first on PATH
that run this checkout's code with this interpreter. A file's python blocks
run after its console blocks, in the same directory, in one namespace (later blocks use
earlier names). ``sh`` blocks are not run: they show what ``make figures`` runs.

A block is skipped only by an HTML comment on the line before its fence:
``<!-- readme-test: skip (reason) -->``.

One test per file and kind; a failure lists every command whose output differs, with a
diff.
"""

from __future__ import annotations

import difflib
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests import ROOT

README = ROOT / "README.md"
DOCS = ROOT / "docs"
FILES = [README, *sorted(DOCS.rglob("*.md"))]
COMMANDS = {"pate-analyze": "analyze", "pate-sweep": "sweep", "pate-plot": "plot",
            "pate-calibrate": "calibrate", "pate-report": "report", "pate-audit": "audit"}
SKIP = re.compile(r"<!--\s*readme-test:\s*skip\s*\((?P<reason>[^)]+)\)\s*-->")
TIMEOUT = 120


def name_of(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


@dataclass
class Command:
    line: int                       # line of the `$ ` line in its file (1-based)
    text: str                       # the shell command, continuations joined by newlines
    expected: list[str] = field(default_factory=list)


@dataclass
class Block:
    kind: str                       # "console" or "python"
    line: int                       # line of the opening fence (1-based)
    body: list[str]
    skip: str | None = None         # the reason, when marked to skip
    source: str = "README.md"

    def commands(self) -> list[Command]:
        commands: list[Command] = []
        continued = False
        for offset, text in enumerate(self.body):
            if continued:
                commands[-1].text += "\n" + text
                continued = text.endswith("\\")
            elif text.startswith("$ "):
                commands.append(Command(self.line + 1 + offset, text[2:]))
                continued = text.endswith("\\")
            elif commands:
                commands[-1].expected.append(text)
            else:
                raise AssertionError(f"{self.source}:{self.line + 1 + offset}: output before "
                                     "any `$ ` command in a console block")
        return commands


def readme_blocks(text: str | None = None, path: Path = README) -> list[Block]:
    """The console and python blocks of ``path`` (or of ``text``), in order."""
    source = name_of(path)
    lines = (path.read_text(encoding="utf-8") if text is None else text).splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        fence = re.fullmatch(r"```(\w*)\s*", lines[i])
        if fence is None:
            i += 1
            continue
        end = next((j for j in range(i + 1, len(lines)) if lines[j].startswith("```")), None)
        assert end is not None, f"{source}:{i + 1}: unclosed code fence"
        before = next((lines[j] for j in range(i - 1, -1, -1) if lines[j].strip()), "")
        marker = SKIP.search(before)
        if fence.group(1) in {"console", "python"}:
            blocks.append(Block(fence.group(1), i + 1, lines[i + 1:end],
                                marker.group("reason").strip() if marker else None, source))
        i = end + 1
    return blocks


def matches(expected: list[str], actual: list[str]) -> bool:
    """Line by line, trailing whitespace ignored; a line ``...`` matches any run of lines."""
    def trim(lines: list[str]) -> list[str]:
        lines = [line.rstrip() for line in lines]
        while lines and not lines[-1]:
            lines.pop()
        return lines

    expected, actual = trim(expected), trim(actual)
    # reachable[j]: the expected lines so far can match the first j actual lines
    reachable = [True] + [False] * len(actual)
    for want in expected:
        if want == "...":
            for j in range(1, len(reachable)):
                reachable[j] = reachable[j] or reachable[j - 1]
        else:
            reachable = [False] + [reachable[j - 1] and actual[j - 1] == want
                                   for j in range(1, len(reachable))]
    return reachable[-1]


@pytest.fixture(scope="module")
def shims(tmp_path_factory) -> dict[str, str]:
    """The commands' environment: shims for the console scripts first on PATH."""
    shims = tmp_path_factory.mktemp("readme-bin")
    for script, module in COMMANDS.items():
        code = f"from pate_cli.cli.{module} import main; main()"
        shim = shims / script
        shim.write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} -c "
                        f"{shlex.quote(code)} \"$@\"\n")
        shim.chmod(0o755)
    for name in ("python", "python3"):
        # a script, not a symbolic link: a link to a virtual environment's interpreter
        # starts the base interpreter, without the environment's packages
        (shims / name).write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} \"$@\"\n")
        (shims / name).chmod(0o755)
    env = dict(os.environ)
    env["PATH"] = f"{shims}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in
                                        env.get("PYTHONPATH", "").split(os.pathsep) if p])
    env.update(PYTHONUNBUFFERED="1", COLUMNS="80", LC_ALL="C.UTF-8", TERM="dumb")
    for name in ("PATE_MAX_ELEMENTS", "CI"):
        env.pop(name, None)
    return env


def working_directory(tmp_path_factory, path: Path) -> Path:
    """A fresh directory for one file's blocks, with a copy of the shipped samples."""
    work = tmp_path_factory.mktemp("doc-" + path.stem)
    # copies, not links: a command that writes beside its input must not change the
    # checkout; the shipped samples are 2.5 MB
    shutil.copytree(ROOT / "sample_votes", work / "sample_votes")
    shutil.copytree(ROOT / "examples", work / "examples")
    return work


def test_readme_examples_are_well_formed():
    consoles = [b for b in readme_blocks() if b.kind == "console"]
    assert consoles, "README.md has no console blocks"
    for path in FILES:
        blocks = readme_blocks(path=path)
        for block in blocks:
            if block.kind == "console":
                assert block.commands(), f"{block.source}:{block.line}: a console block " \
                                         "without commands"
        text = path.read_text(encoding="utf-8")
        assert len(SKIP.findall(text)) == len([b for b in blocks if b.skip]), \
            f"{name_of(path)}: a readme-test skip marker not directly before a console or " \
            "python block"


@pytest.mark.parametrize("path", FILES, ids=name_of)
def test_doc_links_stay_in_the_repository(path):
    text = path.read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+://", target) or target.startswith("#"):
            continue
        linked = (path.parent / target.split("#")[0]).resolve()
        assert linked.is_relative_to(ROOT), f"{name_of(path)} links outside the repository: " \
                                            f"{target}"
        assert linked.exists(), f"{name_of(path)} links to a missing file: {target}"


def _with_console(path: Path) -> bool:
    return any(b.kind == "console" and not b.skip for b in readme_blocks(path=path))


def _with_python(path: Path) -> bool:
    return any(b.kind == "python" and not b.skip for b in readme_blocks(path=path))


@pytest.mark.parametrize("path", [p for p in FILES if _with_console(p) or _with_python(p)],
                         ids=name_of)
def test_doc_examples(path, shims, tmp_path_factory):
    """The file's console blocks, then its python blocks, in one directory of its own."""
    work = working_directory(tmp_path_factory, path)
    failures, ran = [], 0
    blocks = readme_blocks(path=path)
    for block in blocks:
        if block.kind != "console" or block.skip:
            continue
        for command in block.commands():
            done = subprocess.run(["bash", "-c", command.text], cwd=work, env=shims,
                                  stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, timeout=TIMEOUT)
            ran += 1
            actual = done.stdout.decode("utf-8", "replace").splitlines()
            if not matches(command.expected, actual):
                diff = "\n".join(difflib.unified_diff(command.expected, actual,
                                                      block.source, "actual", lineterm=""))
                failures.append(f"{block.source}:{command.line}: $ {command.text}\n"
                                f"(exit status {done.returncode})\n{diff}")
    assert not failures, "\n\n".join(failures)
    python = [b for b in blocks if b.kind == "python" and not b.skip]
    if not python:
        assert ran, "no console command ran"
        return
    namespace: dict[str, object] = {"__name__": "__readme__"}
    cwd = os.getcwd()
    os.chdir(work)
    try:
        for block in python:
            code = compile("\n" * block.line + "\n".join(block.body), str(ROOT / block.source),
                           "exec")
            exec(code, namespace)   # noqa: S102 - the documentation's own examples
    finally:
        os.chdir(cwd)
