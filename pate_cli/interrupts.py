"""The one SIGTERM handler: SIGTERM raises ``Terminated`` (a ``KeyboardInterrupt``), so Ctrl-C's
cleanup runs for it too. ``sigterm_switch()`` installs a ``SigtermSwitch`` for a block: armed,
SIGTERM raises wherever the program is; not yet armed, it is remembered and raised by ``arm()``
(with ``once``, later ones are ignored while a stopped sweep writes its rows); a forked worker
dies of it as without the switch; off the main thread, no change.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived: raised like Ctrl-C's ``KeyboardInterrupt`` so cleanup runs."""


class SigtermSwitch:
    """What SIGTERM does while the switch is installed (see the module docstring)."""

    def __init__(self, *, armed: bool, once: bool):
        self.installer = os.getpid()
        self.armed, self.once = armed, once
        self.over = self.received = False

    def handle(self, signum, frame) -> None:
        if os.getpid() != self.installer:  # a forked worker inherited the handler
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGTERM)
            return
        if self.over:
            return
        self.received = True
        if self.armed:
            self._raise()

    def arm(self) -> None:
        """From now on SIGTERM raises; at once if one came before."""
        if self.received and not self.over:
            self._raise()
        self.armed = True

    def disarm(self) -> None:
        """From now on SIGTERM is ignored (until the switch is uninstalled)."""
        self.armed, self.over = False, True

    def _raise(self) -> None:
        if self.once:
            self.disarm()
        raise Terminated()


@contextlib.contextmanager
def sigterm_switch(*, armed: bool = True, once: bool = False) -> Iterator[SigtermSwitch]:
    """A ``SigtermSwitch`` handling SIGTERM inside the block (the previous handler after)."""
    switch = SigtermSwitch(armed=armed, once=once)
    if threading.current_thread() is not threading.main_thread():
        yield switch
        return
    previous = signal.signal(signal.SIGTERM, switch.handle)
    try:
        yield switch
    finally:
        switch.disarm()
        signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)
