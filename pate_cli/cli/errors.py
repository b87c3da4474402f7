"""Exit statuses at the command boundary (CLI.md): 0 ok, 2 bad input, 3 over budget, 1 bug.

User mistakes (``InputError``, ``ValueError`` from parameter checks, click usage errors)
become one line on stderr and exit status 2; anything unexpected becomes one line and
exit status 1, with the traceback only under ``--debug``.
"""

from __future__ import annotations

import sys
import traceback

import click

from ..errors import InputError, OverBudget

EXIT_OK = 0
EXIT_UNEXPECTED = 1
EXIT_BAD_INPUT = 2
EXIT_OVER_BUDGET = 3


def run_command(command: click.Command, args=None, prog_name: str | None = None) -> int:
    """Run a click command, translating every failure into a one-line message."""
    args = sys.argv[1:] if args is None else list(args)
    debug = "--debug" in args
    try:
        code = command.main(args=args, prog_name=prog_name, standalone_mode=False)
        if isinstance(code, int):  # click returns (not raises) Exit codes here
            return code
    except click.exceptions.Exit as done:
        return done.exit_code
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        return EXIT_UNEXPECTED
    except click.UsageError as error:
        hint = f" (see {prog_name} --help)" if prog_name else ""
        click.echo(f"Error: {error.format_message()}{hint}", err=True)
        return EXIT_BAD_INPUT
    except click.ClickException as error:
        click.echo(f"Error: {error.format_message()}", err=True)
        return error.exit_code
    except OverBudget as error:
        click.echo(f"Error: {error}", err=True)
        return EXIT_OVER_BUDGET
    except (InputError, ValueError) as error:
        if debug:
            traceback.print_exc()
        click.echo(f"Error: {_one_line(error)}", err=True)
        return EXIT_BAD_INPUT
    except BrokenPipeError:
        return EXIT_OK
    except Exception as error:  # noqa: BLE001 - the boundary of the program
        if debug:
            traceback.print_exc()
        hint = "" if debug else " (run with --debug for the traceback)"
        click.echo(f"Error: unexpected {type(error).__name__}: {_one_line(error)}{hint}",
                   err=True)
        return EXIT_UNEXPECTED
    return EXIT_OK


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split())
