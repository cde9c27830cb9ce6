"""The vault operations every surface shares, and the REPL's host-function table built on them.

`VaultOps` is the one place where arguments from outside (JSON-RPC params, MCP tool arguments,
REPL calls) are validated and turned into Vault facade calls; each returns a JSON-safe value.
All facade calls run on one dedicated thread (`VaultThread`): the facade and its SQLite
connection are used by one thread at a time, in arrival order, whichever surface called.

The REPL table is assembled from parts so later capabilities add a part, not an edit:
`build_functions(vault_functions(ops), llm_functions(broker), ...)`. Each host function's
docstring is what `help(name)` shows inside the REPL.
"""

from __future__ import annotations

import concurrent.futures
import functools
import threading
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import anyio

from sandbox import HostFunction, HostFunctionError
from vault import Vault, VaultError

T = TypeVar("T")

MAX_K = 100
MAX_HOPS = 3
MAX_TEXT = 4 * 1024 * 1024  # characters of note content accepted in one write


class BadArgument(ValueError):
    """An argument from outside is missing or has the wrong type/range; names the parameter."""

    def __init__(self, param: str, reason: str) -> None:
        super().__init__(f"{param}: {reason}")
        self.param = param
        self.reason = reason


def text_arg(param: str, value: Any, *, max_len: int = 10_000, empty: bool = False) -> str:
    """A string parameter, bounded in length."""
    if not isinstance(value, str):
        raise BadArgument(param, "must be a string")
    if not empty and not value.strip():
        raise BadArgument(param, "must not be empty")
    if len(value) > max_len:
        raise BadArgument(param, f"longer than {max_len} characters")
    return value


def int_arg(param: str, value: Any, lo: int, hi: int) -> int:
    """An integer parameter in [lo, hi] (booleans are not integers)."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise BadArgument(param, "must be an integer")
    if not lo <= value <= hi:
        raise BadArgument(param, f"must be between {lo} and {hi}")
    return value


class VaultThread:
    """A single worker thread that runs every Vault call, in submission order."""

    def __init__(self) -> None:
        self._ident: int | None = None
        self._pool = concurrent.futures.ThreadPoolExecutor(
            1, thread_name_prefix="rmh-vault", initializer=self._mark
        )

    def _mark(self) -> None:
        self._ident = threading.get_ident()

    def call(self, fn: Callable[..., T], *args: Any) -> T:
        """Run `fn(*args)` on the vault thread and wait (inline when already on it)."""
        if threading.get_ident() == self._ident:
            return fn(*args)
        return self._pool.submit(fn, *args).result()

    async def acall(self, fn: Callable[..., T], *args: Any) -> T:
        """Run `fn(*args)` on the vault thread without blocking the event loop.

        The job is queued before the first await, so requests' vault calls run in the order
        the requests started."""
        future = self._pool.submit(fn, *args)
        return await anyio.to_thread.run_sync(future.result, abandon_on_cancel=True)

    def close(self) -> None:
        self._pool.shutdown(wait=True)


class VaultOps:
    """Validated, JSON-in/JSON-out vault operations for one connection.

    `session()` returns the open session id (or None) so usage is attributed to it.
    Methods are blocking (they wait for the vault thread); async callers use `VaultThread`
    through `harness.methods`.
    """

    def __init__(self, vault: Vault, thread: VaultThread, session: Callable[[], str | None]):
        self.vault = vault
        self.thread = thread
        self.session = session

    def search(self, query: Any, k: Any = 10) -> dict[str, Any]:
        q = text_arg("query", query)
        n = int_arg("k", k, 1, MAX_K)
        sid = self.session()
        return self.thread.call(lambda: self.vault.search(q, n, session=sid).to_json())

    def read(self, note: Any) -> dict[str, Any]:
        name = text_arg("note", note, max_len=1_000)
        sid = self.session()
        return self.thread.call(lambda: self.vault.read(name, session=sid).to_json())

    def write(self, note: Any, content: Any) -> dict[str, Any]:
        name = text_arg("note", note, max_len=1_000)
        text = text_arg("content", content, max_len=MAX_TEXT, empty=True)
        sid = self.session()
        record = self.thread.call(lambda: self.vault.write(name, text, session=sid))
        return {"note": record.note, "id": record.id, "title": record.title}

    def move(self, note: Any, new: Any) -> dict[str, Any]:
        old = text_arg("note", note, max_len=1_000)
        dest = text_arg("new", new, max_len=1_000)
        return self.thread.call(lambda: self.vault.move(old, dest).to_json())

    def delete(self, note: Any) -> dict[str, Any]:
        name = text_arg("note", note, max_len=1_000)
        trash = self.thread.call(lambda: self.vault.delete(name))
        return {"note": name, "trash": trash}

    def links(self, note: Any) -> list[dict[str, Any]]:
        name = text_arg("note", note, max_len=1_000)
        return self.thread.call(lambda: [ln.to_json() for ln in self.vault.links(name)])

    def backlinks(self, note: Any) -> list[str]:
        name = text_arg("note", note, max_len=1_000)
        return self.thread.call(lambda: list(self.vault.backlinks(name)))

    def neighbors(self, note: Any, hops: Any = 1) -> list[str]:
        name = text_arg("note", note, max_len=1_000)
        n = int_arg("hops", hops, 1, MAX_HOPS)
        return self.thread.call(lambda: list(self.vault.neighbors(name, n)))


def vault_functions(ops: VaultOps) -> dict[str, HostFunction]:
    """The vault part of the REPL globals."""

    def search(query: str, k: int = 10) -> list[dict[str, Any]]:
        """search(query, k=10) -> list of hits, best first.

        Hybrid retrieval over the vault (keywords, meaning, links). Each hit is a dict:
        {"note": path, "title": ..., "score": ..., "id": ...}. Pass a hit's "note" to read().
        """
        hits: list[dict[str, Any]] = ops.search(query, k)["hits"]
        return [{key: h[key] for key in ("note", "title", "score", "id")} for h in hits]

    def read(note: str) -> dict[str, Any]:
        """read(note) -> dict with "note", "title", "text", "frontmatter", "tags", "links".

        `note` is a vault-relative path ("folder/Note.md" or "folder/Note") or a title/alias.
        Raises an error when no note, or more than one, matches.
        """
        return ops.read(note)

    def write(note: str, content: str) -> dict[str, Any]:
        """write(note, content) -> {"note", "id", "title"}: create or replace a note.

        `content` is the whole markdown text (frontmatter included); ".md" is appended to the
        path when missing. Link other notes with [[Title]] so the graph can use them.
        """
        return ops.write(note, content)

    def links(note: str) -> list[dict[str, Any]]:
        """links(note) -> the note's outgoing links: {"target", "resolved", "embed", ...}.

        "resolved" is the path the link points to, or None for a dangling link.
        """
        return ops.links(note)

    def backlinks(note: str) -> list[str]:
        """backlinks(note) -> paths of the notes that link to this note."""
        return ops.backlinks(note)

    def neighbors(note: str, hops: int = 1) -> list[str]:
        """neighbors(note, hops=1) -> paths within `hops` links (either direction).

        Nearest first; `hops` is 1 to 3.
        """
        return ops.neighbors(note, hops)

    sigs = {
        "search": "search(query: str, k: int = 10) -> list[dict]",
        "read": "read(note: str) -> dict",
        "write": "write(note: str, content: str) -> dict",
        "links": "links(note: str) -> list[dict]",
        "backlinks": "backlinks(note: str) -> list[str]",
        "neighbors": "neighbors(note: str, hops: int = 1) -> list[str]",
    }
    return {
        fn.__name__: HostFunction(typed_errors(fn), fn.__doc__ or "", sigs[fn.__name__])
        for fn in (search, read, write, links, backlinks, neighbors)
    }


def typed_errors(fn: Callable[..., T]) -> Callable[..., T]:
    """Re-raise expected failures as typed exceptions in the REPL (`NoteNotFound(...)`).

    A bad argument becomes `ValueError`; a vault error keeps its class name and its message
    (which names notes, never host paths). Anything else stays a generic host error.
    """

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> T:
        try:
            return fn(*args, **kwargs)
        except BadArgument as exc:
            raise HostFunctionError("ValueError", str(exc)) from exc
        except VaultError as exc:
            raise HostFunctionError(type(exc).__name__, str(exc)) from exc

    return call


def build_functions(*parts: Mapping[str, HostFunction]) -> dict[str, HostFunction]:
    """Merge parts of the REPL table; a name defined twice is a programming error."""
    table: dict[str, HostFunction] = {}
    for part in parts:
        for name, fn in part.items():
            if name in table:
                raise ValueError(f"host function {name!r} defined twice")
            table[name] = fn
    return table
