"""Every representative command prints and writes exactly the recorded bytes."""

from __future__ import annotations

import os

import pytest

from .cases import CASES
from .runner import FIXTURES, MATPLOTLIB, run_case


@pytest.mark.parametrize("name", sorted(CASES))
def test_outputs_are_byte_identical(name, tmp_path):
    recorded = {path.name: path.read_bytes() for path in (FIXTURES / name).iterdir()}
    drawn_with = recorded.pop(MATPLOTLIB, None)
    if drawn_with is not None:
        import matplotlib

        if drawn_with.decode() != matplotlib.__version__:
            pytest.skip(f"figures recorded with matplotlib {drawn_with.decode()}")
    produced = run_case(name, tmp_path)
    assert sorted(produced) == sorted(recorded)
    for filename, data in produced.items():
        assert data == recorded[filename], f"{name}: {filename} changed{_UNPINNED}"


# The fixtures hold AVX2 numerics (see the Makefile's PINNED_NUMERICS): run by hand on an
# AVX-512 machine without them, some last bits differ.
_UNPINNED = ("" if os.environ.get("NPY_DISABLE_CPU_FEATURES") else
             " (run through make test, which pins numpy and OpenBLAS to AVX2 numerics, or "
             "set NPY_DISABLE_CPU_FEATURES and OPENBLAS_CORETYPE as it does)")
