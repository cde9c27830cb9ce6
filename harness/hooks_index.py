"""The hooks' own lexical index: a prompt hook answers in a new process within ~0.3 s.

A hook is a new process each time. Opening the vault and preparing the search engine costs
seconds to minutes on a large vault (28 s at 10,000 notes on the shared 2-core machine), far
over what a client waits for each prompt. So the prompt hook does not open the vault: it
reads `VAULT/.rmh/hooks.sqlite`, an SQLite FTS5 table (porter stemming, BM25 ranking) of the
notes worth recalling (ordinary notes, conversation turns, episodes, facts; not entity or
session summary notes), with each note's date, speaker and previous turn, and the words its
frontmatter adds to what the search reads (`vault.frontmatter_words`: the title and
description it names, its tags and its other properties' values, `status: blocked`), read by
the same function as the search's, so a note found by a property is recalled by it too.
Only `sqlite3` and `vault.tokenize` are imported on that path (no numpy).

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

import re
import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vault import connect_state, held_state, tokenize

from .hooks_owner import OWNER_SCHEMA, Same, claim
from .hooks_used import USED_FILE as USED_FILE
from .hooks_used import held_file, state_or_plain
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
# 6: a word of a script written without spaces (Chinese, Japanese, Thai...) is indexed by its
# bigrams too, as the search reads it (`spaced`): unicode61 took "東京は日本の首都" for one word.
# 7: the words the note's frontmatter adds (`described`, a column of both tables), so a note
# is recalled by a property's value, as the search finds it (HOUSE42, session 42).
FORMAT = 7
_LINK = re.compile(r"\[\[([^\]|#]+)")
_WORD = re.compile(r"[^\W_]+")  # a word as unicode61 splits text (and `hooks_recall.words_of`)


def spaced(word: str) -> list[str]:
    """`word` as the search's tokens: the overlapping bigrams of a spaceless script's run
    (`vault.tokenize`), else the word itself, so an FTS5 query and its index match on them."""
    parts = [word] if word.isascii() else tokenize(word)
    return parts if len(parts) > 1 else [word]


def _fts_text(text: str) -> str:
    """`text`, with the bigrams of its spaceless words after it (REVIEW42, session 42)."""
    extra = [] if text.isascii() else [t for w in dict.fromkeys(_WORD.findall(text.casefold()))
                                       for t in spaced(w) if t != w]
    return f"{text}\n{' '.join(extra)}" if extra else text


_SCHEMA = (  # each table as FORMAT has it (`refresh` makes them again for another format)
    "CREATE TABLE IF NOT EXISTS notes(id INTEGER PRIMARY KEY, path TEXT UNIQUE NOT NULL, "
    "hash TEXT NOT NULL, title TEXT, date TEXT, tier TEXT, speaker TEXT, conversation TEXT, "
    "previous TEXT, body TEXT, described TEXT)",
    "CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(title, body, described, "
    "tokenize='porter unicode61')",
    OWNER_SCHEMA)


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
    described: str  # what the frontmatter adds: its title, description, tags, properties


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
        with conn:
            for table in _SCHEMA:
                conn.execute(table)
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
    from vault import frontmatter_words  # here: the prompt hook's path imports no retrieval

    conn = _connect(held_state(vault.root) / INDEX_FILE)  # never the plain path (HOUSE39)
    try:
        conn.execute(f"PRAGMA cache_size = -{WRITE_CACHE_KIB}")
        seen: set[int] = set()
        changed = 0
        with conn:
            if conn.execute("PRAGMA user_version").fetchone()[0] != FORMAT:
                conn.execute("BEGIN")  # DDL opens no transaction by itself (sqlite3)
                conn.execute("DROP TABLE notes")  # another format's columns: made anew
                conn.execute("DROP TABLE fts")
                for table in _SCHEMA:
                    conn.execute(table)
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
                described = frontmatter_words(fm, row.title, row.body)  # as the search
                conn.execute("DELETE FROM notes WHERE id = ? OR path = ?", (row.id, row.path))
                conn.execute("DELETE FROM fts WHERE rowid = ?", (row.id,))
                conn.execute(
                    "INSERT INTO notes VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (row.id, row.path, row.content_hash, row.title,
                     _date(fm, row.path, row.mtime_ns), tier, speaker,
                     str(fm.get("conversation", "")), _previous(fm), body, described))
                conn.execute("INSERT INTO fts(rowid, title, body, described) VALUES (?, ?, ?, ?)",
                             (row.id, _fts_text(row.title), _fts_text(body),
                              _fts_text(described)))
                changed += 1
            gone = [i for i in stored if i not in seen]
            for i in gone:
                conn.execute("DELETE FROM notes WHERE id = ?", (i,))
                conn.execute("DELETE FROM fts WHERE rowid = ?", (i,))
        return {"notes": len(seen), "changed": changed, "removed": len(gone)}
    finally:
        conn.close()


def _row(values: Iterable[Any]) -> Row:
    return Row(*(str(v or "") for v in list(values)[:9]))  # the hash after them: `Reader._rows`


_NAMES = ("path", "title", "date", "tier", "speaker", "conversation", "previous", "body",
          "described")


class Reader:
    """One read-only connection to the hooks' index, for everything one prompt (or one
    session-start brief) asks of it: the term counts, the search, the turns before."""

    def __init__(self, conn: sqlite3.Connection, same: Same | None = None) -> None:
        self._conn = conn
        # an index of an older format (no `described`: FORMAT < 7) is read whole, as it is,
        # until the refresh that rebuilds it commits
        have = {str(r[1]) for r in conn.execute("PRAGMA table_info(notes)")}
        self._columns = ", ".join(f"n.{c}" if c in have else f"'' AS {c}" for c in _NAMES)
        self._same = same  # an index another vault owns: only rows of this vault's notes

    def _rows(self, rows: Iterable[Any]) -> list[Row]:
        return [_row(r) for r in rows if self._same is None or self._same(r[0], r[9])]

    def search(self, words: Iterable[str], k: int) -> list[Row]:
        """The `k` best notes for any of `words` (BM25)."""
        quoted = [f'"{w}"' for w in dict.fromkeys(words) if w.isalnum()]
        if not quoted:
            return []
        rows = self._conn.execute(
            f"SELECT {self._columns}, n.hash FROM fts JOIN notes n ON n.id = fts.rowid "
            "WHERE fts MATCH ? "
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
            f"SELECT {self._columns}, n.hash FROM notes n WHERE {where} ORDER BY date, path "
            "LIMIT ?",
            (*(d for span in spans for d in span), k)).fetchall()
        return self._rows(rows)

    def by_path(self, path: str) -> Row | None:
        """One indexed note by its path (the turn before a recalled turn)."""
        rows = self._rows(self._conn.execute(
            f"SELECT {self._columns}, n.hash FROM notes n WHERE path = ?", (path,)).fetchall())
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
