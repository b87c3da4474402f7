"""Memory measured in a test: the peak of what numpy and Python allocate (tracemalloc
traces numpy's buffers; a memory-mapped input is not traced)."""

from __future__ import annotations

import tracemalloc


def traced_peak(run) -> int:
    """The peak traced bytes while ``run()`` runs."""
    tracemalloc.start()
    try:
        run()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
