"""pate-audit's output: an ``AuditResult`` as the JSON summary of cli:json (key ``audit``) or
the aligned text table (cli:pate-audit). The measured ``epsilon_lower`` is never printed as a
guarantee: it is named a measurement with its confidence and draws, and rounded DOWN; the
claimed ``epsilon_upper`` UP.
"""

from __future__ import annotations

import json

from .._version import __version__
from ..analysis.audit import AuditResult
from ..rounding import ceil_text, floor_text
from .summary_json import plain_number


def audit_summary(result: AuditResult) -> dict:
    """The JSON summary of an audit (cli:json), with the provenance other commands record."""
    spec, votes, pair, event = result.spec, result.votes, result.pair, result.event
    measured = result.measurement
    return {
        "tool": "pate-audit",
        "version": __version__,
        "input": {"path": votes.path, "sha256": votes.sha256, "queries": votes.queries,
                  "classes": votes.classes, "teachers": plain_number(votes.teachers)},
        "mechanism": result.mechanism.name,
        "params": {key: plain_number(value) for key, value in result.mechanism.params.items()},
        "aggregator": {"name": result.audited, "sha256": result.aggregator_sha256},
        "seed": spec.seed,
        "audit": {
            "epsilon_lower": result.epsilon_lower,
            "epsilon_upper": result.epsilon_upper,
            "delta": spec.delta,
            "confidence": spec.confidence,
            "draws": spec.draws,
            "queries": spec.queries,
            "pair": {"kind": pair.kind, "first": pair.first.tolist(),
                     "second": pair.second.tolist(), "description": pair.description,
                     "query": spec.query,
                     "margin_search": None if pair.margin_search is None else {
                         "pilot_draws": pair.margin_search["pilot_draws"],
                         "chosen": pair.margin_search["chosen"],
                         "lower": {str(lead): value for lead, value
                                   in pair.margin_search["lower"].items()}}},
            "verdict": result.verdict,
            "upper_accountant": result.accountant,
            "event": {"labels": event.labels,
                      "favours": "first" if event.forward else "second",
                      "at_least" if event.above else "at_most": event.cut},
            "measured": {"draws": measured.of, "hits": measured.hits,
                         "other_hits": measured.other_hits, "p_lower": measured.p_lower,
                         "q_upper": measured.q_upper},
        },
    }


def render_audit(summary: dict, fmt: str) -> str:
    """``summary`` as ``fmt``: ``json`` text or the ``table`` a person reads."""
    if fmt == "json":
        return json.dumps(summary, indent=2, allow_nan=False) + "\n"
    audit = summary["audit"]
    params = ", ".join(f"{key}={value:g}" for key, value in summary["params"].items()
                       if not isinstance(value, str))
    audited = summary["aggregator"]["name"]
    audited = (f"pate_cli's replay of {summary['mechanism']}" if audited == "pate_cli"
               else f"{audited}, claiming {summary['mechanism']}")
    pair = audit["pair"]
    event, measured = audit["event"], audit.get("measured") or {}
    shown = ["none" if label == -1 else str(label) for label in event["labels"]]
    labels = ", ".join(shown[:12]) + (f", ... ({len(shown)} labels)" if len(shown) > 12 else "")
    queries = audit["queries"]
    if queries == 1:
        happens = f"output in {{{labels}}}"
    else:
        bound, cut = (("at least", event["at_least"]) if "at_least" in event
                      else ("at most", event["at_most"]))
        happens = f"{bound} {cut} of the {queries} outputs are {labels}"
    lower, upper = bounds_text(audit["epsilon_lower"], audit["epsilon_upper"])
    verdict = ("consistent: the measurement does not contradict the claim"
               if audit["verdict"] == "consistent" else
               "violated: the measured lower bound exceeds the claim")
    lines = [
        ("mechanism", f"{summary['mechanism']} ({params}), "
                      + ("one query" if queries == 1 else f"{queries} identical queries")),
        ("audited", f"{audited}, seed {summary['seed']}"),
        ("pair", f"{pair['kind']}: {pair['description']}"),
        ("", f"first  {_histogram(pair['first'])}"),
        ("", f"second {_histogram(pair['second'])}"),
        ("event", f"none that tells the pair apart: no candidate showed a difference on the "
                  f"choosing draws, and the first ({happens}) fell in no measuring draw"
                  if measured.get("hits") == 0 and measured.get("other_hits") == 0
         else f"{happens}, more frequent at the {event['favours']}" + (
             " in the choosing draws, as frequent at both in the measuring ones"
             if measured and measured.get("hits") == measured.get("other_hits") else "")),
        ("epsilon upper", f"{upper} at delta {audit['delta']:g}: "
                          f"the claim ({audit['upper_accountant']})"),
        ("epsilon lower", f"{lower}: measured lower bound "
                          f"(Clopper-Pearson, {_percent(audit['confidence'])}, "
                          + (f"{measured['draws']:,} of " if "draws" in measured else "")
                          + f"{audit['draws']:,} "
                          + ("draws" if queries == 1 else f"trials of {queries} queries")
                          + " per side" + ("; the others chose the event)" if "draws" in measured
                                           else ")")),
        ("verdict", verdict),
    ]
    width = max(len(key) for key, _ in lines)
    return "\n".join(f"{key:<{width}}  {value}".rstrip() for key, value in lines) + "\n"


def _percent(confidence: float) -> str:
    """``95%``; a confidence below 1 is never shown as 100% (0.999999999: 99.9999999%)."""
    for digits in range(3, 18):
        text = f"{100 * confidence:.{digits}g}"
        if float(text) < 100 or confidence >= 1:
            return text + "%"
    return f"{100 * confidence!r}%"


def _histogram(counts: list) -> str:
    """A histogram as ``125,124,1,0,...`` (long ones cut after 12 classes)."""
    shown = ",".join(str(count) for count in counts[:12])
    return shown + (f",... ({len(counts)} classes)" if len(counts) > 12 else "")


def bounds_text(lower: float, upper: float) -> tuple[str, str]:
    """The measured lower bound rounded down and the claim rounded up, at 4 decimals, or at
    as many more (up to 12) as show a lower bound above the claim above it (``1.0001`` and
    ``1.0000``, not ``1.0000`` twice)."""
    for digits in range(4, 13):
        low, up = floor_text(lower, digits), ceil_text(upper, digits)
        if not lower > upper or float(low) > float(up):
            break
    return low, up
