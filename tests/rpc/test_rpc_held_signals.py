"""rpc/held_signals.py in a real process: a stop signal held while nothing served is delivered
at the block's end (the process stops as it would have), and the handlers it replaced are
back, an ignored one still ignored."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(REPO)}


def _stops_default() -> None:
    """A suite run under `nohup` passes SIGHUP on ignored, and one started as a background job
    of a non-interactive shell (as CI's runner starts it) SIGINT; an ignored one stays so."""
    for signum in (signal.SIGHUP, signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, signal.SIG_DFL)

HELD = """
import os, signal, sys
from rpc import holding_signals, shutdown_signals
with holding_signals(shutdown_signals()):
    os.kill(os.getpid(), signal.{name})
    print("held", flush=True)
print("not reached", flush=True)
"""


@pytest.mark.parametrize("name", ["SIGTERM", "SIGHUP", "SIGINT"])
def test_a_signal_held_and_not_taken_is_delivered_at_the_end(name: str) -> None:
    run = subprocess.run([sys.executable, "-c", HELD.format(name=name)], cwd=REPO,
                         capture_output=True, text=True, timeout=60, env=ENV,
                         preexec_fn=_stops_default)
    assert run.stdout == "held\n", run.stderr
    if name == "SIGINT":  # Python's own handler is back: KeyboardInterrupt
        assert "KeyboardInterrupt" in run.stderr
    else:
        assert run.returncode == -getattr(signal, name)


def test_handlers_are_put_back_and_an_ignored_signal_stays_ignored() -> None:
    code = """
import signal
from rpc import holding_signals, shutdown_signals
signal.signal(signal.SIGHUP, signal.SIG_IGN)
before = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)}
with holding_signals(shutdown_signals()):
    assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
    assert signal.getsignal(signal.SIGTERM) is not before[signal.SIGTERM]
assert {s: signal.getsignal(s) for s in before} == before
print("ok")
"""
    run = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                         text=True, timeout=60, env=ENV)
    assert run.stdout == "ok\n", run.stderr
