"""pate-report's statement says what the run did: no internal references, the smooth-
sensitivity headline labels the data-dependent figure, Markdown links to its figures
whatever the report's name."""

from __future__ import annotations

import re

import pytest

from tests import SAMPLES

pytest.importorskip("jinja2")

VOTES = str(SAMPLES / "mnist_250_votes.npy")


@pytest.mark.parametrize("name", ["r.md", "r.html"])
def test_no_internal_references(cli, tmp_path, name):
    """The tuning section pointed at an internal spec tag (math:tuning)."""
    report = tmp_path / name
    assert cli.report(VOTES, "-n", "100", "-o", report).code == 0
    text = report.read_text(encoding="utf-8")
    assert "docs/explanation/tuning.md" in text
    assert not re.search(r"math:|MATH\.md|CLI\.md", text)


def test_smooth_headline_labels_the_data_dependent_figure(cli, tmp_path):
    report = tmp_path / "r.md"
    assert cli.report(VOTES, "-n", "300", "--accounting", "expected",
                      "--smooth-sensitivity", "-o", report).code == 0
    headline = report.read_text(encoding="utf-8").split("## Guarantee")[1].split("\n\n")[1]
    assert "sanitised release of the data-dependent, unsanitised \u03b5 = " in headline
