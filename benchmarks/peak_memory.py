"""Peak resident memory of this process, for the benchmarks' child processes.

``VmHWM`` from ``/proc/self/status`` (Linux): the high-water mark of this process's own
address space since it was exec'd. Not ``ru_maxrss``: a child that Python's subprocess
starts with ``vfork`` inherits, over ``exec``, the parent's peak (measured here: a child
reading a 2 GB file reported 2.1 GB because its parent had just written that file, 0.5 GB
otherwise). Elsewhere ``ru_maxrss`` is the fallback.
"""

from __future__ import annotations

import resource
import sys


def peak_mb() -> float:
    """Peak resident set size of this process so far, in MB (MiB)."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0  # kB
    except OSError:
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024.0 * 1024.0) if sys.platform == "darwin" else peak / 1024.0
