"""Record the regression fixtures: ``python -m tests.regression.record [NAME ...]``."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from .cases import CASES
from .runner import FIXTURES, MATPLOTLIB, run_case


def main(names: list[str]) -> None:
    for name in names or sorted(CASES):
        target = FIXTURES / name
        target.mkdir(parents=True, exist_ok=True)
        for old in target.iterdir():
            old.unlink()
        with tempfile.TemporaryDirectory() as work:
            for filename, data in run_case(name, Path(work)).items():
                (target / filename).write_bytes(data)
        if CASES[name][0] == "pate-plot":
            import matplotlib

            (target / MATPLOTLIB).write_text(matplotlib.__version__)
        print(f"recorded {name}")


if __name__ == "__main__":
    main(sys.argv[1:])
