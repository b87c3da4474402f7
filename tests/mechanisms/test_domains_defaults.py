"""A default parameter out of range comes from the votes' scale: the error says so."""

from __future__ import annotations

import pytest

from pate_cli.mechanisms import build_mechanism


def test_a_default_out_of_range_names_the_teacher_count_and_the_flags():
    with pytest.raises(ValueError) as caught:
        build_mechanism("confident", teachers=2.0**58)
    message = str(caught.value)
    assert message.startswith("sigma threshold must lie in [1e-09, 1e+12]")
    assert "defaults scale with the number of teachers M = 2.8823e+17" in message
    assert "give --threshold, --sigma-threshold, --sigma, or check the votes" in message
    with pytest.raises(ValueError) as given:  # a value the user gave: the plain message
        build_mechanism("gnmax", teachers=250, sigma=1e13)
    assert "defaults" not in str(given.value)
    assert build_mechanism("gnmax", teachers=2.0**58, sigma=40.0).sigma == 40.0
