"""The one SIGTERM handler (pate_cli/interrupts.py): its states, and what forked workers do."""

from __future__ import annotations

import os
import signal

import pytest

from pate_cli.interrupts import SigtermSwitch, Terminated, sigterm_switch


def test_armed_switch_raises_at_every_sigterm():
    with sigterm_switch() as switch:
        for _ in range(2):
            with pytest.raises(Terminated):
                switch.handle(signal.SIGTERM, None)


def test_a_sigterm_before_arming_is_raised_by_arm_and_once_means_once():
    switch = SigtermSwitch(armed=False, once=True)
    switch.handle(signal.SIGTERM, None)  # remembered, not raised
    with pytest.raises(Terminated):
        switch.arm()
    switch.handle(signal.SIGTERM, None)  # over: ignored
    assert switch.over


def test_disarmed_switch_ignores_sigterm():
    switch = SigtermSwitch(armed=True, once=False)
    switch.disarm()
    switch.handle(signal.SIGTERM, None)
    switch.arm()  # a SIGTERM that came while over is not replayed


def test_real_sigterm_raises_inside_and_the_previous_handler_comes_back():
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(Terminated), sigterm_switch():
        os.kill(os.getpid(), signal.SIGTERM)
    assert signal.getsignal(signal.SIGTERM) == before


def test_a_forked_worker_dies_of_sigterm():
    with sigterm_switch():
        child = os.fork()
        if child == 0:  # the worker: the inherited handler must not raise here
            os.kill(os.getpid(), signal.SIGTERM)
            os._exit(0)  # reached only if SIGTERM did not kill it
        _, status = os.waitpid(child, 0)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGTERM
