"""``pate-calibrate``'s output: ``Calibration.to_dict`` as the aligned table or JSON text."""

from __future__ import annotations

import json
from functools import partial

from ..rounding import ceil_text, exact_text, limit_digits, limit_text
from .writing import utf8_text


def render_calibration(summary: dict, fmt: str) -> str:
    """``summary`` as ``fmt``: ``table`` (aligned lines) or ``json``."""
    if fmt == "json":
        return json.dumps(summary, indent=2, allow_nan=False) + "\n"
    return utf8_text(_table(summary))  # a file name that is not UTF-8 as JSON gives it


def _table(s: dict) -> str:
    params = ", ".join(f"{key}={value}" if isinstance(value, str) else f"{key}={exact_text(value)}"
                       for key, value in s["params"].items()
                       if (key, value) != ("screening", "exact"))  # the default: unsaid
    solved, up = s["solved"], partial(ceil_text, digits=limit_digits(s["target"]["value"]))
    name = "scale factor" if solved["scale_all"] else solved["parameter"]
    answered = s["answered"]
    answered_text = (f"{answered:.1f} expected of {s['queries']} queries"
                     if isinstance(answered, float)
                     else f"{answered} of {s['queries']} queries (replay, seed {s['seed']}); "
                          f"{s['answered_expected']:.1f} expected")
    lines = [
        ("target", f"{_target(s['target'], up.keywords['digits'])} "
                   + (f"at delta {s['delta']:g} " if s["target"]["quantity"] == "epsilon"
                      else "") + f"({s['accounting']} accounting)"),
        ("solved", f"{name} {exact_text(solved['value'])} ({s['analyses']} analyses, relative step "
                   f"{_step(s)})"),
        ("mechanism", f"{s['mechanism']} ({params})"),
        ("epsilon", f"{up(s['epsilon'])} ({_method(s)})"
         + ("" if s["above"] is None or s["above"]["epsilon"] is None else
            f"; {name} {exact_text(s['above']['value'])} gives {up(s['above']['epsilon'])}")),
        ("answered", answered_text),
    ]
    if s["target"]["quantity"] != "epsilon":
        lines.insert(4, ("attack risk", _risk(s, up)))
    if s["epsilon_method"] == "pld" and s.get("epsilon_rdp") is not None:
        # the RDP figure of the same parameters, with the order it belongs to
        lines.insert(4, ("epsilon RDP", f"{ceil_text(s['epsilon_rdp'])} ({s['conversion']} "
                                        f"conversion, order {s['order']:g}): the RDP "
                                        "accountant's figure for the same noise"))
    if s["label_accuracy"] is not None:
        lines.append(("label accuracy", f"{s['label_accuracy']:.4f}"))
    lines.append(("command", s["command"]))
    width = max(len(key) for key, _ in lines)
    return "\n".join(f"{key:<{width}}  {value}" for key, value in lines) + "\n"


def _step(s: dict) -> str:
    """The relative step the table states: ``--tolerance``, unless the search stopped
    above it (values of 6 significant digits), then the step it reached."""
    reached = s.get("relative_step")
    if reached is None or reached <= s["tolerance"]:
        return f"{s['tolerance']:g}"
    return f"{reached:.2g}"


def _target(target: dict, digits: int) -> str:
    """``epsilon 2``, ``TPR 0.05 at FPR 0.01`` or ``advantage 0.1``."""
    if target["quantity"] == "tpr":
        return f"TPR {limit_text(target['value'], digits)} at FPR {target['at_fpr']:g}"
    return f"{target['quantity']} {limit_text(target['value'], digits)}"


def _risk(s: dict, up) -> str:
    """The attack risk reached (math:risk), rounded up (``up``), with the next smaller
    noise's figure: the TPR bound at the target's FPR or the advantage bound."""
    target, risk, above = s["target"], s["risk"], s["above"]
    if target["quantity"] == "tpr":
        text = f"TPR <= {up(s['reached'])} at FPR {target['at_fpr']:g}"
    else:
        text = f"advantage <= {up(s['reached'])}"
    text += f" ({risk['source'].upper()}" + (
        "" if risk["mu"] is None else f", mu {ceil_text(risk['mu'])}") + (
        ", data-dependent, unsanitised" if risk["data_dependent"] else "") + ")"
    if above is not None:
        name = "scale factor" if s["solved"]["scale_all"] else s["solved"]["parameter"]
        text += f"; {name} {exact_text(above['value'])} gives {up(above['figure'])}"
    return text


def _method(s: dict) -> str:
    """What gave the epsilon printed beside it, with the order that belongs to it."""
    if s.get("every_query_answered"):  # a selection step's count: the bound for any run
        return (("privacy-loss distribution accountant" if s["epsilon_method"] == "pld" else
                 f"RDP, {s['conversion']} conversion, order {s['order']:g}")
                + ", every query answered: the bound for any run")
    if s["epsilon_method"] == "pld":
        return "privacy-loss distribution accountant"
    if s["epsilon_method"] == "pure":
        return "pure-DP bound"
    return (f"RDP, {s['conversion']} conversion, order {s['order']:g}"
            + ("; data-dependent, unsanitised" if s["accounting"] != "data-independent"
               else ""))
