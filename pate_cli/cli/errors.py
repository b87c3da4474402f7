"""Exit statuses at the command boundary (cli:exit-codes): 0 ok, 2 bad input, 3 over budget,
1 bug, 130 interrupted (Ctrl-C), 143 terminated (SIGTERM).

User mistakes (``InputError``, parameter checks' ``ValueError`` but not matplotlib's, click
usage errors) are one line on stderr; anything unexpected one line, with the traceback
under ``--debug``. SIGTERM raises ``Terminated`` (a ``KeyboardInterrupt``) while a command
runs, so it gets Ctrl-C's cleanup (temporary files removed, finished sweep rows kept).
"""

from __future__ import annotations

import contextlib
import errno
import os
import sys
import traceback
import warnings
from collections.abc import Iterator

import click

from ..errors import InputError, OptionError, OverBudget
from ..interrupts import Terminated, sigterm_switch
from ..rounding import ceil_text

EXIT_OK = 0
EXIT_UNEXPECTED = 1
EXIT_BAD_INPUT = 2
EXIT_OVER_BUDGET = 3
EXIT_INTERRUPTED = 130  # Ctrl-C (SIGINT): 128 + 2
EXIT_TERMINATED = 143  # SIGTERM: 128 + 15


def run_command(command: click.Command, args=None, prog_name: str | None = None) -> int:
    """Run a click command, translating every failure into a one-line message."""
    with sigterm_switch():
        return _run(command, args, prog_name)


class _Stopped(BaseException):
    """An interrupt raised inside the command, carried past click's handler (whose blank
    line after ``^C`` would be a stray second line on a pipe or at SIGTERM)."""

    def __init__(self, interrupt: KeyboardInterrupt):
        super().__init__()
        self.interrupt = interrupt


def _carried(invoke):
    def invoked(ctx):
        try:
            return invoke(ctx)
        except KeyboardInterrupt as interrupt:
            raise _Stopped(interrupt) from interrupt
    return invoked


def _run(command: click.Command, args, prog_name: str | None) -> int:
    args = sys.argv[1:] if args is None else list(args)
    debug = "--debug" in args
    try:
        command.invoke = _carried(type(command).invoke.__get__(command))  # type: ignore
        code = command.main(args=args, prog_name=prog_name, standalone_mode=False)
        if isinstance(code, int):  # click returns (not raises) Exit codes here
            return code
    except click.exceptions.Exit as done:
        return done.exit_code
    except click.exceptions.Abort as aborted:
        # click turns KeyboardInterrupt (after a blank line closing the terminal's ^C) into
        # Abort; an Abort of its own (a prompt at end of input) stays status 1
        cause = aborted.__cause__ or aborted.__context__
        if isinstance(cause, KeyboardInterrupt):
            return _interrupted(cause)
        _echo_after_stdout("Aborted.")
        return EXIT_UNEXPECTED
    except _Stopped as stopped:
        return _interrupted(stopped.interrupt)
    except KeyboardInterrupt as interrupt:
        return _interrupted(interrupt)
    except (click.UsageError, OptionError) as error:
        hint = f" (see {prog_name} --help)" if prog_name else ""
        message = (error.format_message() if isinstance(error, click.UsageError)
                   else _one_line(error))
        _echo_after_stdout(f"Error: {message}{hint}")
        return EXIT_BAD_INPUT
    except click.ClickException as error:
        _echo_after_stdout(f"Error: {error.format_message()}")
        return error.exit_code
    except OverBudget as error:
        _echo_after_stdout(f"Error: {error}")
        return EXIT_OVER_BUDGET
    except (InputError, ValueError) as error:
        if not isinstance(error, InputError) and _raised_inside(error):
            return _unexpected(error, debug)
        if debug:
            traceback.print_exc()
        _echo_after_stdout(f"Error: {_one_line(error)}")
        return EXIT_BAD_INPUT
    except BrokenPipeError:
        return EXIT_OK
    except OSError as error:
        if error.errno not in _FULL_OUTPUT:
            return _unexpected(error, debug)
        _drop_stdout()  # what could not be written is not tried again at exit
        _echo_after_stdout(f"Error: cannot write the output: {error.strerror or error}")
        return EXIT_BAD_INPUT
    except Exception as error:  # noqa: BLE001 - the boundary of the program
        return _unexpected(error, debug)
    return EXIT_OK



# --max-epsilon on an individualized run whose figures at the halt are not bounds
# (vanishing): nothing can meet the gate, so it fails (exit 3), not passes on those figures
NO_BOUND_TO_GATE = ("--max-epsilon: vanishing forms no bound for any run here (a teacher's "
                    "sensitivity varies query by query; its figures at a halt the votes decide "
                    "are not bounds), so no epsilon of this run can be held to the gate")


def check_max_epsilon(epsilon: float, max_epsilon: float | None, *,
                      what: str = "epsilon") -> None:
    """``--max-epsilon``: ``OverBudget`` (exit status 3) when ``epsilon`` exceeds it."""
    if max_epsilon is not None and epsilon > max_epsilon:
        raise OverBudget(f"{what} {ceil_text(epsilon)} exceeds --max-epsilon {max_epsilon:g}")

# Libraries whose ValueError is no user mistake (status 1): matplotlib parses no input (not
# pandas, pyarrow, numpy: their parsers' ValueErrors refuse the user's input).
INTERNAL_LIBRARIES = frozenset({"matplotlib"})

# Writing standard output (or a file) failed for want of room: "cannot write" in
# docs/reference/exit-codes.md.
_FULL_OUTPUT = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}


def _drop_stdout() -> None:
    """Point stdout at /dev/null, so the flush at exit does not fail again with a
    traceback-like 'Exception ignored' message."""
    with contextlib.suppress(Exception):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def _unexpected(error: BaseException, debug: bool) -> int:
    """Anything not foreseen: one line and status 1 (the traceback with ``--debug``)."""
    if debug:
        traceback.print_exc()
    hint = "" if debug else " (run with --debug for the traceback)"
    _echo_after_stdout(f"Error: unexpected {type(error).__name__}: {_one_line(error)}{hint}")
    return EXIT_UNEXPECTED


def _echo_after_stdout(text: str) -> None:
    """``text`` on stderr, after stdout is flushed (so ``cmd > out 2>&1`` and a terminal show
    them in the order they happened)."""
    with contextlib.suppress(AttributeError, OSError, ValueError):
        sys.stdout.flush()
    click.echo(text, err=True)


def _interrupted(interrupt: KeyboardInterrupt) -> int:
    if isinstance(interrupt, Terminated):
        _echo_after_stdout("Terminated.")
        return EXIT_TERMINATED
    with contextlib.suppress(AttributeError, OSError, ValueError):
        if sys.stderr.isatty():  # the line a terminal's ^C leaves open
            click.echo(err=True)
    _echo_after_stdout("Interrupted.")
    return EXIT_INTERRUPTED


@contextlib.contextmanager
def reported_warnings() -> Iterator[None]:
    """Print every Python warning raised inside as one ``Warning: ...`` line on stderr.

    Nothing the command says is silenced: each distinct message is printed once, in the
    order raised, after the block (also when it raises), instead of Python's two-line
    warning text. ``ResourceWarning`` is not printed (Python ignores it by default too):
    the garbage collector raises it wherever an object of someone else's is freed (a
    client's socket), which says nothing about this run.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.simplefilter("ignore", ResourceWarning)
        try:
            yield
        finally:
            seen = set()
            for warning in caught:
                text = _warning_text(warning)
                if text not in seen:
                    seen.add(text)
                    warn(text)


# extensions of the data formats a -o summary is not written in unless -f json (.json)
DATA_SUFFIXES = (".json", ".jsonl", ".csv", ".tsv", ".parquet")


def warn_table_output(output, fmt: str) -> None:
    """A ``Warning:`` line when ``-o``'s extension names a data format but the summary is
    written as a table (pate-analyze, pate-calibrate, pate-audit).

    Args:
      output: the ``-o`` path, or None.
      fmt: the ``-f`` format, ``table`` or ``json``.
    """
    if fmt == "table" and output is not None and str(output).lower().endswith(DATA_SUFFIXES):
        warn(f"-o {output} is written as a table (give -f json for JSON)")


def warn(text: str) -> None:
    """``Warning: text`` as one line on stderr (a path's newline, say, a space)."""
    click.echo(f"Warning: {' '.join(text.split())}", err=True)


def _warning_text(warning) -> str:
    """A caught warning as one line; numpy's floating-point warnings ("overflow encountered in
    divide") also say what they mean for the figures."""
    text = " ".join(str(warning.message).split())
    if issubclass(warning.category, RuntimeWarning) and " encountered in " in text:
        text = (f"a computation met a floating-point limit ({text}): the parameters or "
                "votes are extreme; check the figures (inf, nan or 0) before using them")
    return text


def _raised_inside(error: BaseException) -> bool:
    """Whether ``error``'s last frame is in ``INTERNAL_LIBRARIES`` (not one of our checks,
    whose ValueErrors name the user's mistake)."""
    traceback_ = error.__traceback__
    if traceback_ is None:
        return False
    while traceback_.tb_next is not None:
        traceback_ = traceback_.tb_next
    module = str(traceback_.tb_frame.f_globals.get("__name__", ""))
    return module.split(".")[0] in INTERNAL_LIBRARIES


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split())
