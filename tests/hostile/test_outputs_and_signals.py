"""Outputs written as a set, only regular files replaced, modes kept; unwritable outputs;
SIGINT and SIGTERM at the command boundary (cli:exit-codes, docs/reference/exit-codes.md).

Signals are sent to real processes (``python -c`` running a command's entry point, with
one function slowed down so the signal lands at a known place); write failures are
simulated in process (a monkeypatched ``os.write``/``tempfile.mkstemp``) or real (a copy
of ``/dev/full`` made with ``mknod``, a file-size limit).
"""

from __future__ import annotations

import errno
import os
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import pate_cli.analysis.api as api_module
import pate_cli.cli.sweep_run as sweep_module
import pate_cli.outputs.figures as figures_module
from pate_cli.cli.errors import Terminated
from pate_cli.outputs.writing import write_atomically, write_outputs
from tests import ROOT
from tests.synthetic import synthetic_votes

LINUX = sys.platform.startswith("linux")


@pytest.fixture
def votes(tmp_path) -> Path:
    path = tmp_path / "votes.csv"
    np.savetxt(path, synthetic_votes(queries=200)[0], fmt="%d", delimiter=",")
    return path


def one_line(err: str) -> str:
    """The single line of a failed run's stderr (no traceback)."""
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1, err
    return lines[0]


def temporaries(folder: Path) -> list[str]:
    return sorted(name for name in os.listdir(folder) if name.startswith(".pate-"))


def old_files(tmp_path, *names, mode=None) -> list[Path]:
    """Existing outputs holding b"old" (and ``mode``), to check they are left alone."""
    paths = []
    for name in names:
        path = tmp_path / name
        path.write_bytes(b"old")
        if mode is not None:
            path.chmod(mode)
        paths.append(path)
    return paths


def analysis_must_not_run(monkeypatch) -> None:
    def analyze(*args, **kwargs):
        raise AssertionError("the analysis ran")

    monkeypatch.setattr(api_module, "analyze", analyze)


def failing_writes(monkeypatch, error: OSError, *, after: int = 0) -> None:
    """``os.write`` to a file (not a pipe) by this thread or the streamed table's writer
    thread raises ``error`` after ``after`` writes succeeded, the failing one having
    written half of its bytes first."""
    real = os.write
    calls = []

    def write(fd, data):
        kind = os.fstat(fd).st_mode
        thread = threading.current_thread()
        if (thread is not threading.main_thread()
                and not thread.name.startswith("pate-write")) or not (
                stat.S_ISREG(kind) or stat.S_ISCHR(kind)):
            return real(fd, data)
        calls.append(fd)
        if len(calls) > after:
            real(fd, bytes(data[:len(data) // 2]))
            raise error
        return real(fd, data)

    monkeypatch.setattr(os, "write", write)


def device(tmp_path, name: str, minor: int) -> Path:
    """A character device like /dev/null (minor 3) or /dev/full (7) in ``tmp_path``."""
    path = tmp_path / name
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, minor))
        os.close(os.open(path, os.O_WRONLY))
    except (OSError, AttributeError) as error:
        pytest.skip(f"cannot make and open a character device here: {error}")
    return path


# --- 1. the outputs of one command are committed as a set ---------------------------------

def test_a_failing_second_output_leaves_the_first_untouched(cli, votes, tmp_path, monkeypatch):
    out, table = old_files(tmp_path, "out.json", "q.csv")
    real = tempfile.mkstemp
    made = []

    def mkstemp(*args, **kwargs):
        made.append(1)
        if len(made) == 2:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(*args, **kwargs)

    monkeypatch.setattr(tempfile, "mkstemp", mkstemp)
    result = cli.analyze(votes, "-f", "json", "-o", out, "--per-query", table)
    assert result.code == 2
    assert one_line(result.err).endswith("cannot write: No space left on device")
    assert out.read_bytes() == b"old" and table.read_bytes() == b"old"
    assert temporaries(tmp_path) == []


def test_a_failing_write_of_any_output_leaves_every_output_untouched(cli, votes, tmp_path,
                                                                      monkeypatch):
    out, table = old_files(tmp_path, "out.json", "q.csv")
    failing_writes(monkeypatch, OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)), after=1)
    result = cli.analyze(votes, "-f", "json", "-o", out, "--per-query", table)
    assert result.code == 2
    assert one_line(result.err).startswith("Error: ")
    assert "cannot write: No space left on device" in result.err
    assert out.read_bytes() == b"old" and table.read_bytes() == b"old"
    assert temporaries(tmp_path) == []


def test_outputs_are_written_together_when_all_succeed(cli, votes, tmp_path):
    out, table = old_files(tmp_path, "out.json", "q.csv")
    result = cli.analyze(votes, "-f", "json", "-o", out, "--per-query", table)
    assert result.code == 0, result.err
    assert out.read_text().startswith("{") and table.read_text().startswith("query,")
    assert temporaries(tmp_path) == []


@pytest.mark.parametrize(("first", "second"), [
    (("-o", "x.json"), ("--per-query", "x.json")),
    (("-o", "x.json"), ("--per-query", "./x.json")),
    (("--per-query", "x.json"), ("-o", "sub/../x.json")),
    (("-o", "x.json"), ("--per-query", "link.json")),
    (("-o", "x.csv"), ("--ss-history", "x.csv")),
    (("--per-query", "x.csv"), ("--ss-history", "./x.csv")),
])
@pytest.mark.parametrize("exists", [False, True])
def test_two_outputs_to_the_same_file_are_refused_before_any_work(cli, votes, tmp_path,
                                                                   monkeypatch, first, second,
                                                                   exists):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    os.symlink("x.json", tmp_path / "link.json")  # dangling until x.json exists
    if exists:
        (tmp_path / "x.json").write_bytes(b"old")
        (tmp_path / "x.csv").write_bytes(b"old")
    analysis_must_not_run(monkeypatch)
    result = cli.analyze(votes, *first, *second, "--smooth-sensitivity")
    assert result.code == 2, result.err
    line = one_line(result.err)
    assert "are the same file" in line  # naming both, in the order they are checked
    assert f"{first[0]} {first[1]}" in line and f"{second[0]} {second[1]}" in line
    assert sorted(os.listdir(tmp_path)) == sorted(
        ["votes.csv", "sub", "link.json"] + (["x.json", "x.csv"] if exists else []))
    if exists:
        assert (tmp_path / "x.json").read_bytes() == b"old"


def test_a_missing_output_directory_is_refused_before_any_work(cli, votes, tmp_path,
                                                                monkeypatch):
    analysis_must_not_run(monkeypatch)
    result = cli.analyze(votes, "--per-query", tmp_path / "absent" / "q.csv")
    assert result.code == 2
    assert one_line(result.err).endswith(f"the directory {tmp_path / 'absent'} does not exist")


def test_write_outputs_refuses_two_spellings_of_one_file(tmp_path):
    with pytest.raises(ValueError, match="are the same file"):
        write_outputs({str(tmp_path / "a.csv"): b"1",
                       os.path.join(str(tmp_path), ".", "a.csv"): b"2"})
    assert not (tmp_path / "a.csv").exists()


# --- 2. only regular files are replaced -------------------------------------------------

@pytest.mark.skipif(not LINUX, reason="opens a FIFO for reading and writing (Linux)")
def test_a_fifo_output_is_written_not_replaced(cli, votes, tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)  # a reader, so opening never blocks
    try:
        result = cli.analyze(votes, "-f", "json", "-o", fifo)
        assert result.code == 0, result.err
        assert stat.S_ISFIFO(os.stat(fifo).st_mode)
        assert os.read(reader, 1 << 16).startswith(b'{\n  "tool"')
    finally:
        os.close(reader)
    assert temporaries(tmp_path) == []


def test_a_character_device_output_is_written_not_replaced(cli, votes, tmp_path):
    null = device(tmp_path, "null", 3)
    table = tmp_path / "q.csv"
    result = cli.analyze(votes, "-o", null, "--per-query", table)
    assert result.code == 0, result.err
    assert stat.S_ISCHR(os.stat(null).st_mode)
    assert table.read_text().startswith("query,")
    assert temporaries(tmp_path) == []


def test_several_outputs_may_go_to_one_device(cli, votes, tmp_path):
    null = device(tmp_path, "null.csv", 3)
    result = cli.analyze(votes, "-o", null, "--per-query", null)
    assert result.code == 0, result.err
    assert stat.S_ISCHR(os.stat(null).st_mode)


def test_pate_plot_writes_a_device_in_place(cli, votes, tmp_path):
    table = tmp_path / "q.csv"
    assert cli.analyze(votes, "--per-query", table).code == 0
    null = device(tmp_path, "null.png", 3)
    result = cli.plot("history", table, "-o", null)
    assert result.code == 0, result.err
    assert stat.S_ISCHR(os.stat(null).st_mode)


@pytest.mark.skipif(not os.path.exists("/dev/stdout"), reason="no /dev/stdout")
def test_dev_stdout_redirected_to_a_file_is_written_to_not_replaced(votes, tmp_path):
    log = tmp_path / "log.txt"
    log.write_text("old\n")
    inode = log.stat().st_ino
    with open(log, "a") as stdout:  # pate-analyze ... -o /dev/stdout >> log.txt
        done = subprocess.run(
            [sys.executable, "-c", "from pate_cli.cli.analyze import main; main()", votes,
             "-f", "json", "-o", "/dev/stdout"], stdout=stdout, stderr=subprocess.PIPE,
            env=dict(os.environ, PYTHONPATH=str(ROOT)), timeout=120)
    assert done.returncode == 0, done.stderr
    assert log.read_text().startswith('old\n{\n  "tool"') and log.stat().st_ino == inode
    assert temporaries(tmp_path) == []


def test_a_directory_as_destination_is_one_line_exit_2(cli, votes, tmp_path):
    (tmp_path / "out.json").mkdir()
    result = cli.analyze(votes, "-o", tmp_path / "out.json")
    assert result.code == 2
    assert "is a directory" in one_line(result.err)
    with pytest.raises(ValueError, match="out.json: cannot write: it is a directory"):
        write_atomically(str(tmp_path / "out.json"), b"data")
    assert (tmp_path / "out.json").is_dir() and temporaries(tmp_path) == []


# --- 3. a replaced file keeps its mode ----------------------------------------------------

@pytest.mark.parametrize("mode", [0o600, 0o640, 0o664])
def test_a_replaced_file_keeps_its_mode(cli, votes, tmp_path, mode):
    out, table = old_files(tmp_path, "out.json", "q.csv", mode=mode)
    result = cli.analyze(votes, "-f", "json", "-o", out, "--per-query", table)
    assert result.code == 0, result.err
    for path in (out, table):
        assert path.read_bytes() != b"old"
        assert stat.S_IMODE(path.stat().st_mode) == mode


# Every output option of every command, onto an existing file without write permission:
# (command, arguments before it, the option, the file's name).
READ_ONLY_OUTPUTS = [
    ("analyze", [], "-o", "out.json"),
    ("analyze", [], "--per-query", "q.csv"),
    ("analyze", [], "--write-decisions", "d.csv"),
    ("analyze", [], "--write-rdp", "rdp.csv"),
    ("analyze", ["--accounting", "expected", "--smooth-sensitivity"], "--ss-history", "h.csv"),
    ("sweep", ["-m", "gnmax", "--sigma", "40", "-w", "1", "--no-progress"], "--out", "s.csv"),
    ("report", [], "-o", "report.html"),
    ("calibrate", ["-m", "gnmax", "--target-epsilon", "2"], "-o", "c.txt"),
    ("plot", ["--params", "160,120"], "-o", "p.png"),
]


@pytest.mark.parametrize("mode", [0o444, 0o400, 0o000])
@pytest.mark.parametrize("command, before, option, name", READ_ONLY_OUTPUTS,
                         ids=[f"{case[0]} {case[2]}" for case in READ_ONLY_OUTPUTS])
def test_a_read_only_file_is_refused_not_replaced(cli, votes, tmp_path, command, before,
                                                  option, name, mode):
    """The rename that writes an output atomically needs only the directory's permission
    (and root writes anything): a file without write permission is refused in one line,
    exit 2, and left as it was (even when the tests run as root)."""
    (out,) = old_files(tmp_path, name, mode=mode)
    inputs = ["selection", votes] if command == "plot" else [votes]
    try:
        result = cli.run(f"pate-{command}", *inputs, *before, option, out)
        assert result.code == 2, result.err
        assert one_line(result.err) == (
            f"Error: {out}: cannot write: the file is read-only (mode {mode:04o}); it is left "
            "as it is (chmod u+w it, or give another path)")
        assert stat.S_IMODE(out.stat().st_mode) == mode and temporaries(tmp_path) == []
    finally:
        out.chmod(0o600)
    assert out.read_bytes() == b"old"


def test_write_outputs_refuses_a_read_only_file(tmp_path):
    (first, second) = old_files(tmp_path, "a.csv", "b.csv")
    second.chmod(0o444)
    with pytest.raises(ValueError, match="b.csv: cannot write: the file is read-only"):
        write_outputs({str(first): b"new", str(second): b"new"})
    assert first.read_bytes() == second.read_bytes() == b"old"


def test_a_new_file_gets_the_umask_mode(tmp_path):
    old = os.umask(0o027)
    try:
        write_atomically(str(tmp_path / "new.csv"), b"a\n")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "new.csv").stat().st_mode) == 0o640


def test_a_symbolic_link_is_followed_and_kept(cli, votes, tmp_path):
    (target,) = old_files(tmp_path, "real.json", mode=0o600)
    link = tmp_path / "link.json"
    os.symlink("real.json", link)
    result = cli.analyze(votes, "-f", "json", "-o", link)
    assert result.code == 0, result.err
    assert link.is_symlink() and target.read_text().startswith("{")
    assert stat.S_IMODE(target.stat().st_mode) == 0o600


# --- 4. no temporary left behind on an interrupted write ----------------------------------

def test_an_interrupted_write_removes_its_temporaries(cli, votes, tmp_path, monkeypatch):
    out, table = old_files(tmp_path, "out.json", "q.csv")
    failing_writes(monkeypatch, KeyboardInterrupt(), after=1)  # half of the second output
    result = cli.analyze(votes, "-f", "json", "-o", out, "--per-query", table)
    assert result.code == 130
    assert out.read_bytes() == b"old" and table.read_bytes() == b"old"
    assert temporaries(tmp_path) == []


SLOWED = """
import os, signal, sys, time
import importlib
signal.signal(signal.SIGINT, signal.default_int_handler)  # as from an interactive shell
module, name, flag, command = sys.argv[1:5]
target = importlib.import_module(module)
real = getattr(target, name)

def slow(*args, **kwargs):
    open(flag, "w").close()
    time.sleep(60)
    return real(*args, **kwargs)

setattr(target, name, slow)
importlib.import_module("pate_cli.cli." + command).main(sys.argv[5:])
"""


def signalled(tmp_path, command: str, slowed: str, number: int,
              *args) -> subprocess.CompletedProcess:
    """Run ``command`` in a process where ``slowed`` ("module:function") waits; send
    signal ``number`` once it waits; the finished process."""
    module, name = slowed.split(":")
    flag = tmp_path / "waiting.flag"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    process = subprocess.Popen(
        [sys.executable, "-c", SLOWED, module, name, str(flag), command, *map(str, args)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=tmp_path)
    try:
        deadline = time.monotonic() + 60
        while not flag.exists():
            if process.poll() is not None or time.monotonic() > deadline:
                out, err = process.communicate(timeout=5)
                pytest.fail(f"the command never reached {slowed}: {err.decode()}")
            time.sleep(0.05)
        process.send_signal(number)
        out, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    return subprocess.CompletedProcess(process.args, process.returncode, out.decode(),
                                       err.decode())


EXIT_FOR = {signal.SIGINT: 130, signal.SIGTERM: 143}  # 128 + the signal's number


@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_during_the_write_leaves_no_temporary(votes, tmp_path, number):
    out, table = old_files(tmp_path, "out.json", "q.csv")
    done = signalled(tmp_path, "analyze", "os:chmod", number,  # chmod: after the bytes
                     votes, "-f", "json", "-o", out, "--per-query", table)
    assert done.returncode == EXIT_FOR[number], done.stderr
    assert temporaries(tmp_path) == []
    assert out.read_bytes() == b"old" and table.read_bytes() == b"old"


# --- 5. SIGINT exits 130, SIGTERM 143, with one line -----------------------------------------

@pytest.mark.parametrize(("number", "line"), [(signal.SIGINT, "Interrupted."),
                                              (signal.SIGTERM, "Terminated.")])
def test_a_signal_to_pate_analyze_exits_130_or_143(votes, tmp_path, number, line):
    done = signalled(tmp_path, "analyze", "pate_cli.analysis.api:analyze", number, votes)
    assert done.returncode == EXIT_FOR[number], done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.splitlines() == [line]  # (click's blank line for a ^C is gone)
    assert done.stdout == ""


@pytest.mark.parametrize(("number", "line"), [(signal.SIGINT, "Interrupted."),
                                              (signal.SIGTERM, "Terminated.")])
def test_a_signal_to_pate_plot_exits_130_or_143(cli, votes, tmp_path, number, line):
    table = tmp_path / "q.csv"
    assert cli.analyze(votes, "--per-query", table).code == 0
    done = signalled(tmp_path, "plot", "pate_cli.outputs.figures:figure_bytes", number,
                     "history", table, "-o", tmp_path / "h.png")
    assert done.returncode == EXIT_FOR[number], done.stderr
    assert done.stderr.splitlines() == [line]
    assert not (tmp_path / "h.png").exists() and temporaries(tmp_path) == []


@pytest.mark.parametrize("number", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_to_pate_sweep_keeps_the_rows(votes, tmp_path, number):
    out = tmp_path / "rows.csv"
    done = signalled(tmp_path, "sweep", "pate_cli.sweep.run:run_points", number, votes,
                     "-m", "gnmax", "--sigma", "10,20", "-w", "1", "--no-progress", "-o", out)
    assert done.returncode == EXIT_FOR[number], done.stderr
    assert "kept 0 of 2 rows" in done.stderr
    assert not out.exists() and temporaries(tmp_path) == []
    assert (tmp_path / "rows.csv.partial").read_bytes() == b""  # for --resume


def test_ctrl_c_in_pate_analyze_exits_130(cli, votes, monkeypatch):
    def analyze(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(api_module, "analyze", analyze)
    result = cli.analyze(votes)
    assert result.code == 130
    assert result.err.strip() == "Interrupted."


def test_sigterm_in_pate_analyze_exits_143(cli, votes, monkeypatch):
    def analyze(*args, **kwargs):
        raise Terminated

    monkeypatch.setattr(api_module, "analyze", analyze)
    result = cli.analyze(votes)
    assert result.code == 143
    assert result.err.strip() == "Terminated."


def test_ctrl_c_in_pate_plot_exits_130(cli, votes, tmp_path, monkeypatch):
    table = tmp_path / "q.csv"
    assert cli.analyze(votes, "--per-query", table).code == 0

    def figure_bytes(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(figures_module, "figure_bytes", figure_bytes)
    result = cli.plot("history", table, "-o", tmp_path / "h.png")
    assert result.code == 130
    assert result.err.strip() == "Interrupted."
    assert not (tmp_path / "h.png").exists()


def test_ctrl_c_before_pate_sweep_runs_its_grid_exits_130(cli, votes, monkeypatch):
    def planned_points(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(sweep_module, "planned_points", planned_points)
    result = cli.sweep(votes, "-m", "gnmax", "--sigma", "10,20", "-w", "1")
    assert result.code == 130
    assert result.err.strip() == "Interrupted."


def test_the_sigterm_handler_is_restored_after_a_command(cli, votes):
    before = signal.getsignal(signal.SIGTERM)
    assert cli.analyze(votes).code == 0
    assert signal.getsignal(signal.SIGTERM) == before


# --- 6. unwritable outputs: one line, exit 2, nothing half-written ------------------------

@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0,
                    reason="root writes into read-only directories")
@pytest.mark.parametrize("command", ["analyze", "plot"])
def test_a_read_only_directory(cli, votes, tmp_path, command):
    table = tmp_path / "q.csv"
    assert cli.analyze(votes, "--per-query", table).code == 0
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        result = (cli.analyze(votes, "-o", folder / "out.txt") if command == "analyze"
                  else cli.plot("history", table, "-o", folder / "h.png"))
    finally:
        folder.chmod(0o755)
    assert result.code == 2
    assert one_line(result.err).endswith("cannot write: Permission denied")
    assert os.listdir(folder) == []


@pytest.mark.parametrize("command", ["analyze", "plot"])
def test_permission_denied_is_one_line_exit_2(cli, votes, tmp_path, monkeypatch, command):
    table = tmp_path / "q.csv"
    assert cli.analyze(votes, "--per-query", table).code == 0

    def mkstemp(*args, **kwargs):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))

    monkeypatch.setattr(tempfile, "mkstemp", mkstemp)
    result = (cli.analyze(votes, "-o", tmp_path / "out.txt") if command == "analyze"
              else cli.plot("history", table, "-o", tmp_path / "h.png"))
    assert result.code == 2
    assert one_line(result.err).endswith("cannot write: Permission denied")


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EFBIG])
@pytest.mark.parametrize("command", ["analyze", "plot"])
def test_a_full_disk_is_one_line_exit_2(cli, votes, tmp_path, monkeypatch, code, command):
    table = tmp_path / "q.csv"
    assert cli.analyze(votes, "--per-query", table).code == 0
    (out,) = old_files(tmp_path, "out.png")
    failing_writes(monkeypatch, OSError(code, os.strerror(code)))
    result = (cli.analyze(votes, "-o", out) if command == "analyze"
              else cli.plot("history", table, "-o", out))
    assert result.code == 2
    assert one_line(result.err) == f"Error: {out}: cannot write: {os.strerror(code)}"
    assert out.read_bytes() == b"old" and temporaries(tmp_path) == []


def test_a_full_device_is_one_line_exit_2_and_the_other_outputs_untouched(cli, votes,
                                                                           tmp_path):
    full = device(tmp_path, "full", 7)  # a copy of /dev/full: every write is ENOSPC
    (table,) = old_files(tmp_path, "q.csv")
    result = cli.analyze(votes, "-o", full, "--per-query", table)
    assert result.code == 2
    assert one_line(result.err) == f"Error: {full}: cannot write: No space left on device"
    assert stat.S_ISCHR(os.stat(full).st_mode)
    assert table.read_bytes() == b"old" and temporaries(tmp_path) == []


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
@pytest.mark.parametrize("command", ["analyze", "sweep"])
def test_standard_output_on_a_full_device_is_one_line_exit_2(votes, command):
    args = [votes] + (["-m", "gnmax", "--sigma", "40", "-w", "1", "-q"]
                      if command == "sweep" else [])
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [sys.executable, "-c", f"from pate_cli.cli.{command} import main; main()", *args],
            stdout=full, stderr=subprocess.PIPE, text=True, timeout=120,
            env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert done.returncode == 2
    assert done.stderr == "Error: cannot write the output: No space left on device\n"


@pytest.mark.skipif(os.name != "posix", reason="RLIMIT_FSIZE")
def test_a_file_size_limit_is_one_line_exit_2(votes, tmp_path):
    import resource

    out, table = old_files(tmp_path, "out.json", "q.csv")

    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (16_000, 16_000))  # JSON 13k, table 25k

    done = subprocess.run(
        [sys.executable, "-c", "from pate_cli.cli.analyze import main; main()", votes,
         "-f", "json", "-o", out, "--per-query", table],
        capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(ROOT)),
        preexec_fn=limit, timeout=120)
    assert done.returncode == 2, done.stderr
    assert one_line(done.stderr) == f"Error: {table}: cannot write: File too large"
    assert out.read_bytes() == b"old" and table.read_bytes() == b"old"
    assert temporaries(tmp_path) == []


@pytest.mark.skipif(not LINUX, reason="signals held with pthread_sigmask")
def test_an_interrupt_between_the_renames_leaves_all_outputs_new(tmp_path, monkeypatch):
    """Ctrl-C after the first of three renames: the second and third still run (the signal
    is held until they are done), so no mix of old and new files is left."""
    import pate_cli.outputs.writing as writing

    paths = [tmp_path / name for name in ("s.json", "q.csv", "d.csv")]
    for path in paths:
        path.write_text("OLD")
    renamed = []
    real = os.replace

    def replace_then_interrupt(source, target):
        real(source, target)
        renamed.append(target)
        if len(renamed) == 1:
            os.kill(os.getpid(), signal.SIGINT)

    monkeypatch.setattr(writing.os, "replace", replace_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        write_outputs({str(path): b"NEW" for path in paths})
    assert len(renamed) == 3 and [path.read_text() for path in paths] == ["NEW"] * 3
