"""README.md's examples run: every ```console block, and every ```python block.

A console block is a terminal session: a line ``$ command`` (continued by lines while the
previous one ends in ``\\``) is run with ``bash -c``, and the lines after it up to the next
``$ `` line are what the terminal shows: stdout and stderr merged in the order written
(Python runs unbuffered, as on a terminal). A line that is exactly ``...`` stands for any
number of lines; trailing whitespace and trailing blank lines do not count.

The commands run in one temporary directory shared by every block, in README order, so a
block may use a file an earlier command wrote; it holds a copy of the repository's
``sample_votes/`` and an empty ``docs/``, so the README's relative paths work and nothing is
written into the checkout. ``pate-analyze``, ``pate-sweep``, ``pate-plot`` and ``python`` are
shims first on PATH that run this checkout's code with this interpreter. Python blocks run
afterwards, in the same directory, in one namespace (later blocks use earlier names).

A block is skipped only by an HTML comment on the line before its fence:
``<!-- readme-test: skip (reason) -->``.

Everything runs in one test per kind, so the shared directory is used in order even under
pytest-xdist; a failure lists every command whose output differs, with a diff.
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
COMMANDS = {"pate-analyze": "analyze", "pate-sweep": "sweep", "pate-plot": "plot",
            "pate-calibrate": "calibrate", "pate-report": "report"}
SKIP = re.compile(r"<!--\s*readme-test:\s*skip\s*\((?P<reason>[^)]+)\)\s*-->")
TIMEOUT = 120


@dataclass
class Command:
    line: int                       # README line of the `$ ` line (1-based)
    text: str                       # the shell command, continuations joined by newlines
    expected: list[str] = field(default_factory=list)


@dataclass
class Block:
    kind: str                       # "console" or "python"
    line: int                       # README line of the opening fence (1-based)
    body: list[str]
    skip: str | None = None         # the reason, when marked to skip

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
                raise AssertionError(f"README.md:{self.line + 1 + offset}: output before "
                                     "any `$ ` command in a console block")
        return commands


def readme_blocks(text: str | None = None) -> list[Block]:
    lines = (README.read_text(encoding="utf-8") if text is None else text).splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        fence = re.fullmatch(r"```(\w*)\s*", lines[i])
        if fence is None:
            i += 1
            continue
        end = next((j for j in range(i + 1, len(lines)) if lines[j].startswith("```")), None)
        assert end is not None, f"README.md:{i + 1}: unclosed code fence"
        before = next((lines[j] for j in range(i - 1, -1, -1) if lines[j].strip()), "")
        marker = SKIP.search(before)
        if fence.group(1) in {"console", "python"}:
            blocks.append(Block(fence.group(1), i + 1, lines[i + 1:end],
                                marker.group("reason").strip() if marker else None))
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
def workdir(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    """The shared working directory (links to the shipped files) and the commands' env."""
    work = tmp_path_factory.mktemp("readme")
    # copies, not links: a command that writes beside its input (or to docs/) must not
    # change the checkout; the shipped samples are 2.5 MB
    shutil.copytree(ROOT / "sample_votes", work / "sample_votes")
    (work / "docs").mkdir()
    shims = tmp_path_factory.mktemp("readme-bin")
    for script, module in COMMANDS.items():
        code = f"from pate_cli.cli.{module} import main; main()"
        shim = shims / script
        shim.write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} -c "
                        f"{shlex.quote(code)} \"$@\"\n")
        shim.chmod(0o755)
    for name in ("python", "python3"):
        (shims / name).symlink_to(sys.executable)
    env = dict(os.environ)
    env["PATH"] = f"{shims}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in
                                        env.get("PYTHONPATH", "").split(os.pathsep) if p])
    env.update(PYTHONUNBUFFERED="1", COLUMNS="80", LC_ALL="C.UTF-8", TERM="dumb")
    for name in ("PATE_MAX_ELEMENTS", "CI"):
        env.pop(name, None)
    return work, env


def test_readme_examples_are_well_formed():
    blocks = readme_blocks()
    consoles = [b for b in blocks if b.kind == "console"]
    assert consoles, "README.md has no console blocks"
    for block in consoles:
        assert block.commands(), f"README.md:{block.line}: a console block without commands"
    text = README.read_text(encoding="utf-8")
    assert len(SKIP.findall(text)) == len([b for b in blocks if b.skip]), \
        "a readme-test skip marker not directly before a console or python block"


def test_readme_links_stay_in_the_repository():
    text = README.read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+://", target) or target.startswith("#"):
            continue
        path = (ROOT / target.split("#")[0]).resolve()
        assert path.is_relative_to(ROOT), f"README.md links outside the repository: {target}"
        assert path.exists(), f"README.md links to a missing file: {target}"


def test_readme_console_blocks(workdir):
    workdir, env = workdir
    failures, ran = [], 0
    for block in readme_blocks():
        if block.kind != "console" or block.skip:
            continue
        for command in block.commands():
            done = subprocess.run(["bash", "-c", command.text], cwd=workdir, env=env,
                                  stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, timeout=TIMEOUT)
            ran += 1
            actual = done.stdout.decode("utf-8", "replace").splitlines()
            if not matches(command.expected, actual):
                diff = "\n".join(difflib.unified_diff(command.expected, actual, "README.md",
                                                      "actual", lineterm=""))
                failures.append(f"README.md:{command.line}: $ {command.text}\n"
                                f"(exit status {done.returncode})\n{diff}")
    assert ran, "no console command ran"
    assert not failures, "\n\n".join(failures)


def test_readme_python_blocks(workdir):
    workdir, _ = workdir
    blocks = [b for b in readme_blocks() if b.kind == "python" and not b.skip]
    if not blocks:
        pytest.skip("README.md has no python blocks")
    namespace: dict[str, object] = {"__name__": "__readme__"}
    cwd = os.getcwd()
    os.chdir(workdir)
    try:
        for block in blocks:
            code = compile("\n" * block.line + "\n".join(block.body), str(README), "exec")
            exec(code, namespace)   # noqa: S102 - the README's own examples
    finally:
        os.chdir(cwd)
