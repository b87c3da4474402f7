"""mpmath's precision for a test module's references, as a context per test: other modules
set their own, and a process-wide ``mpmath.mp.dps`` would depend on the order the modules
are imported and run in (a run once left 30 digits where 50 were needed)."""

from __future__ import annotations

import mpmath
import pytest


def digits(count: int):
    """An autouse fixture running each test of the module that assigns it at ``count``
    significant digits (``_digits = digits(50)``)."""

    @pytest.fixture(autouse=True)
    def fixture():
        with mpmath.workdps(count):
            yield

    return fixture
