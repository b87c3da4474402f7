"""Hostile conditions around the commands: outputs that cannot be written as asked,
signals arriving mid-run."""


def with_method(archive: bytes, method: int, *, member: int | None = None) -> bytes:
    """A zip ``archive`` with the compression method of each member (or of the ``member``-th
    only) set to ``method`` in its local and central headers, e.g. 9 (Deflate64), which
    Python's zipfile cannot read."""
    data = bytearray(archive)
    for signature, offset in ((b"PK\x03\x04", 8), (b"PK\x01\x02", 10)):
        at, number = data.find(signature), 0
        while at >= 0:
            if member is None or number == member:
                data[at + offset : at + offset + 2] = method.to_bytes(2, "little")
            at, number = data.find(signature, at + 4), number + 1
    return bytes(data)
