"""The f-DP trade-off curve a run's guarantee implies (math:risk), from its JSON summary.

A summary's ``risk`` objects bound ``TPR <= 1 - f(alpha)`` at a grid of FPRs ``alpha``; drawn
as type II error ``beta = 1 - TPR`` against ``alpha``, with the exact mu-GDP curve
``Phi(Phi^-1(1 - alpha) - mu)`` where it applies and the diagonal ``beta = 1 - alpha``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from ..accounting.risk import gaussian_tpr
from ..rounding import ceil_text
from .figure_style import GREY, PALETTE, Style, finish_figure, new_figure, plain_log_labels

if TYPE_CHECKING:
    from matplotlib.figure import Figure

# The mu-GDP curve's and diagonal's alphas: 1e-6..1, 50 a decade (--log); 0..1 by 0.002.
FINE_ALPHAS = np.unique(np.concatenate([np.logspace(-6.0, 0.0, 301),
                                        np.linspace(0.0, 1.0, 501)]))
# The smallest alpha of a logarithmic axis: the summaries' curves start at 1e-6.
LOG_ALPHA = 1e-6
SOURCES = {"pld": "PLD", "rdp": "RDP", "pure": "pure DP"}


@dataclass(frozen=True)
class CurveLine:
    """One line: ``kind`` is ``publishable``, ``data-dependent`` or ``gdp``; ``alpha`` the type
    I errors (FPRs), ``beta`` the type II errors (1 - TPR)."""

    kind: str
    label: str
    alpha: np.ndarray
    beta: np.ndarray


def with_published_risk(summary: dict) -> dict:
    """``summary``, or a copy whose ``risk_data_independent`` is a tuned run's search's
    (``tuning.risk``: its epsilon includes the search, so its risk does, math:tuning)."""
    tuning = summary.get("tuning")
    if isinstance(tuning, dict) and tuning.get("risk") is not None:
        return {**summary, "risk_data_independent": tuning["risk"]}
    return summary


def risk_problem(risk) -> str | None:
    """Why a summary's ``risk`` object is unusable for a figure, as a short phrase; None for one
    with a curve of probabilities, ``tpr_at_fpr`` and ``advantage``."""
    if not isinstance(risk, dict):
        return "not an object"
    curve = risk.get("tradeoff")
    if not isinstance(curve, dict) or not all(isinstance(curve.get(key), list)
                                              for key in ("fpr", "tpr")):
        return "no tradeoff curve with fpr and tpr lists"
    if len(curve["fpr"]) != len(curve["tpr"]) or len(curve["fpr"]) < 2:
        return "tradeoff.fpr and tradeoff.tpr differ in length or hold fewer than 2 values"
    if not isinstance(risk.get("tpr_at_fpr"), dict):
        return "no tpr_at_fpr object"
    points = [*curve["fpr"], *curve["tpr"], risk.get("advantage"),
              *risk["tpr_at_fpr"].values()]
    if not all(_probability(value) for value in points):
        return "a rate that is not a number in [0, 1]"
    try:
        [float(key) for key in risk["tpr_at_fpr"]]
    except ValueError:
        return "a tpr_at_fpr key that is not a false-positive rate"
    mu = risk.get("mu")
    if mu is not None and not (_number(mu) and mu >= 0 and math.isfinite(mu)):
        return "mu is not a non-negative number"
    return None


def _number(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _probability(value) -> bool:
    return _number(value) and 0.0 <= value <= 1.0


def curve_lines(summary: dict, name: str = "", *, dependent: bool = True) -> list[CurveLine]:
    """The lines :func:`tradeoff_curve_figure` draws for one run.

    Args:
      summary: a JSON summary with a usable ``risk_data_independent`` (``risk_problem``).
      name: the legend label prefixed to each line's (none if empty).
      dependent: also ``risk``'s curve when it is data-dependent.

    Returns:
      The publishable curve, the data-dependent one (when drawn), then the exact mu-GDP
      curve where ``mu`` is set.
    """
    prefix = f"{name}: " if name else ""
    independent = summary["risk_data_independent"]
    source = SOURCES.get(str(independent["source"]), str(independent["source"]))
    tuning = summary.get("tuning")
    searched = isinstance(tuning, dict) and tuning.get("risk") is not None
    one_run = searched and independent != tuning["risk"]  # (with_published_risk: the search's)
    lines = [_line("publishable", f"{prefix}one run, without its --tuning search (not "
                   f"publishable; {source})" if one_run else f"{prefix}publishable ({source})",
                   independent)]
    risk = summary.get("risk")
    if dependent and isinstance(risk, dict) and risk.get("data_dependent"):
        lines.append(_line("data-dependent", f"{prefix}data-dependent (unsanitised)", risk))
    if independent.get("mu") is not None:
        mu = float(independent["mu"])
        lines.append(CurveLine("gdp", f"{prefix}mu-GDP, mu = {ceil_text(mu)}", FINE_ALPHAS,
                               1.0 - gaussian_tpr(mu, FINE_ALPHAS)))
    return lines


def _line(kind: str, label: str, risk: dict) -> CurveLine:
    alpha = np.asarray(risk["tradeoff"]["fpr"], dtype=np.float64)
    beta = 1.0 - np.asarray(risk["tradeoff"]["tpr"], dtype=np.float64)
    order = np.argsort(alpha, kind="stable")
    return CurveLine(kind, label, alpha[order], beta[order])


def reported_points(risk: dict) -> tuple[np.ndarray, np.ndarray]:
    """``(alpha, beta)`` at the reported FPRs: each key of ``tpr_at_fpr`` and 1 - its TPR."""
    alpha = np.array([float(key) for key in risk["tpr_at_fpr"]], dtype=np.float64)
    beta = 1.0 - np.array(list(risk["tpr_at_fpr"].values()), dtype=np.float64)
    return alpha, beta


STYLES = {"publishable": {"linestyle": "-", "linewidth": 2.0, "alpha": 0.75, "zorder": 2},
          "data-dependent": {"linestyle": "--", "linewidth": 1.5, "zorder": 3},
          "gdp": {"linestyle": ":", "linewidth": 1.6, "zorder": 4}}


def tradeoff_curve_figure(runs, *, log: bool = False, dependent: bool = True,
                          caption: str = "", style: Style = Style()) -> Figure:
    """The f-DP trade-off curves of one or more runs (math:risk).

    Args:
      runs: ``(label, summary)`` pairs, each summary with an attack risk.
      log: a logarithmic type I error axis from ``LOG_ALPHA`` (``style.logy``: type II too).
      dependent: draw each data-dependent curve (dashed, labelled unsanitised).
      caption, style: the line under the plot; the look (``figure_style.Style``).

    Returns:
      The figure: per run its lines (gids ``<kind>-<n>``) and reported FPRs (gid
      ``reported-<n>``), and the diagonal ``beta = 1 - alpha``.
    """
    figure, axes = new_figure(style)
    axes.plot(FINE_ALPHAS, 1.0 - FINE_ALPHAS, color=GREY, linewidth=0.8,
              label="no privacy loss ($\\beta$ = 1 $-$ $\\alpha$)", gid="diagonal", zorder=1)
    for number, (name, summary) in enumerate(runs):
        colour = PALETTE[number % len(PALETTE)]
        for line in curve_lines(summary, name, dependent=dependent):
            axes.plot(line.alpha, line.beta, color=colour, label=line.label,
                      gid=f"{line.kind}-{number}", **STYLES[line.kind])
        alpha, beta = reported_points(summary["risk_data_independent"])
        fprs = " / ".join(f"{value:g}" for value in alpha)
        axes.plot(alpha, beta, marker="o", markersize=5, color=colour, linestyle="none",
                  markeredgecolor="black", zorder=5, gid=f"reported-{number}",
                  label=f"reported FPRs {fprs}" if number == 0 else None)
    from matplotlib.ticker import NullFormatter

    if log:  # six decades: major labels only
        axes.set_xscale("log")
        plain_log_labels(axes.xaxis)
        axes.xaxis.set_minor_formatter(NullFormatter())
    axes.set_xlim(LOG_ALPHA if log else 0.0, 1.0)
    if style.logy:  # new_figure made the y axis logarithmic
        axes.yaxis.set_minor_formatter(NullFormatter())
    axes.set_ylim(LOG_ALPHA if style.logy else 0.0, 1.0)
    # Every curve lies under the diagonal (f(alpha) <= 1 - alpha): the legend goes above it
    style = replace(style, legend=style.legend or ("lower left" if log else "upper right"))
    axes.set_xlabel("type I error $\\alpha$ (attacker's false-positive rate)")
    axes.set_ylabel("type II error $\\beta$ = 1 $-$ TPR (probability)")
    finish_figure(figure, axes, style, title="Trade-off curve: what a membership attacker can "
                  "reach", caption=caption)
    return figure
