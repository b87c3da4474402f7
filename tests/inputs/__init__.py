"""Tests of the inputs layer; ``error_of`` is their shared check of one-line errors."""

from __future__ import annotations

import pytest

from pate_cli.errors import InputError


def error_of(call, *args, **kwargs) -> str:
    """The InputError message of ``call``; fails the test if none is raised."""
    with pytest.raises(InputError) as caught:
        call(*args, **kwargs)
    message = str(caught.value)
    assert "\n" not in message and "\r" not in message, f"not one line: {message!r}"
    return message
