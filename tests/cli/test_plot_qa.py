"""pate-plot's QA fixes: a figure's size options (non-finite sizes named, the pixel count
shown with the digits that put it over the limit)."""

from __future__ import annotations

import pytest


def _refused(result, *words) -> str:
    assert result.code == 2, result.err
    assert result.err.count("\n") == 1 and result.err.startswith("Error: "), result.err
    for word in words:
        assert word in result.err, result.err
    return result.err


def test_a_png_just_over_the_limit_shows_the_digits_over_it(plot_runs, tmp_path, cli):
    """40 x 40 inches at 177 dpi is 50,126,400 pixels: not '50 megapixels, above the limit
    of 50'."""
    out = tmp_path / "h.png"
    err = _refused(cli.plot("history", plot_runs["confident"], "--width", "40", "--height",
                            "40", "--dpi", "177", "-o", out), "limit of 50")
    assert "= 50.1 megapixels" in err
    assert not out.exists()


@pytest.mark.parametrize("option", ["--width", "--height"])
@pytest.mark.parametrize("value", ["nan", "NaN"])
@pytest.mark.parametrize("suffix", ["png", "svg"])
def test_a_size_that_is_not_a_number_names_its_option(option, value, suffix, plot_runs,
                                                       tmp_path, cli):
    out = tmp_path / f"h.{suffix}"
    _refused(cli.plot("history", plot_runs["confident"], option, value, "-o", out),
             option, "finite")
    assert not out.exists()
