"""What a smooth-sensitivity release covers: a curve added with ``--add-rdp``, the secrecy
of its noise (a note on every release), not a ``--tuning`` search, and the conversion its
summary line names."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

import pate_cli
from pate_cli.errors import OptionError, PateWarning
from pate_cli.outputs.summary import summary_lines

VOTES = np.array([[240, 5, 5], [200, 30, 20], [130, 120, 0], [250, 0, 0]] * 5, float)
GNMAX = dict(sigma=40.0, smooth_sensitivity=True, order=15)


def _quiet(**options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pate_cli.analyze(VOTES, "gnmax", **GNMAX, **options)


def test_an_added_curve_is_part_of_the_released_cost():
    """The release's epsilon before its own cost is the run's epsilon at the order, added
    curve included (it had been the votes' alone: 0.87 against the run's 19.06)."""
    added = _quiet(add_rdp=pd.DataFrame({"order": [15.0], "rdp": [3.0]}))
    plain = _quiet()
    release = added.release
    assert release.rdp_cumulative == pytest.approx(plain.release.rdp_cumulative + 3.0,
                                                   rel=1e-15)
    assert release.epsilon_before == pytest.approx(added.epsilon, rel=1e-12)
    classic = float(added.rdp_total[0]) + math.log(1 / added.delta) / 14  # order 15
    assert release.epsilon_before >= classic
    assert release.smooth_sensitivity == plain.release.smooth_sensitivity
    assert release.sanitized_epsilon > release.epsilon_after - 10 * release.noise_std > 3.0


def test_every_release_says_its_noise_must_stay_secret():
    with pytest.warns(PateWarning, match=r"only while its noise is secret: it is drawn from "
                                         r"--seed 7"):
        result = pate_cli.analyze(VOTES, "gnmax", seed=7, **GNMAX)
    assert any("--seed was drawn at random and kept private" in note
               for note in result.warnings)


def test_a_release_does_not_combine_with_a_tuning_search():
    with pytest.raises(OptionError, match="sanitises one run's epsilon, not a --tuning"):
        pate_cli.analyze(VOTES, "gnmax", tuning="poisson:3", **GNMAX)


@pytest.mark.parametrize(("conversion", "named"), [("classic", False), ("improved", True)])
def test_the_release_line_names_its_classic_conversion_under_another(conversion, named):
    result = _quiet(conversion=conversion)
    line = dict(summary_lines(result.to_dict()))["smooth sensitivity"]
    assert ("classic conversion" in line) is named
