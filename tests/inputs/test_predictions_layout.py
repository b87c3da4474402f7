"""``--predictions-layout teachers-first`` (cli:json): a predictions file stored
teachers x queries gives the same JSON as its queries x teachers transpose."""

from __future__ import annotations

import json

import numpy as np
import pytest

from pate_cli.errors import InputError
from pate_cli.inputs.votes import load_predictions

# 12 queries x 7 teachers, class ids 0..2 and -1 (did not vote)
PREDICTIONS = np.random.default_rng(3).integers(-1, 3, size=(12, 7))


def _summary(cli, *args) -> dict:
    result = cli.analyze(*args, "--format", "json", "--classes", "3")
    assert result.code == 0, result.err
    summary = json.loads(result.out)
    summary["input"].pop("path")
    summary["input"].pop("sha256")
    summary["read"].pop("predictions_layout")  # the option compared
    return summary


@pytest.mark.parametrize("suffix", [".npy", ".csv"])
def test_transposed_file_gives_the_same_json(cli, tmp_path, suffix):
    plain, transposed = tmp_path / f"p{suffix}", tmp_path / f"t{suffix}"
    if suffix == ".npy":
        np.save(plain, PREDICTIONS)
        np.save(transposed, PREDICTIONS.T)
    else:
        np.savetxt(plain, PREDICTIONS, fmt="%d", delimiter=",")
        np.savetxt(transposed, PREDICTIONS.T, fmt="%d", delimiter=",")
    for options in ([], ["-m", "gnmax", "--sigma", "2"]):
        expected = _summary(cli, "--predictions", str(plain), *options)
        assert _summary(cli, "--predictions", str(transposed), "--predictions-layout",
                        "teachers-first", *options) == expected
        assert expected["input"]["queries"] == 12 and expected["input"]["teachers"] == 7


def test_messages_name_queries_and_teachers_as_queries_first(tmp_path):
    bad = PREDICTIONS.copy()
    bad[4, 2] = 9
    path = tmp_path / "t.npy"
    np.save(path, bad.T)
    with pytest.raises(InputError, match="query 4, teacher 2: class id 9 is outside 0..2"):
        load_predictions(str(path), classes=3, layout="teachers-first")


def test_unknown_layout_is_refused(cli, tmp_path):
    path = tmp_path / "p.npy"
    np.save(path, PREDICTIONS)
    result = cli.analyze("--predictions", str(path), "--predictions-layout", "columns")
    assert result.code == 2
    assert "'columns' is not one of 'queries-first', 'teachers-first'" in result.err
