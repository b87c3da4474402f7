"""Regenerate the docs' example privacy statement: ``docs/figures/mnist_report.html`` (with
``pate-report``) and ``docs/figures/mnist_report.png`` (the page rendered by headless Chromium,
cropped to its content).

    python scripts/make_report_example.py [--chromium PATH]

Run from anywhere; the report's paths are relative to the repository root, as in the
command of docs/commands/pate-report.md.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from pate_cli.cli.errors import run_command
from pate_cli.cli.report import report as report_command

ROOT = Path(__file__).resolve().parents[1]
ARGS = ["sample_votes/mnist_250_votes.npy", "-n", "640", "--accounting", "expected",
        "--smooth-sensitivity", "-o", "docs/figures/mnist_report.html"]
WIDTH, TALL = 1000, 6000


def screenshot(browser: str, html: Path, png: Path) -> None:
    """The page at WIDTH pixels wide, cut below its last non-white row (plus a margin)."""
    from PIL import Image

    with tempfile.TemporaryDirectory() as profile:
        raw = Path(profile) / "page.png"
        subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu",
                        "--hide-scrollbars", f"--user-data-dir={profile}",
                        f"--window-size={WIDTH},{TALL}", f"--screenshot={raw}",
                        html.resolve().as_uri()], check=True, capture_output=True)
        image = Image.open(raw).convert("RGB")
        ink = (np.asarray(image) < 240).any(axis=2).any(axis=1)
        bottom = int(np.flatnonzero(ink).max()) + 40
        page = image.crop((0, 0, WIDTH, min(bottom, TALL)))
        page.quantize(colors=128).save(png, optimize=True)  # a third of the bytes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chromium", default=shutil.which("chromium"),
                        help="headless Chromium [default: chromium on PATH]")
    options = parser.parse_args()
    os.chdir(ROOT)
    print("$ pate-report " + " ".join(ARGS))
    code = run_command(report_command, ARGS, prog_name="pate-report")
    if code:
        return code
    if options.chromium is None:
        print("no chromium: docs/figures/mnist_report.png not updated", file=sys.stderr)
        return 1
    screenshot(options.chromium, ROOT / "docs/figures/mnist_report.html",
               ROOT / "docs/figures/mnist_report.png")
    print("wrote docs/figures/mnist_report.html and docs/figures/mnist_report.png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
