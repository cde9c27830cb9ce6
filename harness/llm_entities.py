"""The NDM seed's entity step with an LLM: "the language model reads each turn on its own
and lists the entities" (`[extract] entities = "llm"`, harness/config.py).

For each turn without caller-supplied entities the configured [llm] model gets the system
prompt prompts/entities.md and the turn's text alone, and answers a JSON array of strings.
The answer is checked (`parse_answer`) and enters the vault as data: the turn's supplied
entities (`vault.conversation_with_entities`), normalised by the vault's own rules, exactly
as a conversation file's "entities" field. The vault never calls a model.

Answers are cached in VAULT/.rmh/entities-llm.sqlite, keyed by sha256 of (model, prompt
version, turn text), the prompt version being the first 16 hex digits of the prompt file's
sha256: a changed prompt or model asks again, an unchanged turn never does. Re-ingest with
every answer cached sends nothing, needs no endpoint, and writes the same bytes. Only
well-formed answers are cached.
A turn the ingest leaves out, erased by `rmh forget` (vault `remembered`), is never sent,
nor its answer cached.

A turn whose answer is malformed (not a JSON array of strings, too long), or that gets none
(endpoint down, timeout, the call budget spent), keeps automatic extraction ("auto": the
parse, else the rules) and is listed in the report; nothing else changes. Calls go through
the LLM broker (harness/llm.py): at most `[llm] in_flight` at once, each with the broker's
timeout and retries, at most `[extract] llm_max_calls` per ingest.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import re
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import prompts
from vault import (
    Cancelled,
    IngestStopped,
    PathRefused,
    checkpoint,
    connect_state,
    held_state,
    operation_made,
)

from .config import Config, ConfigError
from .errors import Refused
from .hooks_used import held_file, state_or_plain

CACHE_FILE = "entities-llm.sqlite"
PROMPT = "entities"
MAX_ENTITIES = 64  # an answer listing more is malformed
MAX_CHARS = 80  # a longer item names no entity: dropped
BREAK_AFTER = 3  # turns whose calls failed in a row, after which no other turn is asked
POLL_S = 0.1  # seconds between two checks for a stop while an answer is awaited
_UNWRITABLE = (5, 6, 8)  # SQLITE_BUSY, SQLITE_LOCKED, SQLITE_READONLY
T = TypeVar("T")
_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.S)
_CONTROL = re.compile(r"[\x00-\x1f\x7f\[\]|#]")


class MalformedAnswer(ValueError):
    """The model's answer is not a JSON array of at most MAX_ENTITIES strings."""


def prompt_version() -> str:
    """First 16 hex digits of the prompt file's sha256."""
    return hashlib.sha256(prompts.load(PROMPT).encode("utf-8")).hexdigest()[:16]


def cache_key(model: str, version: str, text: str) -> str:
    blob = json.dumps([model, version, text], ensure_ascii=False).encode("utf-8")
    return hashlib.sha256(blob).hexdigest()


def parse_answer(answer: str, text: str) -> tuple[tuple[str, ...], int]:
    """(the entities, how many items were dropped) of one answer for turn `text`.

    The answer is a JSON array of strings (a ```json fence around it is tolerated); an item
    is kept when, whitespace collapsed, it is 1..MAX_CHARS characters without control or
    link characters and occurs in the turn (case-folded): the model may not invent entities.
    Duplicates are dropped (first kept). MalformedAnswer otherwise."""
    body = answer.strip()
    m = _FENCE.match(body)
    if m:
        body = m.group(1)
    try:
        doc = json.loads(body)
    except ValueError:
        raise MalformedAnswer("not JSON") from None
    except RecursionError:  # was a RecursionError traceback that ended the ingest (PLUG6)
        raise MalformedAnswer("JSON nested past the parser's depth") from None
    if not isinstance(doc, list) or not all(isinstance(x, str) for x in doc):
        raise MalformedAnswer("not a JSON array of strings")
    if len(doc) > MAX_ENTITIES:
        raise MalformedAnswer(f"{len(doc)} items (at most {MAX_ENTITIES})")  # always plural
    folded = " ".join(text.split()).casefold()
    kept: dict[str, None] = {}
    dropped = 0
    for item in doc:
        name = " ".join(item.split())
        if (not name or len(name) > MAX_CHARS or _CONTROL.search(name)
                or name.casefold() not in folded):
            dropped += 1
            continue
        kept.setdefault(name, None)
    return tuple(kept), dropped


@dataclass
class Report:
    """What the LLM step did in one ingest (JSON-safe through `to_json`)."""

    model: str
    prompt_version: str
    turns: int = 0  # turns the step was for (no caller-supplied entities)
    cached: int = 0
    asked: int = 0
    answered: int = 0
    dropped_items: int = 0
    fallback: list[dict[str, str]] = field(default_factory=list)  # turn, reason
    not_cached: str = ""  # why the answers could not be cached (the cache locked), if so

    def to_json(self) -> dict[str, Any]:
        return {"extractor": "llm", "model": self.model, "prompt_version": self.prompt_version,
                "turns": self.turns, "cached": self.cached, "asked": self.asked,
                "answered": self.answered, "dropped_items": self.dropped_items,
                "fallback": self.fallback,
                **({"not_cached": self.not_cached} if self.not_cached else {})}


class Cache:
    """VAULT/.rmh/entities-llm.sqlite: key -> the entities of a well-formed answer."""

    def __init__(self, root: Path, done: Callable[[], object] = lambda: None) -> None:
        self.root = root
        self.done = done  # after each transaction's COMMIT: the fault-injection count

    @property
    def path(self) -> Path:
        """The file in the held `.rmh/` (vault held_state: never a folder swapped in since),
        found at each use: an ingest makes the vault after this cache is read (no `.rmh` yet:
        the plain path, where nothing is found)."""
        return state_or_plain(self.root) / CACHE_FILE

    def get(self, keys: Sequence[str]) -> dict[str, tuple[str, ...]]:
        """The cached entities of `keys`. The file is derived: one SQLite cannot read (not a
        database, no `answers` table, locked past the timeout) answers nothing, and a row whose
        value is not a JSON list of strings is left out: those turns are asked again (`put`
        replaces them). Before, each was a traceback that ended the ingest (PLUG6)."""
        path = held_file(self.root, CACHE_FILE)  # never the plain path (HOUSE39)
        if not keys or path is None:
            return {}
        out: dict[str, tuple[str, ...]] = {}
        try:  # the held `.rmh/`'s own file, checked, only read (PathRefused: `.rmh` swapped)
            with contextlib.closing(connect_state(path, read_only=True, timeout=10.0)) as c:
                unique = sorted(set(keys))
                for i in range(0, len(unique), 500):
                    part = unique[i:i + 500]
                    rows = c.execute("SELECT key, entities FROM answers WHERE key IN "
                                     f"({','.join('?' * len(part))})", part)
                    out.update((k, v) for k, v in ((k, _entities(v)) for k, v in rows)
                               if v is not None)
        except (sqlite3.Error, OSError, PathRefused):
            pass
        return out

    def check(self) -> None:
        """Refused before any call when the cache's name is taken by what is not a file (a
        folder, a FIFO): no answer could be kept. Before, a folder was "sqlite3.Operational
        Error: disk I/O error" (PLUG6)."""
        if self.path.exists() and not self.path.is_file() and not self.path.is_symlink():
            raise Refused("cache_unusable", f"{self.root / '.rmh' / CACHE_FILE} is not a file, "
                          "so no LLM answer can be cached: move it away (rmh makes the file "
                          "again)")

    def put(self, rows: Sequence[tuple[str, str, str, tuple[str, ...]]]) -> str:
        """Store (key, model, prompt version, entities) rows; "" or why they were not (the
        file locked or read-only past the timeout: the answers are used, not kept; before, a
        traceback that ended the ingest after the model had answered, PLUG6)."""
        if not rows:
            return ""
        path = held_state(self.root, create=True) / CACHE_FILE  # a new vault's: made now
        if path.is_symlink():  # its table went into the file it named: derived, dropped
            path.unlink()
        if path.exists() and not path.is_file():  # made while the model answered
            return f"{path.name}: not a file"  # (before: OperationalError, PLUG6)
        try:
            self._put(path, rows)
        except sqlite3.DatabaseError as exc:  # not SQLite (or damaged): derived, made anew
            code = getattr(exc, "sqlite_errorcode", None)
            if code in _UNWRITABLE:
                return f"{path.name}: {exc}"
            if code not in (11, 26) or not path.is_file():
                raise
            path.unlink()
            self._put(path, rows)
        return ""

    def _put(self, path: Path, rows: Sequence[tuple[str, str, str, tuple[str, ...]]]) -> None:
        conn = connect_state(path, timeout=10.0)
        try:
            with conn:
                conn.execute("CREATE TABLE IF NOT EXISTS answers(key TEXT PRIMARY KEY, "
                             "model TEXT NOT NULL, prompt TEXT NOT NULL, entities TEXT NOT NULL)")
                conn.executemany("INSERT OR REPLACE INTO answers VALUES (?, ?, ?, ?)",
                                 [(k, m, p, json.dumps(list(e), ensure_ascii=False))
                                  for k, m, p, e in rows])
            self.done()
        finally:
            conn.close()


def _entities(value: object) -> tuple[str, ...] | None:
    """A cached value as entities, or None when it is not a JSON list of strings."""
    try:
        doc = json.loads(value) if isinstance(value, str) else None
    except (ValueError, RecursionError):
        return None
    if not isinstance(doc, list) or not all(isinstance(x, str) for x in doc):
        return None
    return tuple(doc)


def forget(root: Path, needles: Sequence[str], done: Callable[[], object] = lambda: None
           ) -> int:
    """Erasure (`rmh forget`): drop every cached answer whose entities name an erased string
    (a whole word: the subject, a path), then VACUUM, so no freed page keeps them; returns
    how many went. Before, the cache kept "Quillon" after `forget --subject Quillon`, and the
    proof found it: the erasure ended incomplete for every vault that had used the LLM."""
    from vault import mentioning

    path = held_state(root) / CACHE_FILE
    if path.is_symlink():  # not rmh's file (its rows are another program's): the link goes
        path.unlink()
    if not path.is_file():
        return 0
    names = mentioning(needles)
    conn = connect_state(path, timeout=10.0)
    try:
        gone = [k for k, v in conn.execute("SELECT key, entities FROM answers") if names(v)]
        with conn:
            conn.executemany("DELETE FROM answers WHERE key = ?", [(k,) for k in gone])
        done()  # (a transaction: a kill before its COMMIT loses nothing, the open redoes it)
        conn.execute("VACUUM")
        done()
    except sqlite3.DatabaseError:  # not our table (or not SQLite): a cache, dropped whole
        conn.close()
        path.unlink(missing_ok=True)
        return 0
    finally:
        conn.close()
    return len(gone)


def llm_entities(cfg: Config, root: Path, conversations: Sequence[Any]
                 ) -> tuple[list[Any], Report]:
    """The conversations with each turn's LLM-listed entities supplied (module docstring),
    and the report. ConfigError when no [llm] model is configured."""
    from vault import conversation_with_entities, remembered

    model = cfg.llm.model
    if not model:
        raise ConfigError('[extract] entities = "llm" needs an [llm] model (or RMH_MODEL)')
    version = prompt_version()
    report = Report(model, version)
    # a turn the ingest leaves out (erased by `rmh forget`) is never sent, nor its answer cached
    kept = {t for c in remembered(root, conversations) for t in c.turns()}
    texts: list[list[str | None]] = [
        [t.text if t.entities is None and t in kept else None for t in c.turns()]
        for c in conversations]
    keys = {text: cache_key(model, version, text)
            for per in texts for text in per if text is not None}
    report.turns = sum(t is not None for per in texts for t in per)
    cache = Cache(root, functools.partial(operation_made, cfg.fault_after_ops))
    cache.check()
    known = cache.get(list(keys.values()))
    missing = sorted({text for text, key in keys.items() if key not in known})
    report.cached = report.turns - sum(1 for per in texts for t in per
                                       if t is not None and keys[t] not in known)
    failed: dict[str, str] = {}
    if missing:
        got, failed, dropped, stopped = _ask(cfg, missing[: cfg.extract.llm_max_calls])
        report.asked = min(len(missing), cfg.extract.llm_max_calls)
        report.answered = len(got)
        report.dropped_items = dropped
        for text in missing[cfg.extract.llm_max_calls:]:
            failed[text] = "call budget spent ([extract] llm_max_calls)"
        report.not_cached = cache.put([(keys[t], model, version, e)
                                       for t, e in sorted(got.items())])
        if stopped:  # (`rmh serve`'s stop) nothing written; the answers so far are cached, so
            raise IngestStopped((), len(conversations), 0)  # the next ingest asks the rest
        known.update((keys[t], e) for t, e in got.items())
    out = []
    for conv, per in zip(conversations, texts, strict=True):
        lists: list[Sequence[str] | None] = []
        for turn, said in zip(conv.turns(), per, strict=True):
            found = known.get(keys[said]) if said is not None else None
            if said is not None and found is None:
                report.fallback.append({"conversation": conv.conversation_id,
                                        "turn": turn.turn_id, "reason": failed.get(said, "")})
            lists.append(found)
        out.append(conversation_with_entities(conv, lists))
    return out, report


def _ask(cfg: Config, texts: Sequence[str]
         ) -> tuple[dict[str, tuple[str, ...]], dict[str, str], int, bool]:
    """Ask the model about each text: (well-formed answers, text -> why none, items dropped,
    whether a stop came first). A stop bound to the ingest (`vault.cancellable`: `rmh serve`'s
    cancel or SIGTERM) is checked at least every POLL_S while answers are awaited: the calls
    not yet sent are dropped, those in flight left to end on their own; before, a cancelled
    `vault.ingest` with `[extract] entities = "llm"` waited for every call."""
    from .llm import Broker, ExecBudget, RlmError, SubRequest

    system = prompts.load(PROMPT)
    got: dict[str, tuple[str, ...]] = {}
    failed: dict[str, str] = {}
    dropped = 0
    with Broker.from_config(cfg.llm) as broker:
        budget = ExecBudget(len(texts) * (cfg.llm.max_retries + 1), 0, broker.provider.name)

        streak = _Streak()

        def one(text: str) -> tuple[str, tuple[str, ...] | str, int]:
            if (broken := streak.broken()):
                return text, broken, 0
            try:
                answer = broker.run(SubRequest(system, text, slice_text=text), budget)
            except RlmError as exc:
                return text, streak.failed(f"{type(exc).__name__}: {exc}"[:300]), 0
            streak.answered()
            try:
                names, n = parse_answer(answer, text)
            except MalformedAnswer as exc:
                return text, f"malformed answer: {exc}", 0
            return text, names, n

        pool, answered = ThreadPoolExecutor(max(1, cfg.llm.in_flight)), False
        try:
            for text, result, n in _answers(pool, one, texts):
                if isinstance(result, str):
                    failed[text] = result
                else:
                    got[text] = result
                    dropped += n
            answered = True
        except Cancelled:
            return got, failed, dropped, True
        finally:  # a stop or an error: the calls not yet sent are dropped, not left to run
            pool.shutdown(wait=answered, cancel_futures=not answered)
    return got, failed, dropped, False


class _Streak:
    """The turns whose calls failed in a row (timeout, endpoint unavailable), across the pool:
    after BREAK_AFTER of them, the turns not yet asked are not sent (each falls back, saying
    why). Before (PLUG6), an endpoint that took the calls and never answered cost every turn
    its timeout and retries: 3 x 60 s per turn by default, 5 turns at a time, so a 1,000-turn
    conversation waited 10 hours to fall back on automatic extraction for every turn."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._failed = 0
        self._last = ""

    def broken(self) -> str:
        with self._lock:
            return (f"not asked: the calls of {self._failed} turns in a row failed (the last: "
                    f"{self._last})" if self._failed >= BREAK_AFTER else "")  # always plural

    def failed(self, why: str) -> str:
        with self._lock:
            self._failed, self._last = self._failed + 1, why
        return why

    def answered(self) -> None:
        with self._lock:
            self._failed = 0


def _answers(pool: ThreadPoolExecutor, one: Callable[[str], T], texts: Sequence[str]
             ) -> Iterator[T]:
    """`one(text)` for each text, run on `pool`, in order; a `checkpoint()` at least every
    POLL_S while one is awaited."""
    futures = [pool.submit(one, text) for text in texts]
    for future in futures:
        while True:
            checkpoint()
            try:
                yield future.result(timeout=POLL_S)
                break
            except FutureTimeout:
                continue
