"""An open vault's parts and the helpers every operation of the facade shares (vault/core.py:
`Vault`, whose write operations are vault/writes.py's `VaultWrites`, built on this class).

Holds the folder (`store`), the index, the search engine and the usage recorder; resolves
names to stable note ids against the live snapshot; records usage facts so that a full disk
loses the fact, never the call."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Final

import numpy as np
import numpy.typing as npt

from .errors import NoteNotFound, PathRefused, QuotaExceeded
from .landing import tolerate_full
from .learning.topic import Held, held_words
from .learning.usage import UsageRecorder
from .notes.links import Resolver
from .notes.records import LinkInfo, NoteRecord, link_infos, record_of
from .notes.rows import NoteRow
from .retrieval.beliefs import StaleClaims
from .retrieval.hits import SearchResult
from .retrieval.pipeline import SearchEngine
from .storage.anchored import open_dir
from .storage.attachments import attachment_path, is_attachment
from .storage.corpus import Corpus
from .storage.erase import ErasurePlan
from .storage.index import Index
from .storage.linkgraph import Adjacency
from .storage.live import LiveIndex
from .storage.snapshot import Snapshot
from .storage.store import Store
from .storage.sync import SyncReport
from .storage.watch import Watcher

UNLINKABLE: Final = "[]#^|"  # no new note's name holds one (VaultParts._new_path)


class VaultParts:
    """One open vault's folder, index, search engine and usage recorder."""

    def __init__(
        self,
        store: Store,
        index: Index,
        engine: SearchEngine,
        usage: UsageRecorder,
        auto_sync: bool = True,
        watcher: Watcher | None = None,
    ) -> None:
        self.store = store
        self.watcher = watcher
        self.index = index
        self.engine: Final = engine
        engine.count_op = store.count_op  # what it saves beside the index counts as the store's
        self.usage: Final = usage
        # A note gone from the folder (deleted here, by another process or in Obsidian) is gone
        # from learning too: every removal a sync finds is a delete event of this recorder.
        self.live = LiveIndex(store, index, watcher, usage.on_delete, auto_sync)
        # The snapshot, its archived positions and the corpus with those flags (per search
        # this costs O(archived notes), not O(notes): checked in bench/bench_scale_store.py).
        self._corpus: tuple[Snapshot, npt.NDArray[np.intp], Corpus] | None = None
        self.live.on_rebuild = self._forget
        # Erasures a killed process journalled, finished by `open` (their plans: the caller
        # cleans its own derived files of their strings).
        self.erasures_recovered: list[ErasurePlan] = []
        # What the open's own sync changed (None: it made none), so that `rmh index` can say
        # what it brought in, though its explicit sync then finds nothing left to do.
        self.opened: SyncReport | None = None
        self._stale = StaleClaims()  # rejected or superseded facts (retrieval/beliefs.py)

    @property
    def state_path(self) -> Path:
        """The vault's `.rmh/` as this open holds it (storage/state_anchor.py): a path that
        follows the folder opened, never one swapped in at `.rmh` since."""
        return self.store.state

    def _forget(self) -> None:
        """The snapshot is about to be rebuilt from every row: drop what was derived from the
        last one first, so the two are not in memory together (storage/live.py)."""
        self._corpus = None
        self.engine.forget()

    def _learn(self, record: Callable[[], object]) -> str | None:
        """Record one usage fact: a full disk loses the fact, never the call (landing.py)."""
        return tolerate_full(record, "learning not recorded", "learned.sqlite")

    def _log_search(self, result: SearchResult, session: str | None, query: str,
                    shown: Sequence[tuple[int, int, float]], graph: Adjacency) -> SearchResult:
        """`_learn` of a search's fact; the result says why learning did not record it (its
        session's budget spent: learning/compact.py), and still answers."""
        why: list[str | None] = []
        self._learn(lambda: why.append(self.usage.on_search(session, query, shown, graph)))
        return replace(result, unrecorded=why[0]) if why and why[0] else result

    def corpus(self) -> Corpus:
        """The snapshot every signal reads (rebuilt only when the index generation changes),
        with the usage recorder's current archive flags."""
        snap = self._snapshot()
        archived_at = np.flatnonzero(self.usage.archived(snap.corpus.ids))  # archived positions
        cached = self._corpus
        if cached is not None and cached[0] is snap and np.array_equal(cached[1], archived_at):
            return cached[2]  # same generation, same flags: no per-note work per search
        corpus = snap.corpus
        if archived_at.size:
            archived = [False] * len(corpus)
            for k in archived_at.tolist():
                archived[k] = True
            corpus = replace(corpus, archived=tuple(archived))
        self._corpus = (snap, archived_at, corpus)
        return corpus

    def document_frequency(self, tokens: Sequence[str]) -> list[int]:
        """How many notes hold each token (`vault.tokenize` tokens; the search index's n_t)."""
        self.live.fresh()
        return self.engine.document_frequency(self.corpus(), tokens)

    def held_words(self, query: str) -> Held:
        """The query's words some note holds, each with the ids of the notes holding it: what
        `search` gates the learned prior by (vault/learning/topic.py, learning v18-v19)."""
        self.live.fresh()
        return self._held_in(self.corpus(), query)

    def _held_in(self, corpus: Corpus, query: str) -> Held:
        """`held_words` of `query` in `corpus` as it is (the caller made it fresh)."""
        return held_words(query, lambda tokens: self.engine.document_frequency(corpus, tokens),
                          lambda tokens: self.engine.holders(corpus, tokens))

    def _snapshot(self) -> Snapshot:
        return self.live.snapshot()

    def resolver(self) -> Resolver:
        return self._snapshot().resolver

    def path_of(self, note_id: int) -> str:
        path = self.resolver().id_path.get(note_id)
        return path if path is not None else self._row(note_id).path

    def folder_refusal(self, folder: str) -> str | None:
        """Why vault folder `folder` ("a/b", a name `path_refusal` accepts) has no notes to
        list because a component on the way is a symlink, which the scan never follows: the
        reason a read through it gives ("symlink leaves the vault", "symlink inside the
        vault", a loop); None when it is a real folder, is missing or is a file."""
        parts = [p for p in folder.split("/") if p not in ("", ".")]
        try:
            os.close(open_dir(str(self.store.root), parts, folder))
        except PathRefused as exc:
            return exc.reason
        except OSError:  # missing, a file, unreadable: "no notes under" says it
            return None
        return None

    def _new_path(self, note: str, *, create: bool = False) -> str:
        """The vault path a note name writes to. With `create` (a note that does not exist
        yet: a write's new note, a move's destination), a name a wiki-link cannot reach is
        refused: "[", "]", "#", "^" or "|" in any part ("[[a#b]]" is heading b of a; Obsidian
        refuses those characters in a new file's name)."""
        path = note.strip()
        rel = self.store.check(path if path.lower().endswith(".md") else f"{path}.md", write=True)
        bad = sorted({c for c in rel if c in UNLINKABLE}) if create else []
        if bad:
            raise PathRefused(note, f"holds {' '.join(bad)}, which a [[link]] cannot name")
        return rel

    def _resolve(self, note: str, as_link: bool = True) -> int:
        return self.live.resolve(note, as_link)

    def _row(self, note_id: int) -> NoteRow:
        if (row := self.index.note(note_id)) is None:
            raise NoteNotFound(str(note_id))
        return row

    def _record(self, note_id: int) -> NoteRecord:
        row = self._row(note_id)
        return record_of(row, self.store.read_text(row.path),
                         self._with_files(note_id, self._link_infos(note_id)))

    def _link_infos(self, note_id: int) -> list[LinkInfo]:
        return link_infos(self.live.links_of(note_id), self.resolver().id_path)

    def _with_files(self, note_id: int, infos: list[LinkInfo]) -> list[LinkInfo]:
        """`infos` (links of note `note_id`) with `attachment` set on each attachment link
        that names an existing file, as `links` and `read` both give them (the folder walked
        once, only when the note has such a link)."""
        if not any(i.resolved is None and is_attachment(i.target) for i in infos):
            return infos
        files, source = self.store.attachments(), self.path_of(note_id)
        return [replace(i, attachment=attachment_path(i.target, source, files))
                if i.resolved is None and is_attachment(i.target) else i for i in infos]


def within(count: int, limit: int | None, what: str) -> None:
    """QuotaExceeded when a result of `count` items would pass `limit` (checked first)."""
    if limit is not None and count > limit:
        raise QuotaExceeded(f"{what} in one result ({count}; ask for less: a limit and an "
                            "offset give one page)", limit)


def page_of(offset: int, count: int | None) -> slice:
    """The page of `count` items (None: all) from position `offset` on."""
    return slice(offset, None if count is None else offset + count)
