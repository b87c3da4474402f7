"""A run's decisions as the bytes ``--write-decisions`` writes, whole (the tests' form of
``outputs.decisions.decisions_chunks`` for one ``LabelDecisions``)."""

from __future__ import annotations

from pate_cli.outputs.decisions import decisions_chunks


def decisions_bytes(decisions, path: str) -> bytes:
    """``decisions`` (a ``LabelDecisions``) serialised for ``path``."""
    return b"".join(decisions_chunks([decisions], path, decisions.mechanism))
