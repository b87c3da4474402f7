"""README's table of math:screening's exact threshold-step curve on the 2018 paper's votes
(skipped when ``../shared/paper_votes`` is absent)."""

from __future__ import annotations

import numpy as np
import pytest

from pate_cli import analyze

# data set, file, queries, T, sigma1, sigma2, delta, then README's figures: data-independent
# (gaussian, exact) and data-dependent (gaussian, exact) epsilon of the expected analysis
ROWS = [("mnist_250_teachers.npy", 640, 200.0, 150.0, 40.0, 1e-5, 3.157, 3.111, 1.999, 1.925),
        ("svhn_250_teachers.npy", 8500, 300.0, 200.0, 40.0, 1e-6, 12.393, 12.253, 4.915,
         4.607)]


@pytest.mark.parametrize("row", ROWS, ids=["MNIST", "SVHN"])
def test_paper_figures_before_and_after(paper_votes, row):
    file, queries, t, s1, s2, delta, *table = row
    votes = np.load(paper_votes / file)
    figures = []
    for screening in ("gaussian", "exact"):
        result = analyze(votes, "confident", threshold=t, sigma_threshold=s1, sigma=s2,
                         queries=queries, delta=delta, accounting="expected",
                         screening=screening)
        summary = result.to_dict()
        figures.append((summary["epsilon_data_independent"], summary["epsilon"]))
    (gauss_di, gauss_dd), (exact_di, exact_dd) = figures
    assert [round(x, 3) for x in (gauss_di, exact_di, gauss_dd, exact_dd)] == table
    # data-dependent <= data-independent, and the exact curve only lowers both
    assert exact_dd <= exact_di < gauss_di and exact_dd < gauss_dd
