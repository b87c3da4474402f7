"""The package's error types and their exit statuses (cli:exit-codes): ``InputError`` 2,
``OverBudget`` (the final epsilon exceeds ``--max-epsilon``) 3."""

from __future__ import annotations


class InputError(ValueError):
    """A user mistake in an input file or option: reported in one line, exit status 2."""


class OverBudget(Exception):
    """The final epsilon exceeds ``--max-epsilon`` (exit status 3)."""


class OptionError(InputError):
    """A combination of options (or API arguments) the analysis refuses (exit status 2).

    The command line prints it as click prints a usage error, with a pointer to ``--help``.
    """


class PateWarning(UserWarning):
    """A note about a result: issued by the Python API, one ``Warning:`` line in commands."""


class OrderGridWarning(PateWarning):
    """The best order is the first or last of the grid: a wider grid may give less."""
