"""pate-report's statement says what the run did: no internal references, the smooth-
sensitivity headline labels the data-dependent figure, Markdown links to its figures
whatever the report's name."""

from __future__ import annotations

import re
import shutil
from urllib.parse import unquote

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


def test_markdown_figure_links_survive_spaces_and_parentheses(cli, tmp_path):
    folder = tmp_path / "d \u00fc"
    folder.mkdir()
    votes = folder / "v (1).npy"
    shutil.copyfile(VOTES, votes)
    report = folder / "my report (v1).md"
    assert cli.report(votes, "-n", "100", "-o", report).code == 0
    text = report.read_text(encoding="utf-8")
    links = re.findall(r"!\[[^\]]*\]\(([^()\s]+)\)", text)  # a destination ends at ( ) or space
    assert len(links) == text.count("![") >= 2
    for link in links:
        assert (folder / unquote(link)).is_file(), link
    markdown = pytest.importorskip("markdown")
    html = markdown.markdown(text)
    sources = re.findall(r'<img alt="[^"]*" src="([^"]+)"', html)
    assert sorted(unquote(source) for source in sources) == sorted(map(unquote, links))
