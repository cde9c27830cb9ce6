"""The hooks' own lexical index: a prompt hook answers in a new process within ~0.3 s.

A hook is a new process each time. Opening the vault and preparing the search engine costs
seconds to minutes on a large vault (28 s at 10,000 notes on the shared 2-core machine), far
over what a client waits for each prompt. So the prompt hook does not open the vault: it
reads `VAULT/.rmh/hooks.sqlite`, an SQLite FTS5 table (porter stemming, BM25 ranking) of the
notes worth recalling (ordinary notes, conversation turns, episodes, facts; not entity or
session summary notes), with each note's date, speaker and previous turn. Only `sqlite3`
and `vault.tokenize` are imported on that path (no numpy).

`refresh` brings the table in step with the vault's index (by content hash and path: only
changed or renamed notes are rewritten, removed ones deleted); the session-start (the first,
and with `[hooks] daemon = false` every one, in the background), session-end and pre-compact
hooks call it (they run with the vault open anyway), so the prompt hook sees the vault as of
the last of those: a note written during a session is recalled from the next session on
(or after a compaction). The file is derived: deleting it loses nothing. It names the vault it
was made for: another vault's notes are never recalled (harness/hooks_owner.py).

`shown` journals what the prompt hook injected (`VAULT/.rmh/hooks/<session>.jsonl`) so that
the session-end hook logs it in the learning ledger (`vault.shown`) before it logs the
reads and ends the session: learning sees the shown notes without the prompt hook opening
the ledger.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vault import connect_state, held_state

from .hooks_owner import OWNER_SCHEMA, Same, claim
from .hooks_used import (
    JOURNAL_DIR,
    PROMPT_CHARS,
    held_file,
    journal_lock,
    state_or_plain,
    update_used,
)
from .hooks_used import USED_FILE as USED_FILE
from .hooks_used import journal_shown as journal_shown  # the session journals: hooks_used.py
from .hooks_used import remember_used as remember_used  # still importable from here
from .hooks_used import take_shown as take_shown
from .hooks_used import used_lately as used_lately

if TYPE_CHECKING:
    from vault import Vault

INDEX_FILE = "hooks.sqlite"
SKIP_TIERS = frozenset({"entity", "L1", "working"})
# The index's format (SQLite user_version); an index of another format is rebuilt whole.
# 2: a fact (L2) is indexed by what was said, not its provenance lines ("confirmed 1
# time(s) ... last confirmed ...", whose words matched any prompt about time).
# 3: so is a rule (L3, the same lines); a correction (no quote) by its statement; a working
# note promoted to L2 by all of it (format 2 kept only its quotes).
# 4: a fact or rule is dated by when it was confirmed, not by the day its file was written.
# 5: a note is dated as the search dates it: "8 May, 2024", "2024/05/08", a daily note's
# file name (they were dated by the file's modification day).
FORMAT = 5
_LINK = re.compile(r"\[\[([^\]|#]+)")
_SCHEMA = """
CREATE TABLE IF NOT EXISTS notes(id INTEGER PRIMARY KEY, path TEXT UNIQUE NOT NULL,
  hash TEXT NOT NULL, title TEXT, date TEXT, tier TEXT, speaker TEXT, conversation TEXT,
  previous TEXT, body TEXT);
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(title, body, tokenize='porter unicode61');
""" + OWNER_SCHEMA


@dataclass(frozen=True)
class Row:
    """One indexed note as the prompt hook shows it."""

    path: str
    title: str
    date: str
    tier: str
    speaker: str
    conversation: str
    previous: str
    body: str


def index_path(root: Path) -> Path:
    """`.rmh/hooks.sqlite` of the held `.rmh/` (never a folder swapped in meanwhile); of a
    folder with no `.rmh/` (no vault, or its `.rmh` away for the moment) the plain path,
    where nothing is found: nothing makes a folder on the way to it."""
    return state_or_plain(root) / INDEX_FILE


def _connect(path: Path) -> sqlite3.Connection:
    """The index for writing. It is derived from the notes, so one SQLite calls damaged or no
    database (or a FIFO, a device in its place) is removed and made again: else every hook
    failed on it, and recalled nothing, until someone deleted it by hand. A symlink in its
    place is removed too: its tables went into the file it named (another program's)."""
    if path.is_symlink() or (path.exists() and not path.is_file()):
        path.unlink()  # a FIFO or a device; a folder raises, one line on stderr as before
    try:
        return _open_index(path)
    except sqlite3.DatabaseError as exc:
        if exc.sqlite_errorcode & 0xFF not in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB):
            raise  # locked, a full disk, ...: not the file's fault
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    return _open_index(path)


def _open_index(path: Path) -> sqlite3.Connection:
    conn = connect_state(path, timeout=5.0)  # the held folder's file (vault held_state)
    try:
        conn.executescript(_SCHEMA)
        conn.execute("SELECT COUNT(*) FROM notes").fetchone()
    except BaseException:
        conn.close()
        raise
    return conn


def _date(fm: Mapping[str, Any], path: str, mtime_ns: int) -> str:
    """The note's date, "YYYY-MM-DD" (with the time of day when the frontmatter gives one, as
    "YYYY-MM-DD HH:MM"): the first of frontmatter `date`, `updated`, `created`, a fact's or
    rule's `last_confirmed` or `first_observed` (the days it was said, not the day it was
    written) that reads as a day as the search reads it ("8 May, 2024", "2024/05/08":
    `vault.value_day`), else a YYYY-MM-DD in the file name (a daily note: `vault.name_day`),
    else the file's modification day. So a prompt asking for a day (`dated`) finds the notes
    the search dates that day."""
    from vault import name_day, value_day

    for key in ("date", "updated", "created", "last_confirmed", "first_observed"):
        value = fm.get(key)
        day = value_day(value)
        if day is not None:
            text = str(value).replace("T", " ")
            return text[:16] if text.startswith(day.isoformat()) else day.isoformat()
    day = name_day(path)
    if day is not None:
        return day.isoformat()
    return datetime.fromtimestamp(mtime_ns / 1e9, UTC).strftime("%Y-%m-%d")


def _previous(fm: Mapping[str, Any]) -> str:
    m = _LINK.search(str(fm.get("previous") or ""))
    return f"{m.group(1)}.md" if m else ""


def _stale(fm: Mapping[str, Any]) -> bool:
    """A fact rejected or superseded (vault.claim_trust): never injected as memory."""
    if not (fm.get("trust") or fm.get("superseded_by")):
        return False
    from vault import claim_trust

    return not claim_trust(fm).current


def recall_text(tier: str, frontmatter: Mapping[str, Any], body: str) -> str:
    """What a note is recalled by and shows: a turn's words without its speaker label, an
    episode's one-paragraph summary, a fact's or rule's quoted words (else its statement:
    a correction quotes nothing), else the body (a working note promoted to L2 too)."""
    body = body.strip()
    speaker = str(frontmatter.get("speaker", ""))
    if tier == "L0" and body.startswith(f"{speaker}: "):
        return body[len(speaker) + 2:]
    if tier == "episodic":
        return body.partition("## Summary")[2].strip() or body
    if tier in ("L2", "L3") and frontmatter.get("kind") != "working-note":
        said = [ln[1:].strip() for ln in body.splitlines() if ln.startswith(">")]
        return " ".join(s for s in said if s) or str(frontmatter.get("statement") or body)
    return body


# The writer's page cache (KiB): a refresh is one transaction, and one that outgrows the
# cache (SQLite's default is 2 MiB; a rebuild of a few thousand notes does) spills to the file
# under an exclusive lock, so a prompt hook reading meanwhile waits its timeout and recalls
# nothing. Within this bound readers see the old index whole until the commit.
WRITE_CACHE_KIB = 256 * 1024


def refresh(vault: Vault) -> dict[str, int]:
    """Bring the hooks' index in step with the vault (module docstring)."""
    conn = _connect(held_state(vault.root) / INDEX_FILE)  # never the plain path (HOUSE39)
    try:
        conn.execute(f"PRAGMA cache_size = -{WRITE_CACHE_KIB}")
        seen: set[int] = set()
        changed = 0
        with conn:
            if conn.execute("PRAGMA user_version").fetchone()[0] != FORMAT:
                conn.execute("DELETE FROM notes")
                conn.execute("DELETE FROM fts")
                conn.execute(f"PRAGMA user_version = {FORMAT}")
            claim(conn, vault.root)  # another vault's (its `.rmh` moved in): made anew
            stored = {i: (h, p) for i, h, p in conn.execute("SELECT id, hash, path FROM notes")}
            for row in vault.note_rows():
                tier = str(row.frontmatter.get("tier", ""))
                if tier in SKIP_TIERS or _stale(row.frontmatter):
                    continue
                seen.add(row.id)
                if stored.get(row.id) == (row.content_hash, row.path):  # a rename: changed
                    continue
                fm = row.frontmatter
                body = recall_text(tier, fm, row.body)
                speaker = str(fm.get("speaker", ""))
                conn.execute("DELETE FROM notes WHERE id = ? OR path = ?", (row.id, row.path))
                conn.execute("DELETE FROM fts WHERE rowid = ?", (row.id,))
                conn.execute(
                    "INSERT INTO notes VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (row.id, row.path, row.content_hash, row.title,
                     _date(fm, row.path, row.mtime_ns), tier, speaker,
                     str(fm.get("conversation", "")), _previous(fm), body))
                conn.execute("INSERT INTO fts(rowid, title, body) VALUES (?, ?, ?)",
                             (row.id, row.title, body))
                changed += 1
            gone = [i for i in stored if i not in seen]
            for i in gone:
                conn.execute("DELETE FROM notes WHERE id = ?", (i,))
                conn.execute("DELETE FROM fts WHERE rowid = ?", (i,))
        return {"notes": len(seen), "changed": changed, "removed": len(gone)}
    finally:
        conn.close()


def _row(values: Iterable[Any]) -> Row:
    return Row(*(str(v or "") for v in list(values)[:8]))


_COLUMNS = "path, title, date, tier, speaker, conversation, previous, body, hash"


class Reader:
    """One read-only connection to the hooks' index, for everything one prompt (or one
    session-start brief) asks of it: the term counts, the search, the turns before."""

    def __init__(self, conn: sqlite3.Connection, same: Same | None = None) -> None:
        self._conn = conn
        self._same = same  # an index another vault owns: only rows of this vault's notes

    def _rows(self, rows: Iterable[Any]) -> list[Row]:
        return [_row(r) for r in rows if self._same is None or self._same(r[0], r[8])]

    def search(self, words: Iterable[str], k: int) -> list[Row]:
        """The `k` best notes for any of `words` (BM25)."""
        quoted = [f'"{w}"' for w in dict.fromkeys(words) if w.isalnum()]
        if not quoted:
            return []
        rows = self._conn.execute(
            "SELECT n.path, n.title, n.date, n.tier, n.speaker, n.conversation, n.previous, "
            "n.body, n.hash FROM fts JOIN notes n ON n.id = fts.rowid WHERE fts MATCH ? "
            "ORDER BY bm25(fts), n.path LIMIT ?", (" OR ".join(quoted), k)).fetchall()
        return self._rows(rows)

    def frequencies(self, words: Sequence[str]) -> tuple[int, list[int]]:
        """(notes indexed, how many of them hold each of `words` as the index matches it)."""
        conn = self._conn
        n = int(conn.execute("SELECT count(*) FROM notes").fetchone()[0])
        return n, [int(conn.execute("SELECT count(*) FROM fts WHERE fts MATCH ?",
                                    (f'"{w}"',)).fetchone()[0]) if w.isalnum() else 0
                   for w in words]

    def dated(self, spans: Iterable[tuple[str, str]], k: int) -> list[Row]:
        """The first `k` notes dated in any of `spans` (inclusive "YYYY-MM-DD" days), oldest
        first (ties: path)."""
        spans = list(spans)
        if not spans or k <= 0:
            return []
        where = " OR ".join("(substr(date, 1, 10) BETWEEN ? AND ?)" for _ in spans)
        rows = self._conn.execute(
            f"SELECT {_COLUMNS} FROM notes WHERE {where} ORDER BY date, path LIMIT ?",
            (*(d for span in spans for d in span), k)).fetchall()
        return self._rows(rows)

    def by_path(self, path: str) -> Row | None:
        """One indexed note by its path (the turn before a recalled turn)."""
        rows = self._rows(self._conn.execute(f"SELECT {_COLUMNS} FROM notes WHERE path = ?",
                                             (path,)).fetchall())
        return rows[0] if rows else None


@contextmanager
def reading(root: Path) -> Iterator[Reader | None]:
    """A `Reader` of the vault's hooks index, closed on exit; None when the index does not
    exist yet (nothing to recall), is no file of the held `.rmh/` (`held_file`: a symlink,
    another file's rows, is never read; the next refresh removes it; a FIFO: SQLite waited
    forever on it); another vault's: only rows of this
    vault's notes (hooks_owner.py). Opened as the writer opens it (`connect_state`: the held
    folder's own file, checked; PathRefused when `.rmh` was swapped meanwhile), to read."""
    path = held_file(root, INDEX_FILE)
    if path is None:
        yield None
        return
    conn = connect_state(path, read_only=True, timeout=5.0)
    try:
        yield Reader(conn, Same.check(conn, root))
    finally:
        conn.close()


def search(root: Path, words: Iterable[str], k: int) -> list[Row]:
    """`Reader.search` on a connection of its own; [] when the index does not exist yet."""
    with reading(root) as r:
        return r.search(words, k) if r is not None else []


def frequencies(root: Path, words: Sequence[str]) -> tuple[int, list[int]]:
    """`Reader.frequencies` on a connection of its own; (0, []) without an index."""
    with reading(root) as r:
        return r.frequencies(words) if r is not None else (0, [])


def by_path(root: Path, path: str) -> Row | None:
    """`Reader.by_path` on a connection of its own; None without an index."""
    with reading(root) as r:
        return r.by_path(path) if r is not None else None


def _cut_into(line: str, cut: Callable[[str], bool]) -> bool:
    """Whether a journal line's prompt was cut at PROMPT_CHARS and ends in the beginning of
    an erased string (vault `ending_in_part`: the cut end may be an erased line's start)."""
    try:
        prompt = json.loads(line).get("prompt")
    except (ValueError, AttributeError, RecursionError):
        return False
    return isinstance(prompt, str) and len(prompt) >= PROMPT_CHARS and cut(prompt)


def forget(root: Path, needles: Iterable[str], done: Callable[[], object] = lambda: None
           ) -> bool:
    """Erasure (`rmh forget`): drop the hooks' index (derived; True when there was one, so
    the caller rebuilds it from what remains), and every journal line and used-lately entry
    that names an erased string. A journal file is rewritten whole (`replace_whole`: it was
    written in place, so a kill cut the lines it kept); a killed writer's temporary (its
    process gone) is removed, a running hook's left to it. `done` is called after each file
    operation (the fault-injection count)."""
    index = held_state(root) / INDEX_FILE  # never the plain path: a swap had it unlink there
    had = index.exists()
    for suffix in ("", "-wal", "-shm", "-journal"):
        if Path(f"{index}{suffix}").exists():
            Path(f"{index}{suffix}").unlink(missing_ok=True)
            done()
    from vault import dead_temps, ending_in_part, mentioning, replace_whole  # here: the
    # prompt hook imports this module, not this function

    needles = list(needles)
    names = mentioning(needles)  # whole words, as the erasure picks notes (vault)
    cut = ending_in_part(needles)
    folder = held_state(root) / JOURNAL_DIR
    dead = set(dead_temps(folder, ".*.tmp"))  # a running hook's temporary is its own
    for path in sorted(folder.glob("*")) if folder.is_dir() else []:
        if path.is_symlink():  # not rmh's file: rewriting it changed the file it named
            path.unlink()
        if not path.is_file():
            continue
        if path.name.startswith(".") and path.name.endswith(".tmp"):  # a killed writer's
            if path in dead:  # (its pid gone) is removed; a live writer renames its own
                path.unlink()
                done()
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        if path.name == USED_FILE:
            update_used(root, lambda old: [n for n in old if not names(n)])
            continue
        lines = [ln for ln in text.splitlines(keepends=True)
                 if not names(ln) and not _cut_into(ln, cut)]
        if len(lines) == len(text.splitlines(keepends=True)):
            continue
        with journal_lock(folder):  # a prompt hook's append waits (else lost to the rewrite)
            text = path.read_text(encoding="utf-8", errors="replace")
            lines = [ln for ln in text.splitlines(keepends=True)
                     if not names(ln) and not _cut_into(ln, cut)]
            if lines:
                replace_whole(path, ("".join(lines).encode("utf-8"),), count_op=_ticks(done))
            else:
                path.unlink()
                done()
    return had


def _ticks(done: Callable[[], object]) -> Callable[[], None]:
    """`done` as a `count_op` (its value dropped)."""

    def tick() -> None:
        done()

    return tick
