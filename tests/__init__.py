"""The test suite: a package (``tests.accounting.test_gnmax`` ...), so that test files in
different layer folders may share a name and import shared helpers as ``tests.<module>``;
``python -m tests.regression.record`` runs from the repository root the same way."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]   # the repository (this checkout)
SAMPLES = ROOT / "sample_votes"
