"""Every representative command prints and writes exactly the recorded bytes."""

from __future__ import annotations

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
        assert data == recorded[filename], f"{name}: {filename} changed"
