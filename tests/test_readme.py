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

The five commands' shims do not each start an interpreter that imports numpy, scipy,
pandas and matplotlib again (about 0.5 s of CPU each, most of these tests' time): a
server started once per test process, with those libraries and the commands imported
and nothing run, forks a child per command. The shim hands it the command's arguments,
environment, working directory, umask and standard streams over a Unix socket; the child
runs the command as ``python -c`` would (``sys.argv[0]`` is ``-c``, and it exits through
the interpreter's own exit), and its exit status is the shim's. ``PATE_TEST_DOCS_FORK=0``
runs each command in a fresh interpreter instead.

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
import tempfile
from collections.abc import Iterator
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


# The libraries the commands import, imported once by the command server (a name missing
# here is imported by the command itself, as in a fresh interpreter).
PRELOADED = ("numpy", "scipy.special", "scipy.stats", "scipy.optimize", "scipy.integrate",
             "pandas", "pyarrow", "pyarrow.csv", "matplotlib.figure",
             "matplotlib.backends.backend_agg", "matplotlib.backends.backend_svg",
             "matplotlib.backends.backend_pdf", "jinja2", "dp_accounting",
             *(f"pate_cli.cli.{module}" for module in COMMANDS.values()))

# The command server (``python -c SERVER PATH``): imports PRELOADED, says "ready", then
# forks a child per connection and sends each connection its child's exit status. The
# child leaves the loop, takes the shim's streams, directory, umask and environment, and
# runs the command at the top level of ``-c``, as the shim's own interpreter would.
SERVER = """
import contextlib, gc, importlib, json, os, socket, struct, sys
for name in PRELOADED:
    with contextlib.suppress(ImportError):
        importlib.import_module(name)
path = sys.argv.pop(1)
listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
listener.bind(path)
listener.listen(64)
listener.settimeout(0.01)
gc.freeze()  # the children's collections leave the imported objects alone (no copies)
print("ready", flush=True)


def serve():
    children, parent = {}, os.getppid()
    while os.getppid() == parent:  # ends with the test process
        try:
            connection, _ = listener.accept()
        except TimeoutError:
            connection = None
        if connection is not None:
            connection.settimeout(None)
            pid = os.fork()
            if pid == 0:
                listener.close()
                for other in children.values():
                    other.close()
                return connection
            children[pid] = connection
        while children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            with contextlib.suppress(OSError):
                children[pid].sendall(struct.pack("!i", os.waitstatus_to_exitcode(status)))
            children.pop(pid).close()
    sys.exit(0)


def take(connection):  # the request's streams, directory, umask, environment, arguments
    head, fds, _, _ = socket.recv_fds(connection, 4, 3)
    while len(head) < 4:
        head += connection.recv(4 - len(head))
    (size,) = struct.unpack("!I", head)
    payload = b""
    while len(payload) < size:
        payload += connection.recv(size - len(payload))
    connection.close()
    request = json.loads(payload)
    for target, fd in zip(request["fds"], fds):
        os.dup2(fd, target)
        os.close(fd)
    for target in {0, 1, 2} - set(request["fds"]):  # closed: None, as at start-up
        os.close(target)
        name = ("stdin", "stdout", "stderr")[target]
        setattr(sys, name, None)
        setattr(sys, f"__{name}__", None)
    os.chdir(request["cwd"])
    os.umask(request["umask"])
    os.environ.clear()
    os.environ.update(request["env"])
    sys.argv = ["-c", *request["argv"]]
    return importlib.import_module("pate_cli.cli." + request["module"]).main


main = take(serve())
del contextlib, gc, importlib, json, listener, name, os, path, serve, socket, struct, sys, take
main()
"""

# Environment variables read when an interpreter starts or a library is imported (Python's
# own, the locale, the numerics' CPU features and threads): a command whose values differ
# from the server's runs in a fresh interpreter.
STARTUP = ("PYTHON", "LC_", "LANG", "NPY_", "OPENBLAS", "OMP_", "MKL_")

# The shim's client (``python -S -c CLIENT PATH MODULE ARGS``): sends the request and the
# standard streams it has, and exits with the child's status (128 + N for signal N).
# PREFIXES is replaced by STARTUP, STARTUP by the server's values of those variables and
# FRESH by the command's code for a fresh interpreter.
CLIENT = """
import json, os, socket, struct, sys
path, module, *argv = sys.argv[1:]
if {name: value for name, value in os.environ.items()
        if name.startswith(tuple(PREFIXES))} != STARTUP:
    os.execv(sys.executable, [sys.executable, "-c", FRESH, *argv])
fds = []
for fd in (0, 1, 2):
    try:
        os.fstat(fd)
    except OSError:
        continue
    fds.append(fd)
umask = os.umask(0)
os.umask(umask)
payload = json.dumps({"module": module, "argv": argv, "cwd": os.getcwd(), "umask": umask,
                      "env": dict(os.environ), "fds": fds}).encode()
server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
server.connect(path)
socket.send_fds(server, [struct.pack("!I", len(payload))], fds)
server.sendall(payload)
status = b""
while len(status) < 4:
    piece = server.recv(4 - len(status))
    if not piece:
        sys.exit("the documentation tests' command server closed the connection")
    status += piece
(code,) = struct.unpack("!i", status)
os._exit(code if code >= 0 else 128 - code)
"""


def command_server(env: dict[str, str], folder: Path) -> subprocess.Popen:
    """The command server, started with ``env``, listening in ``folder``; once ready."""
    code = SERVER.replace("PRELOADED", repr(PRELOADED))
    log = folder / "server.log"
    with open(log, "wb") as errors:
        server = subprocess.Popen([sys.executable, "-c", code, str(folder / "socket")],
                                  env=env, cwd=folder, stdin=subprocess.DEVNULL,
                                  stdout=subprocess.PIPE, stderr=errors)
    if server.stdout.readline() != b"ready\n":
        server.kill()
        server.wait()
        pytest.fail(f"the command server did not start: {log.read_text()}")
    return server


@pytest.fixture(scope="module")
def shims(tmp_path_factory) -> Iterator[dict[str, str]]:
    """The commands' environment: shims for the console scripts first on PATH."""
    shims = tmp_path_factory.mktemp("readme-bin")
    env = dict(os.environ)
    env["PATH"] = f"{shims}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in
                                        env.get("PYTHONPATH", "").split(os.pathsep) if p])
    env.update(PYTHONUNBUFFERED="1", COLUMNS="80", LC_ALL="C.UTF-8", TERM="dumb")
    for name in ("PATE_MAX_ELEMENTS", "CI"):
        env.pop(name, None)
    # a short path: a Unix socket's name is limited to about 100 bytes
    folder = Path(tempfile.mkdtemp(prefix="pate-docs-"))
    fork = os.environ.get("PATE_TEST_DOCS_FORK", "1") != "0"
    startup = {name: value for name, value in env.items() if name.startswith(STARTUP)}
    for script, module in COMMANDS.items():
        fresh = f"from pate_cli.cli.{module} import main; main()"
        if fork:
            client = (CLIENT.replace("PREFIXES", repr(STARTUP)).replace("FRESH", repr(fresh))
                      .replace("STARTUP", repr(startup)))
            arguments = (f"-S -c {shlex.quote(client)} {shlex.quote(str(folder / 'socket'))} "
                         f"{module}")
        else:
            arguments = f"-c {shlex.quote(fresh)}"
        shim = shims / script
        shim.write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} {arguments} \"$@\"\n")
        shim.chmod(0o755)
    for name in ("python", "python3"):
        # a script, not a symbolic link: a link to a virtual environment's interpreter
        # starts the base interpreter, without the environment's packages
        (shims / name).write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} \"$@\"\n")
        (shims / name).chmod(0o755)
    server = None
    try:
        if fork:
            server = command_server(env, folder)
        yield env
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=60)
            server.stdout.close()
        shutil.rmtree(folder, ignore_errors=True)


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
