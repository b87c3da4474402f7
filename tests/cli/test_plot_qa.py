"""pate-plot's QA fixes: a figure's size options (non-finite sizes named, the pixel count
shown with the digits that put it over the limit); a figure's delta is the one its data
were computed at (--delta must agree with a summary's or a sweep table's, runs at different
deltas are not put on one axis); captions say which figure they show (the per-query table's
RDP epsilon, unsanitised when data-dependent, beside a PLD headline)."""

from __future__ import annotations

import json

import pytest

from tests import SAMPLES


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


# --- a figure's delta is the one its data were computed at ---------------------------------

def _axis_labels(svg: str) -> str:
    """The SVG's text (its comments hold each text element's string)."""
    import re
    return " ".join(re.findall(r"<!-- (.*?) -->", svg, flags=re.S))


def test_delta_comes_from_the_summary_and_delta_must_agree(plot_runs, tmp_path, cli):
    """The run was computed at 1e-6: the axis says so; --delta 0.3 is refused (it labelled
    the axis 'at delta = 0.3'); --delta 1e-6, the run's own, is taken."""
    table, summary = plot_runs["confident"], plot_runs["confident_json"]
    out = tmp_path / "h.svg"
    assert cli.plot("history", table, "--summary", summary, "-o", out).code == 0
    assert "= 1e-6" in _axis_labels(out.read_text())
    out.unlink()
    for kind, args in (("history", [table, "--summary", summary]),
                       ("partition", [table, "--summary", summary])):
        err = _refused(cli.plot(kind, *args, "--delta", "0.3", "-o", out), "--delta 0.3",
                       "1e-06")
        assert not out.exists(), err
    assert cli.plot("history", table, "--summary", summary, "--delta", "1e-6", "-o",
                    out).code == 0
    assert "= 1e-6" in _axis_labels(out.read_text())


def test_groups_delta_must_agree_with_its_summary(plot_runs, tmp_path, cli):
    summary = json.loads(open(plot_runs["groups_json"], encoding="utf-8").read())
    out = tmp_path / "g.png"
    other = 1e-6 if summary["delta"] != 1e-6 else 1e-5
    _refused(cli.plot("groups", plot_runs["groups"], "--summary", plot_runs["groups_json"],
                      "--delta", f"{other:g}", "-o", out), "--delta", f"{summary['delta']:g}")
    assert not out.exists()
    # without a summary the table records no delta: --delta labels it
    assert cli.plot("groups", plot_runs["groups"], "--groups",
                    SAMPLES / "mnist_250_groups.csv", "--delta", f"{other:g}", "--dpi", "30",
                    "-o", out).code == 0


def test_summaries_at_different_deltas_are_plotted_separately(plot_runs, tmp_path, cli):
    """confident at 1e-6, groups' uniform run at the default: no --delta puts both on one
    axis (it labelled the 1e-6 run 'delta = 1e-5')."""
    groups_delta = json.loads(open(plot_runs["groups_json"], encoding="utf-8").read())["delta"]
    assert groups_delta != 1e-6
    out = tmp_path / "h.png"
    args = [plot_runs["confident"], plot_runs["groups"], "--summary",
            plot_runs["confident_json"], "--summary", plot_runs["groups_json"]]
    for delta in ([], ["--delta", "1e-6"], ["--delta", f"{groups_delta:g}"]):
        err = _refused(cli.plot("history", *args, *delta, "-o", out), "different delta",
                       "separately")
        assert "pick one" not in err
    assert not out.exists()


def test_tradeoff_delta_is_its_tables_and_delta_must_agree(plot_runs, tmp_path, cli):
    sweep = plot_runs["sweep_frame"]
    recorded = tmp_path.parent / "sweep_delta.csv"
    sweep.assign(delta=1e-5).to_csv(recorded, index=False)
    out = tmp_path / "t.svg"
    _refused(cli.plot("tradeoff", recorded, "--delta", "0.5", "-o", out), "--delta 0.5",
             "1e-05")
    assert not out.exists()
    assert cli.plot("tradeoff", recorded, "--delta", "1e-5", "-o", out).code == 0
    assert "= 1e-5" in _axis_labels(out.read_text())
    mixed = tmp_path.parent / "sweep_delta_6.csv"
    sweep.assign(delta=1e-6).to_csv(mixed, index=False)
    out.unlink()
    for delta in ([], ["--delta", "1e-6"]):
        err = _refused(cli.plot("tradeoff", recorded, mixed, *delta, "-o", out),
                       "different delta", "separately")
        assert "give --delta" not in err
    # a table without a delta column: --delta labels it
    assert cli.plot("tradeoff", plot_runs["sweep"], "--delta", "0.001", "-o", out).code == 0
    assert "= 0.001" in _axis_labels(out.read_text())


@pytest.mark.parametrize("kind", ["history", "groups", "partition", "tradeoff"])
def test_delta_help_says_it_labels_tables_without_one(kind, cli):
    text = " ".join(cli.plot(kind, "--help").out.split())
    assert "do not record" in text and "must agree" in text


# --- captions name the figure they show ------------------------------------------------------

def _caption(svg_path) -> str:
    return " ".join(_axis_labels(svg_path.read_text()).split())


def test_history_caption_of_a_data_dependent_run_says_unsanitised(plot_runs, tmp_path, cli):
    out = tmp_path / "h.svg"
    for kind in ("history", "partition"):
        assert cli.plot(kind, plot_runs["confident"], "--summary", plot_runs["confident_json"],
                        "-o", out).code == 0
        text = _caption(out)
        assert "(the per-query table's RDP figure; data-dependent, unsanitised: not for " \
               "publication)" in text, text
    assert cli.plot("history", plot_runs["confident"], "-o", out).code == 0
    text = _caption(out)  # no summary: what the run was is not known, so it may be
    assert ("(the per-query table's RDP figure; its accounting is not known without the "
            "run's summary: if data-dependent, unsanitised, not for publication)") in text, text


def test_history_caption_of_a_pld_run_names_the_accountants(tmp_path, cli):
    from pate_cli.rounding import ceil_text
    table, summary_path = tmp_path / "g.csv", tmp_path / "g.json"
    assert cli.analyze(SAMPLES / "mnist_250_votes.npy", "-n", "2000", "-m", "gnmax",
                       "--sigma", "40", "--accounting", "data-independent", "--per-query",
                       table, "-f", "json", "-o", summary_path).code == 0
    summary = json.loads(summary_path.read_text())
    assert summary["epsilon_method"] == "pld" and summary["epsilon"] < summary["epsilon_rdp"]
    out = tmp_path / "h.svg"
    assert cli.plot("history", table, "--summary", summary_path, "-o", out).code == 0
    text = _caption(out)
    assert (f"final epsilon {ceil_text(summary['epsilon_rdp'], 4)} (the per-query table's "
            f"RDP figure; the summary's epsilon, {ceil_text(summary['epsilon'], 4)}, is the "
            "PLD (privacy-loss distribution) accountant's)") in text, text
    assert "unsanitised" not in text


def test_groups_caption_of_a_data_dependent_run_says_unsanitised(plot_runs, tmp_path, cli):
    out = tmp_path / "g.svg"
    assert cli.plot("groups", plot_runs["groups"], "--summary", plot_runs["groups_json"],
                    "-o", out).code == 0
    assert "RDP figures; data-dependent, unsanitised: not for publication" in _caption(out)


@pytest.mark.parametrize("key", ["tuning", "answered", "labels_output", "smooth_sensitivity",
                                 "epsilon_rdp", "multilabel", "budget", "groups"])
def test_a_summary_key_of_another_json_type_is_refused(key, plot_runs, tmp_path, cli):
    """A list where a number or an object belongs was 'unexpected AttributeError' or
    'TypeError' (exit 1) in tradeoff-curve and history --summary: one line naming the
    file and the key, nothing drawn."""
    damaged, out = tmp_path / "damaged.json", tmp_path / "f.png"
    summary = json.loads(plot_runs["confident_json"].read_text())
    damaged.write_text(json.dumps({**summary, key: [1]}))
    for command in (["tradeoff-curve", damaged], ["history", plot_runs["confident"],
                                                  "--summary", damaged]):
        err = _refused(cli.plot(*command, "-o", out), str(damaged), f"'{key}")
        assert "[1]" in err or "got 1" in err
        assert not out.exists()
