"""The text summary: no ``None`` parameters, one word for the individualized halt point."""

from __future__ import annotations

import json
from pathlib import Path

from pate_cli.outputs.summary import render

FIXTURES = Path(__file__).resolve().parents[1] / "regression" / "fixtures"


def _summary(case: str) -> dict:
    return json.loads((FIXTURES / case / "stdout").read_text())


def test_unset_parameters_are_left_out_of_the_text():
    summary = _summary("svt_scale")
    summary["params"]["svt_threshold"] = None
    text = render(summary, "table")
    assert "None" not in text
    assert "svt_threshold" not in text
    assert "svt_scale=1.4" in text


def test_halt_point_is_the_first_query_not_released():
    summary = _summary("indiv_weighting")
    stop = summary["stopped_at"]
    text = render(summary, "table")
    assert f"stops before query {stop})" in text
    assert f"exhausted at query {stop}" in text  # the group that stops the labelling
    assert "stops after" not in text
