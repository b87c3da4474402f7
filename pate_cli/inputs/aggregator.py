"""``--aggregator FILE.py:FUNCTION``: a user's aggregator for pate-audit (cli:pate-audit),
imported from its path (never unpickled); its return values are checked where it is called.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass

from ..errors import InputError
from .readers import check_file, file_sha256


@dataclass(frozen=True)
class UserAggregator:
    """A user's function ``f(votes, rng) -> labels`` and where it came from (``name``:
    ``FILE.py:FUNCTION`` as given, or a function's name; ``sha256``: the file's, or None)."""

    function: Callable
    name: str
    sha256: str | None


def aggregator_file(text: str) -> str:
    """The ``FILE.py`` of ``FILE.py:FUNCTION`` (an input no output may replace);
    ``InputError`` for a malformed ``text``."""
    return _named(text)[0]


def _named(text: str) -> tuple[str, str]:
    path, colon, function = str(text).rpartition(":")
    if not colon or not path or not function.isidentifier():
        raise InputError(f"--aggregator {text!r}: expected FILE.py:FUNCTION")
    return path, function


def load_aggregator(text: str) -> UserAggregator:
    """The function ``FUNCTION`` of the Python file ``FILE.py`` named by ``FILE.py:FUNCTION``.

    Args:
      text: ``FILE.py:FUNCTION`` (the last colon separates the function's name).

    Returns:
      The function, its name as given, and the file's sha256.

    Raises:
      InputError: a malformed ``text``, a missing file, a file that fails to import (its
        error's type and message, on one line), or no callable ``FUNCTION`` in it.
    """
    path, function = _named(text)
    name = check_file(path, expected="a Python file defining the aggregator")
    digest = file_sha256(name)
    module_name = f"pate_audit_user_{abs(hash(os.path.abspath(name)))}"
    spec = importlib.util.spec_from_file_location(module_name, name)
    if spec is None or spec.loader is None:
        raise InputError(f"{name}: cannot be imported as Python (expected a .py file)")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # dataclasses and pickling look their module up
    try:
        spec.loader.exec_module(module)
    except BaseException as error:  # noqa: BLE001 - the user's code: any failure is theirs
        sys.modules.pop(module_name, None)
        if isinstance(error, KeyboardInterrupt):
            raise
        message = " ".join(str(error).split())
        raise InputError(f"{name}: importing it failed: {type(error).__name__}"
                         + (f": {message}" if message else "")) from None
    found = getattr(module, function, None)
    if found is None:
        raise InputError(f"{name}: defines no function {function!r}")
    if not callable(found):
        raise InputError(f"{name}: {function!r} is not a function")
    return UserAggregator(found, f"{path}:{function}", digest)
