"""Per-query CSV text: pandas' ``to_csv`` against pyarrow's CSV writer (``csv_table.csv_rows``).

Two tables of 10^6 rows (``--rows``) with the per-query table's columns:

- ``analysed``: the per-query table ``pate_cli.analyze`` writes (Confident-GNMax, expected
  accounting, 250 teachers) for queries drawn at random from the MNIST sample votes;
- ``all distinct``: the same column types (int64, nullable Int64 with missing labels,
  bool, int8, float64 with nan, inf, -0.0) with every float drawn from a continuous
  distribution.

Each prints the best of ``--repeat`` times of both and their ratio, and asserts that both
texts read back to the same values (the tolerance rule: 0 in value, the notation differs).
A measurement, not a test: ``.venv/bin/python benchmarks/csv_format.py [--rows N]``.
"""

from __future__ import annotations

import argparse
import io
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

import pate_cli
from pate_cli.outputs.csv_table import csv_header, csv_rows, pandas_rows

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


def best(run, repeat: int) -> tuple[float, bytes]:
    times, text = [], b""
    for _ in range(repeat):
        start = time.perf_counter()
        text = run()
        times.append(time.perf_counter() - start)
    return min(times), text


def read_back(frame: pd.DataFrame, text: bytes) -> pd.DataFrame:
    floats = {column: np.float64 for column in frame.columns if frame[column].dtype.kind == "f"}
    return pd.read_csv(io.BytesIO(csv_header(frame) + text), dtype=floats,
                       keep_default_na=False, na_values=[""])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10**6)
    parser.add_argument("--repeat", type=int, default=2)
    options = parser.parse_args()
    for name, make in (("analysed", analysed_frame), ("all distinct", distinct_frame)):
        frame = make(options.rows)
        old, expected = best(lambda frame=frame: pandas_rows(frame), options.repeat)
        new, text = best(lambda frame=frame: csv_rows(frame), options.repeat)
        pd.testing.assert_frame_equal(read_back(frame, text), read_back(frame, expected),
                                      check_exact=True)
        print(f"{name:>12}: {len(frame):,} rows x {len(frame.columns)} columns, "
              f"pandas to_csv {old:.2f} s, csv_rows (pyarrow) {new:.2f} s "
              f"({old / new:.1f}x; {len(text):,} and {len(expected):,} bytes, the same values)")


if __name__ == "__main__":
    main()
