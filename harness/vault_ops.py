"""The vault operations every surface shares, and the one thread they run on.

`VaultCalls` turns checked arguments (harness.validate, through the operation table) into Vault
facade calls; each returns a JSON-safe value. All facade calls run on one dedicated thread
(`VaultThread`): the facade and its SQLite connection are used by one thread at a time, in
arrival order, whichever surface called. A call made by a sandbox host call carries that host
call's stop test to the vault (`vault.cancellable`), so the sandbox can stop abandoned work.
"""

from __future__ import annotations

import concurrent.futures
import contextvars
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

from vault import Edit, NoteRecord, QuotaExceeded, Vault, cancellable

from .extraction import Extract
from .fact_tools import correct_note, label_hits, why_note
from .vault_list import Listings, browse

T = TypeVar("T")

# The most items a links/backlinks/neighbors result may hold (a hub's lists are refused with
# QuotaExceeded before they are built, rather than built and refused at the frame cap).
MAX_RESULT_ITEMS = 10_000


class VaultThread:
    """A single worker thread that runs every Vault call, in submission order."""

    def __init__(self) -> None:
        self._ident: int | None = None
        self._pool = concurrent.futures.ThreadPoolExecutor(
            1, thread_name_prefix="rmh-vault", initializer=self._mark
        )

    @classmethod
    def inline(cls) -> VaultThread:
        """The calling thread as the vault thread: `call` runs inline (a CLI command, which
        uses the vault from its one thread and never from the event loop)."""
        thread = cls()
        thread._ident = threading.get_ident()
        return thread

    def _mark(self) -> None:
        self._ident = threading.get_ident()

    def call(self, fn: Callable[..., T], *args: Any) -> T:
        """Run `fn(*args)` on the vault thread and wait (inline when already on it); under a
        sandbox host call, stoppable at the vault's checkpoints (sandbox.host_call_stop)."""
        stop = _host_call_stop()
        if stop is not None:
            fn = _stoppable(fn, stop)
        if threading.get_ident() == self._ident:
            return fn(*args)
        return self._pool.submit(fn, *args).result()

    async def acall(self, fn: Callable[..., T], *args: Any) -> T:
        """Run `fn(*args)` on the vault thread without blocking the event loop.

        The job is queued before the first await, so requests' vault calls run in the order
        the requests started. The caller's context variables go with it."""
        future = self.submit(fn, *args)
        import asyncio  # (not at import: a CLI command never calls from a loop)

        # Awaited on the loop itself (no worker thread waits on it: one hand-off fewer per
        # request); shielded, so a cancelled caller never stops a started job halfway. A job
        # that has not started when its caller is cancelled is dropped: it was answered
        # cancelled, and SIGTERM with the 64 slots' searches queued held `rmh serve` for
        # minutes (the session end queued behind them, each run for nobody: PROTO3). The
        # caller of a change waits shielded (binding.py), so a change is never dropped so.
        try:
            return await asyncio.shield(asyncio.wrap_future(future))
        except asyncio.CancelledError:
            future.cancel()  # no effect once it runs
            raise

    def submit(self, fn: Callable[..., T], *args: Any) -> concurrent.futures.Future[T]:
        """Queue `fn(*args)` on the vault thread, with the caller's context variables."""
        return self._pool.submit(contextvars.copy_context().run, fn, *args)

    def close(self) -> None:
        self._pool.shutdown(wait=True)


def _host_call_stop() -> Callable[[], bool] | None:
    """The stop test of the sandbox host call running on this thread, if any
    (sandbox.host_call_stop). Host calls exist only once the sandbox is loaded, so a CLI
    command, which never loads it, does not import it here."""
    sandbox = sys.modules.get("sandbox")
    if sandbox is None:
        return None
    stop: Callable[[], bool] | None = sandbox.host_call_stop()
    return stop


def _stoppable(fn: Callable[..., T], stop: Callable[[], bool]) -> Callable[..., T]:
    def run(*args: Any) -> T:
        with cancellable(stop):
            return fn(*args)

    return run


@dataclass
class WriteTicket:
    """A write budget handed to the vault writes of one call (harness/write_quota.py):
    `limit` is the most bytes the note may hold after the write (what the quota has left);
    the write sets `size` to the note's size after it (what the quota then charges). A write
    over `limit` is refused before any new text is built."""

    limit: int
    size: int | None = None
    notes: tuple[str, ...] | None = None  # a writer of several notes (correct): their paths


_TICKET: contextvars.ContextVar[WriteTicket | None] = contextvars.ContextVar(
    "rmh_write_ticket", default=None)


@contextmanager
def write_ticket(limit: int) -> Iterator[WriteTicket]:
    """Bind the writes made in this context (this thread) to a ticket of `limit` bytes."""
    ticket = WriteTicket(limit)
    token = _TICKET.set(ticket)
    try:
        yield ticket
    finally:
        _TICKET.reset(token)


def written(record: NoteRecord) -> dict[str, Any]:
    """What a write or edit returns: where the note is and the hash of its new bytes, and a
    `warning` when a step after the write failed (a full disk: it landed, not yet indexed or
    learned from)."""
    out = {"note": record.note, "id": record.id, "title": record.title, "hash": record.hash}
    return {**out, "warning": record.warning} if record.warning else out


class VaultCalls:
    """JSON-out vault operations for one connection, on the vault thread.

    Arguments are already checked (the operation table's parameters); internal callers such as
    the ask loop pass values they built. `session()` returns the open session id (or None) so
    usage is attributed to it. Methods are blocking and safe from any thread.
    """

    def __init__(self, vault: Vault, thread: VaultThread, session: Callable[[], str | None],
                 extract: Extract | None = None):
        self.vault = vault
        self.thread = thread
        self.session = session
        self.extract = extract  # `[extract] entities` for ingests (None: "auto")
        self.listings = Listings()  # used on the vault thread only

    def search(self, query: str, k: int = 10, explain: bool = False,
               as_of: float | None = None, learn: bool = True,
               history: bool = False) -> dict[str, Any]:
        """Compact hits (note, title, score, id, snippet, date/speaker); receipts and the stage
        report only with `explain`. With `learn` False or `as_of` it records nothing (and opens
        no session). Fact hits carry their `trust`; rejected or superseded facts only with
        `history` (after the current ones)."""
        records = learn and as_of is None
        sid = self.session() if records else None
        return self.thread.call(lambda: label_hits(self.vault, self.vault.search(
            query, k, session=sid, as_of=as_of, learn=learn, history=history
        ).to_json(receipt=explain)))

    def correct(self, note: str, action: str, value: str | None = None, reason: str = "",
                by: str = "agent") -> dict[str, Any]:
        """Confirm, reject or supersede a fact note (harness.fact_tools.correct_note); under a
        write ticket, reports the notes it wrote and their sizes after."""
        done = self.thread.call(lambda: correct_note(self.vault, note, action, value=value,
                                                     reason=reason, by=by))
        ticket = _TICKET.get()
        if ticket is not None:
            paths = tuple(str(p) for p in done["written"])
            ticket.notes = tuple(p.lower() for p in paths)
            ticket.size = sum(self.thread.call(lambda: [
                self.vault.read(p, learn=False).size for p in paths]))
        return done

    def why(self, note: str) -> dict[str, Any]:
        """Where `note` came from and what it was used for (harness.fact_tools.why_note)."""
        return self.thread.call(lambda: why_note(self.vault, note))

    def read(self, note: str, learn: bool = True) -> dict[str, Any]:
        sid = self.session() if learn else None
        return self.thread.call(lambda: self.vault.read(note, session=sid, learn=learn).to_json())

    def shown(self, query: str, notes: Sequence[str]) -> None:
        """Log `notes` as shown for `query` (Vault.shown), in the open session."""
        sid = self.session()
        self.thread.call(lambda: self.vault.shown(query, list(notes), session=sid))

    def write(self, note: str, content: str, overwrite: bool = False,
              expected_hash: str | None = None) -> dict[str, Any]:
        """Create a note; replace one only with `overwrite` or the `expected_hash` it was
        read with (EditConflict when the file changed since)."""
        ticket = _TICKET.get()
        if ticket is not None:
            size = len(content.encode("utf-8", "surrogatepass"))
            if size > ticket.limit:
                raise QuotaExceeded(f"bytes written: the note would be {size} bytes",
                                    ticket.limit)
        sid = self.session()
        record = self.thread.call(lambda: self.vault.write(
            note, content, session=sid, overwrite=overwrite, expected_hash=expected_hash))
        if ticket is not None:
            ticket.size = record.size
        return written(record)

    def edit(self, note: str, kind: Any, text: str = "", heading: str | None = None,
             find: str | None = None, expected_count: int = 1,
             expected_hash: str | None = None) -> dict[str, Any]:
        """Apply one edit to a note (vault.Edit of `kind`, `text`, `heading`, `find`,
        `expected_count`), guarded by `expected_hash` when given; under a write ticket,
        refused (QuotaExceeded) before the new text is built when the note would be larger
        than the ticket allows."""
        change = Edit(kind, text, heading=heading, find=find, expected_count=expected_count)
        ticket = _TICKET.get()
        limit = None if ticket is None else ticket.limit
        sid = self.session()
        record = self.thread.call(lambda: self.vault.edit(
            note, change, session=sid, expected_hash=expected_hash, max_bytes=limit))
        if ticket is not None:
            ticket.size = record.size
        return written(record)

    def move(self, note: str, new: str) -> dict[str, Any]:
        return self.thread.call(lambda: self.vault.move(note, new).to_json())

    def delete(self, note: str) -> dict[str, Any]:
        """{"note": the deleted note's path (as write and move return it), "trash": where it is}."""

        def run() -> dict[str, Any]:
            path = self.vault.path_of(self.vault.resolve(note, as_link=False))
            return {"note": path, "trash": self.vault.delete(path)}

        return self.thread.call(run)

    # Without `limit` more than MAX_RESULT_ITEMS items is QuotaExceeded; with it, one page
    # of at most `limit` from `offset` on (a hub's 50,000 backlinks in pages).
    def links(self, note: str, limit: int | None = None, offset: int = 0) -> list[dict[str, Any]]:
        return self.thread.call(lambda: [ln.to_json() for ln in self.vault.links(
            note, limit=MAX_RESULT_ITEMS, offset=offset, count=limit)])

    def backlinks(self, note: str, limit: int | None = None, offset: int = 0) -> list[str]:
        return self.thread.call(lambda: list(self.vault.backlinks(
            note, limit=MAX_RESULT_ITEMS, offset=offset, count=limit)))

    def neighbors(self, note: str, hops: int = 1, limit: int | None = None,
                  offset: int = 0) -> list[str]:
        return self.thread.call(lambda: list(self.vault.neighbors(
            note, hops, limit=MAX_RESULT_ITEMS, offset=offset, count=limit)))

    def browse(self, what: str = "notes", folder: str = "", tag: str | None = None,
             limit: int = 50, cursor: str | None = None) -> dict[str, Any]:
        """One page of folders, a folder's notes, tags or recent changes (harness.vault_list)."""
        return self.thread.call(lambda: browse(self.vault, what, folder, tag, limit, cursor,
                                               self.listings))

    def note_paths(self) -> list[str]:
        """Every note's path, sorted (cached per index generation)."""
        return self.thread.call(lambda: list(self.listings.paths(self.vault)))

    def document_frequency(self, tokens: Sequence[str]) -> list[int]:
        """How many notes hold each token (the search index's n_t; the ask loop's rarity)."""
        return self.thread.call(lambda: self.vault.document_frequency(list(tokens)))


class UnrecordedVault:
    """The vault as the ask loop sees it: its inner searches and reads teach nothing, since
    the agent never saw them; the loop's answer set is logged once, as one retrieval of the
    question by the caller (`VaultCalls.shown`)."""

    def __init__(self, ops: VaultCalls) -> None:
        self.ops = ops

    def search(self, query: Any, k: Any = 10) -> dict[str, Any]:
        return self.ops.search(str(query), int(k), learn=False)

    def read(self, note: Any) -> dict[str, Any]:
        return self.ops.read(str(note), learn=False)

    def neighbors(self, note: Any, hops: Any = 1) -> list[str]:
        return self.ops.neighbors(str(note), int(hops))

    def document_frequency(self, tokens: Any) -> list[int]:
        return self.ops.document_frequency([str(t) for t in tokens])
