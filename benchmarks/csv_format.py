"""Per-query CSV text: pandas' ``to_csv`` against ``csv_text.csv_rows`` and ``csv_arrow.csv_bytes``.

Two tables of 10^6 rows (``--rows``) with the per-query table's columns:

- ``analysed``: the per-query table ``pate_cli.analyze`` writes (Confident-GNMax, expected
  accounting, 250 teachers) for queries drawn at random from the MNIST sample votes; its
  columns repeat values as real tables do (0/1 and costs paid by every query);
- ``all distinct``: the same column types (int64, nullable Int64 with missing labels,
  bool, int8, float64 with nan, inf, -0.0) with every float drawn from a continuous
  distribution, the worst case (no value is formatted once for several rows).

Each prints the best of ``--repeat`` times of both, their ratio, and asserts the text is
byte for byte the same. A measurement, not a test:
``.venv/bin/python benchmarks/csv_format.py [--rows N]``.
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

import pate_cli
from pate_cli.outputs.csv_arrow import arrow_rows, csv_bytes
from pate_cli.outputs.csv_text import csv_rows, pandas_rows

SAMPLES = Path(__file__).resolve().parents[1] / "sample_votes"


def analysed_frame(rows: int) -> pd.DataFrame:
    votes = np.load(SAMPLES / "mnist_250_votes.npy")
    drawn = votes[np.random.default_rng(0).integers(0, len(votes), rows)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pate_cli.analyze(drawn, "confident", accounting="expected").to_frame()


def distinct_frame(rows: int) -> pd.DataFrame:
    rng = np.random.default_rng(1)
    label = pd.array(rng.integers(0, 10, rows), dtype="Int64")
    label[rng.random(rows) < 0.3] = pd.NA
    frame = pd.DataFrame({"query": np.arange(rows), "plurality": rng.integers(0, 251, rows),
                          "label": label, "flag": rng.random(rows) < 0.5,
                          "small": rng.integers(-9, 9, rows).astype(np.int8)})
    for number in range(8):
        values = rng.standard_normal(rows) * 10.0 ** rng.integers(-8, 8, rows)
        values[rng.random(rows) < 0.01] = [np.nan, np.inf, -np.inf, -0.0][number % 4]
        frame[f"float{number}"] = values
    return frame


def best(run, repeat: int) -> tuple[float, str]:
    times, text = [], ""
    for _ in range(repeat):
        start = time.perf_counter()
        text = run()
        times.append(time.perf_counter() - start)
    return min(times), text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10**6)
    parser.add_argument("--repeat", type=int, default=2)
    options = parser.parse_args()
    for name, make in (("analysed", analysed_frame), ("all distinct", distinct_frame)):
        frame = make(options.rows)
        old, expected = best(lambda frame=frame: pandas_rows(frame), options.repeat)
        new, text = best(lambda frame=frame: csv_rows(frame), options.repeat)
        assert text == expected, f"{name}: csv_rows differs from pandas' to_csv"
        line = (f"{name:>12}: {len(frame):,} rows x {len(frame.columns)} columns, "
                f"pandas to_csv {old:.2f} s, csv_rows {new:.2f} s ({old / new:.1f}x)")
        if arrow_rows(frame.iloc[:2]) is not None:  # pyarrow is installed
            fast, data = best(lambda frame=frame: csv_bytes(frame), options.repeat)
            assert data == expected.encode(), f"{name}: csv_bytes differs from to_csv"
            line += f", csv_bytes (pyarrow) {fast:.2f} s ({old / fast:.1f}x)"
        print(f"{line} (same {len(text.encode()):,} bytes)")


if __name__ == "__main__":
    main()
