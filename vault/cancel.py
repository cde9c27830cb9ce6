"""Cooperative cancellation of long vault work (a cold build of the search structures).

A caller that may stop waiting binds a stop test to the work it starts: `with cancellable(stop):
vault.search(...)`. Long loops call `checkpoint()`, which raises `Cancelled` once the test is
true. Without a bound test (every caller but the sandbox's host calls) `checkpoint()` does
nothing, so results never depend on it: a search either finishes exactly as it would have, or
raises. Checkpoints sit only where what was built so far is either in memory and discarded on
the way out (the snapshot, a lexical index being built) or already whole on disk (the lexical
store saved right before its checkpoint, each slice of embeddings once it is in the cache), so
a cancel leaves nothing half-done, and the next search resumes from what was kept. An ingest
checks before each conversation, turn parsed and note written: it takes back the notes of the
conversation it was writing (`Vault.journalled`, whole), and raises `IngestStopped` naming
those of the conversations whole on disk (conversation/ingest.py).
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from .errors import Cancelled, VaultError

T = TypeVar("T")

_STOP: contextvars.ContextVar[Callable[[], bool] | None] = contextvars.ContextVar(
    "rmh_vault_stop", default=None)
EVERY = 256  # items between two checks in `checked`


@contextmanager
def cancellable(stop: Callable[[], bool]) -> Iterator[None]:
    """Bind `stop` (called often, from this thread: it must be cheap) to the work run in this
    block."""
    token = _STOP.set(stop)
    try:
        yield
    finally:
        _STOP.reset(token)


def checkpoint() -> None:
    """Raise `Cancelled` when the stop test bound to this work is true."""
    stop = _STOP.get()
    if stop is not None and stop():
        raise Cancelled()


def checked(items: Iterable[T]) -> Iterator[T]:
    """`items`, with a `checkpoint()` every `EVERY` items (and before the first)."""
    if _STOP.get() is None:
        yield from items
        return
    for i, item in enumerate(items):
        if i % EVERY == 0:
            checkpoint()
        yield item


class IngestStopped(Cancelled):
    """A `Cancelled` ingest, stopped between two notes (conversation/ingest.py): the `written`
    notes, of the conversations whole on disk, stay; the notes of the conversation it was
    writing were taken back; ingesting the same conversations again writes the rest, leaving
    the vault as one uninterrupted ingest would."""

    def __init__(self, written: tuple[str, ...], conversations: int, done: int) -> None:
        VaultError.__init__(self, f"ingest stopped: {len(written)} note(s) written, "
                            f"{done} of {conversations} conversation(s) whole; ingest the "
                            "same conversations again to finish")
        self.written, self.conversations, self.done = written, conversations, done

    def data(self) -> dict[str, object]:
        return {"stopped": True, "written": len(self.written),
                "written_notes": list(self.written[:50]),
                "conversations": self.conversations, "conversations_done": self.done}

