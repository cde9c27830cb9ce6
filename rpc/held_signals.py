"""Stop signals that come while a server is still starting: held, then delivered to it.

`StdioServer` handles SIGTERM, SIGINT and SIGHUP only once it runs; `rmh serve` runs it after
loading its configuration and opening the vault (seconds on a large vault or a loaded machine).
A signal in between took the default action: SIGTERM and SIGHUP killed the process with no
answer for the requests the client had written, SIGINT ended it with exit 1 and none either
(RPC42, session 42: a SIGTERM 0.3-4 s after the start, load ~20, was -15 with nothing
answered, 21 of 21 times). `hold` records such a signal instead; `take` puts back the
handlers it replaced and returns what came, which the server delivers to itself once its own
handlers are in place, so the client gets the same answers as for a signal a moment later:
each request written before it answered -32091, exit 0.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any

_held: list[int] = []
Handler = Callable[[int, FrameType | None], Any] | int | None
_before: dict[signal.Signals, Handler] = {}


def _record(signum: int, frame: FrameType | None) -> None:
    _held.append(signum)


def hold(signals: tuple[signal.Signals, ...]) -> None:
    """Record `signals` from now until `take` (main thread only; elsewhere nothing happens:
    Python lets only the main thread set handlers). A signal that is ignored stays ignored."""
    if threading.current_thread() is not threading.main_thread():
        return
    for signum in signals:
        if signum in _before or signal.getsignal(signum) is signal.SIG_IGN:
            continue
        _before[signum] = signal.signal(signum, _record)


def take(restore: bool = True) -> tuple[int, ...]:
    """Put back the handlers `hold` replaced (`restore=False`: not; a server whose own
    handlers have replaced them already, so that no signal falls between the two); the
    signals recorded meanwhile, in order (each once: the first of a kind already stops a
    server). Main thread only, as `hold`."""
    if threading.current_thread() is not threading.main_thread():
        return ()
    for signum, handler in _before.items():
        if restore:
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)
    _before.clear()
    came = tuple(dict.fromkeys(_held))
    _held.clear()
    return came


@contextlib.contextmanager
def holding(signals: tuple[signal.Signals, ...]) -> Iterator[None]:
    """`hold` for the block; what a server in it did not `take` is then delivered as it
    would have been (a command that ended before serving: the process stops as before)."""
    hold(signals)
    try:
        yield
    finally:
        for signum in take():
            signal.raise_signal(signum)
