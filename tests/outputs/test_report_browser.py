"""A browser check of the HTML report: headless Chromium renders it to a PNG that is not
blank and is at least one page high. ``make report-check`` installs Chromium and runs
this; without Chromium the test is skipped with the reason."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

from tests import SAMPLES

PAGE = (1000, 1300)  # an A4 page at 96 dpi is about 794 x 1123 pixels


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    pytest.skip("no headless Chromium on PATH (make report-check installs the Debian "
                "package chromium)")


def test_report_renders_in_a_browser(cli, tmp_path):
    browser = chromium()
    pytest.importorskip("jinja2")
    from matplotlib.image import imread

    report = tmp_path / "report.html"
    result = cli.report(SAMPLES / "mnist_250_votes.npy", "-n", "640", "--accounting",
                        "expected", "--smooth-sensitivity", "-o", report)
    assert result.code == 0, result.err
    png = tmp_path / "report.png"
    done = subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
         f"--user-data-dir={tmp_path / 'profile'}", f"--window-size={PAGE[0]},{PAGE[1]}",
         f"--screenshot={png}", report.as_uri()],
        capture_output=True, timeout=150, check=False)
    assert png.exists(), done.stderr.decode(errors="replace")[-2000:]
    pixels = imread(png)[..., :3]
    assert pixels.shape[:2] == (PAGE[1], PAGE[0])
    ink = (pixels < 0.9).any(axis=2)  # anything darker than near-white
    assert ink.mean() > 0.01, "the page rendered blank"
    rows = np.flatnonzero(ink.any(axis=1))
    assert rows.min() < 100 and rows.max() > PAGE[1] - 200, \
        "the report does not fill a page"
