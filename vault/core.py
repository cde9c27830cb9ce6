"""The Vault facade: the only writer of vault files, and the one door to the index.

Every read and search first reconciles the index with the folder (cheap when nothing changed),
so an edit made in Obsidian is seen by the next call. Writes go through the store's atomic
write and are indexed before the call returns. Usage facts go to a `UsageRecorder` (learning).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from . import erasure
from .errors import NotAVault, NoteExists, NoteNotFound, QuotaExceeded, VaultError
from .landing import landed, tolerate_full
from .learning.usage import NullUsage, UsageRecorder, examination_probability
from .notes import edits
from .notes.hashing import content_hash
from .notes.links import Resolver, moved, relink_plan
from .notes.records import LinkInfo, MoveResult, NoteRecord, link_infos, record_of
from .notes.rows import NoteRow
from .retrieval.beliefs import StaleClaims
from .retrieval.hits import SearchResult, with_basis
from .retrieval.pipeline import SearchEngine, SearchParams
from .retrieval.snippets import with_snippets
from .storage.corpus import Corpus
from .storage.doctor import doctor_report
from .storage.embeddings import EmbeddingCache
from .storage.erase import ErasurePlan
from .storage.folders import NATIVE as NATIVE_STAT_LOOP
from .storage.guard import check_read, check_write
from .storage.index import Index
from .storage.intents import Journal, MoveIntent, Rewrite, WritesIntent, apply_move
from .storage.linkgraph import hops_from
from .storage.live import LiveIndex
from .storage.snapshot import Snapshot
from .storage.store import MAX_NOTE_BYTES, TRASH_DIR, Store
from .storage.sync import SyncReport
from .storage.watch import Watcher

STATE_DIR = ".rmh"
INDEX_FILE = "index.sqlite"


class Vault:
    """One open vault: folder, index, search engine and usage recorder."""

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
        self._stale = StaleClaims()  # rejected or superseded facts (retrieval/beliefs.py)

    def _forget(self) -> None:
        """The snapshot is about to be rebuilt from every row: drop what was derived from the
        last one first, so the two are not in memory together (storage/live.py)."""
        self._corpus = None
        self.engine.forget()

    # -- lifecycle ------------------------------------------------------------------------

    @staticmethod
    def state_dir(root: Path, *, create: bool = False) -> Path:
        """The vault's own folder (`root/.rmh/`), made first with `create` (the vault folder
        too); NotAVault when it is missing. Where a learning ledger is opened before the vault
        it is given to (`open(usage=...)`)."""
        if create:
            root.mkdir(parents=True, exist_ok=True)
            (root / STATE_DIR).mkdir(exist_ok=True)
        if not root.is_dir():
            raise NotAVault(str(root), "no such folder")
        if not (root / STATE_DIR).is_dir():
            raise NotAVault(str(root), "no .rmh folder; run `rmh init` first")
        return root / STATE_DIR

    @classmethod
    def init(cls, root: Path, **kwargs: Any) -> Vault:
        """Make `root` a vault (creating the folder and `.rmh/`) and open it."""
        cls.state_dir(root, create=True)
        return cls.open(root, **kwargs)

    @classmethod
    def open(
        cls,
        root: Path,
        *,
        engine: SearchEngine | Callable[[EmbeddingCache], SearchEngine] | None = None,
        usage: UsageRecorder | None = None,
        auto_sync: bool = True,
        watch: bool = True,
        fault_after: int | None = None,
    ) -> Vault:
        """Open an initialised vault (one with a `.rmh/` folder); NotAVault otherwise.

        The one constructor: the vault is built whole, with its search `engine` (or a
        function building it from the vault's own embedding cache, the index) and its usage
        recorder (learning; default: none), and no part is replaced afterwards. Before
        anything else, multi-file operations a killed process left unfinished are finished
        (storage/intents.py; `doctor` lists them). With `auto_sync`, every call first brings
        the index up to date with the folder; with `watch` as well (Linux), change
        notification replaces the full scan per call. `fault_after`: Store's fault injection.
        On failure `usage` is closed: it was handed over."""
        recorder = usage if usage is not None else NullUsage()
        try:
            cls.state_dir(root)
            store = Store(root, fault_after=fault_after)
            store.recovered.extend(o.to_json() for o in Journal(store).recover())
            store.clean_stale_temps()
            index = Index.open(store.root / STATE_DIR / INDEX_FILE)
        except BaseException:
            recorder.close()
            raise
        try:
            built = (engine if isinstance(engine, SearchEngine) else SearchEngine(SearchParams())
                     if engine is None else engine(index))
            # Watch before the first sync, so nothing changed in between goes unseen.
            watcher = Watcher.start(store) if auto_sync and watch else None
        except BaseException:
            index.close()
            recorder.close()
            raise
        vault = cls(store, index, built, recorder, auto_sync, watcher)
        try:
            if watcher is not None:
                vault.sync()
            if not isinstance(recorder, NullUsage):  # an erasure needs the ledger to finish
                vault.erasures_recovered = erasure.recover(
                    store, index, built.cache, recorder, vault.live.sync_paths)
        except BaseException:
            vault.close()
            raise
        return vault

    @property
    def root(self) -> Path:
        return self.store.root

    def close(self) -> None:
        """Close the usage recorder and the index. A full disk failing the ledger's final
        checkpoint is a warning: its log is committed already (the WAL holds it)."""
        try:
            self._learn(self.usage.close)
        finally:
            self.live.close()

    def _learn(self, record: Callable[[], object]) -> str | None:
        """Record one usage fact: a full disk loses the fact, never the call (landing.py)."""
        return tolerate_full(record, "learning not recorded", "learned.sqlite")

    def __enter__(self) -> Vault:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- index --------------------------------------------------------------------------------

    def sync(self) -> SyncReport:
        """Reconcile the index with the folder now."""
        return self.live.sync()

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Many writes at once (ingest): one folder sync at the start, no snapshot rebuild
        per write. Inside, names resolve against the snapshot taken when the batch began
        (plus exact paths), and each write's links resolve against it too."""
        with self.live.batch():
            self.corpus()
            yield

    @contextmanager
    def journalled(self, notes: Sequence[tuple[str, str]]) -> Iterator[None]:
        """Writes of several notes ((vault path ending in .md, text)), made by the block with
        `write`, as one operation: journalled first, so a kill inside leaves the rest to the
        next open (storage/intents.py). Holds the write lock throughout."""
        if len(notes) < 2:
            yield
            return
        with self.store.lock.held():
            journal = Journal(self.store)
            planned = [(self._new_path(p), text) for p, text in notes]
            name = journal.record(WritesIntent.plan(self.store, planned))
            try:
                yield
            finally:  # reached unless killed: this process knows what it wrote
                journal.finish(name)

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

    def _snapshot(self) -> Snapshot:
        return self.live.snapshot()

    def resolver(self) -> Resolver:
        return self._snapshot().resolver

    # -- names ----------------------------------------------------------------------------------

    def resolve(self, note: str) -> int:
        """A vault-relative path (with or without `.md`) or a title/alias -> stable note id."""
        self.live.fresh()
        return self._resolve(note)

    def _resolve(self, note: str) -> int:
        return self.live.resolve(note)

    def existing(self, ids: Iterable[int]) -> set[int]:
        """Which of these note ids name notes in the index now (after a sync)."""
        self.live.fresh()
        return self.index.present(ids)

    def path_of(self, note_id: int) -> str:
        path = self.resolver().id_path.get(note_id)
        return path if path is not None else self._row(note_id).path

    def _new_path(self, note: str) -> str:
        path = note.strip()
        return self.store.check(path if path.lower().endswith(".md") else f"{path}.md", write=True)

    def _row(self, note_id: int) -> NoteRow:
        if (row := self.index.note(note_id)) is None:
            raise NoteNotFound(str(note_id))
        return row

    # -- reading --------------------------------------------------------------------------------

    def read(self, note: str, *, session: str | None = None, learn: bool = True) -> NoteRecord:
        """The note's current text and parsed parts; logged as a read unless `learn` is False
        (a tool reading on the agent's behalf, such as the ask loop's inner reads)."""
        self.live.fresh()
        note_id = self._resolve(note)
        record = self._record(note_id)
        if learn:
            graph = self._snapshot().corpus.graph
            self._learn(lambda: self.usage.on_read(session, note_id, graph))
        return record

    def _record(self, note_id: int) -> NoteRecord:
        row = self._row(note_id)
        return record_of(row, self.store.read_text(row.path), self._link_infos(note_id))

    def _link_infos(self, note_id: int) -> list[LinkInfo]:
        return link_infos(self.live.links_of(note_id), self.resolver().id_path)

    def links(self, note: str, *, limit: int | None = None) -> list[LinkInfo]:
        """Outgoing links of a note in text order, each resolved or dangling; more than
        `limit` of them is QuotaExceeded, raised before any is rendered."""
        self.live.fresh()
        note_id = self._resolve(note)
        _within(len(self.live.links_of(note_id)), limit, "links")
        return self._link_infos(note_id)

    def backlinks(self, note: str, *, limit: int | None = None) -> list[str]:
        """Paths of the notes linking to `note`, sorted (more than `limit`: QuotaExceeded)."""
        self.live.fresh()
        snap = self._snapshot()
        referrers = snap.referrers(self._resolve(note))
        _within(len(referrers), limit, "backlinks")
        return sorted(snap.resolver.id_path[i] for i in referrers)

    def neighbors(self, note: str, hops: int = 1, *, limit: int | None = None) -> list[str]:
        """Notes within `hops` links (either direction), nearest first, then by path (more
        than `limit`: QuotaExceeded)."""
        self.live.fresh()
        note_id = self._resolve(note)
        snap = self._snapshot()
        dist = hops_from(note_id, snap.corpus.graph, hops)
        _within(len(dist) - 1, limit, "neighbors")
        paths = snap.resolver.id_path
        return [path for _, path in sorted((d, paths[n]) for n, d in dist.items() if n != note_id)]

    # -- search ---------------------------------------------------------------------------------

    def shown(self, query: str, notes: Sequence[str], *, session: str | None = None) -> None:
        """Log `notes`, in this order, as shown for `query`: what `search` logs for its hits,
        for a result put together elsewhere (the ask loop's answer set)."""
        self.live.fresh()
        ids = [self._resolve(n) for n in notes]
        shown = [(i, r, examination_probability(r)) for r, i in enumerate(ids)]
        graph = self._snapshot().corpus.graph
        self._learn(lambda: self.usage.on_search(session, query, shown, graph))

    def document_frequency(self, tokens: Sequence[str]) -> list[int]:
        """How many notes hold each token (`vault.tokenize` tokens; the search index's n_t)."""
        self.live.fresh()
        return self.engine.document_frequency(self.corpus(), tokens)

    def search(self, query: str, k: int = 10, *, session: str | None = None,
               as_of: float | None = None, learn: bool = True,
               history: bool = False) -> SearchResult:
        """Hybrid search; hits carry snippets and receipts naming their `basis` (index
        generation, learned event seq, clock). Logged as a retrieved event unless `learn` is
        False or `as_of` is given (then ranked on the learned state replayed up to that time).
        Claims no longer believed (rejected or superseded facts, notes/trust.py) are left out
        unless `history`; with it they come after the current ones."""
        self.live.fresh()
        corpus = self.corpus()
        learned = self.usage.learned(corpus.ids, as_of, query=query)
        stale = self._stale.mask(corpus)
        result = with_basis(self.engine.search(
            corpus, query, k, warmth=learned.warmth, prior=learned.prior,
            cooccurrence=learned.cooccurrence,
            archived=None if history or stale is None else stale,
        ), {"generation": corpus.generation, "learned_seq": learned.seq,  # no state: no clock
            "clock": learned.clock if learned.seq else None})
        result = with_snippets(result, corpus)
        if history and stale is not None:  # the current belief first, then the history
            old = {corpus.ids[i] for i in np.flatnonzero(stale).tolist()}
            result = replace(result, hits=tuple(sorted(
                result.hits, key=lambda h: h.id in old)))  # stable: rank order kept within
        if learn and as_of is None:
            shown = [(h.id, r, examination_probability(r)) for r, h in enumerate(result.hits)]
            graph = self._snapshot().corpus.graph
            self._learn(lambda: self.usage.on_search(session, query, shown, graph))
        return result

    # -- writing --------------------------------------------------------------------------------

    def write(self, note: str, content: str, *, session: str | None = None,
              overwrite: bool = True, expected_hash: str | None = None) -> NoteRecord:
        """Create or replace a note atomically; it is indexed before this returns. Without
        `overwrite` an existing note is refused (NoteExists); with `expected_hash` a file
        whose bytes changed since that read is refused (EditConflict; storage.guard)."""
        self.live.fresh()
        note_id = self._write_target(note)
        path = self.path_of(note_id) if note_id is not None else self._new_path(note)
        check_write(self.store, path, exists=note_id is not None, overwrite=overwrite,
                    expected_hash=expected_hash)
        stat = self.store.write_text(path, content, create_only=note_id is None and not overwrite,
                                     expected_hash=expected_hash)  # checked again under the lock
        unindexed = tolerate_full(lambda: self.live.sync_paths([path]),  # landing.py
                                  "written, not yet indexed", "index.sqlite")
        if unindexed:
            return landed(self.resolver(), stat, content, note_id, unindexed)
        new_id = self.index.note_id(path)
        if new_id is None:  # written but not indexable (e.g. the store refused it as text)
            raise self.live.not_found(path)
        record = self._record(new_id)
        linked = sorted({dst for _, dst in self.live.links_of(new_id) if dst is not None})
        graph = self._snapshot().corpus.graph
        warning = self._learn(lambda: self.usage.on_write(session, new_id, note_id is None,
                                                          linked, graph))
        return replace(record, warning=warning) if warning else record

    def _write_target(self, note: str) -> int | None:
        """The note a write replaces: a name ending in `.md` is a file path, that file only
        (writing `Sib.md` must not replace `sub/Sib.md` because its title is Sib); any other
        name resolves as everywhere (path, else title or alias). None: a new note."""
        if not note.strip().lower().endswith(".md"):
            try:
                return self._resolve(note)
            except NoteNotFound:
                return None
        return self.index.note_id(self._new_path(note))

    def edit(self, note: str, change: edits.Edit, *, session: str | None = None,
             expected_hash: str | None = None, max_bytes: int | None = None) -> NoteRecord:
        """Apply one edit (notes.edits: every byte outside its span kept), guarded like
        `write`, always against the bytes the edit was computed from. The note's size after
        the edit is computed first (`edits.size_after`, no text built): over MAX_NOTE_BYTES,
        or over `max_bytes` (a caller's write quota), it is QuotaExceeded and nothing is built
        or written."""
        self.live.fresh()
        path = self.path_of(self._resolve(note))
        text = self.store.read_text(path)
        current = check_read(path, text, expected_hash)
        size = edits.size_after(text, change)
        if size > MAX_NOTE_BYTES:
            raise QuotaExceeded(f"note size after the edit ({size} bytes)", MAX_NOTE_BYTES)
        if max_bytes is not None and size > max_bytes:
            raise QuotaExceeded(f"bytes written: the note would be {size} bytes after the edit",
                                max_bytes)
        return self.write(path, edits.apply(text, change), session=session, expected_hash=current)

    def delete(self, note: str) -> str:
        """Move a note to `.rmh/trash/` (never a hard delete); returns its vault-relative trash
        path (`.rmh/trash/...`)."""
        self.live.fresh()
        path = self.path_of(self._resolve(note))
        trashed = self.store.trash(path)
        tolerate_full(lambda: self.live.sync_paths([path]),  # reports the removal
                      "deleted, not yet out of the index", "index.sqlite")
        return f"{TRASH_DIR}/{trashed}"

    def move(self, old: str, new: str) -> MoveResult:
        """Rename a note, keeping its id, and rewrite every link to it as Obsidian does.

        The whole plan (the rename, each referrer's text now and after) is written to the
        intent journal before the first change, under the vault's write lock, so a process
        killed midway leaves a move the next open finishes (storage/intents.py). Inside a
        batch the links are rewritten too (resolved against the batch's snapshot)."""
        self.live.fresh()
        note_id = self._resolve(old)
        old_path = self.path_of(note_id)
        new_path = self._new_path(new)
        if new_path == old_path:
            return MoveResult(new_path, old_path, ())
        with self.store.lock.held():
            if self.store.stat(new_path) is not None:
                raise NoteExists(new_path)
            intent = self._move_intent(note_id, old_path, new_path)
            journal = Journal(self.store)
            name = journal.record(intent)
            try:
                outcome = apply_move(self.store, intent, name, after_rename=lambda: (
                    self.live.sync_paths([old_path, new_path])))
            except VaultError:
                if self.store.stat(old_path) is None:
                    raise  # something changed: the next open finishes or undoes the plan
                journal.finish(name)  # the rename was refused: nothing changed
                raise
            journal.finish(name)
        if outcome.written:
            self.live.sync_paths(outcome.written)
        return MoveResult(new_path, old_path, tuple(outcome.written))

    def _move_intent(self, note_id: int, old_path: str, new_path: str) -> MoveIntent:
        before = self.resolver()
        text = self.store.read_text(old_path)
        plan = relink_plan(lambda p: text if p == new_path else self.store.read_text(p),
                           self._snapshot().referrers(note_id), note_id, before,
                           moved(before, note_id, new_path), old_path, new_path)
        return MoveIntent(old_path, new_path, content_hash(text),
                          tuple(Rewrite(p, now, after) for p, now, after in plan))

    # -- erasure ---------------------------------------------------------------------------------

    def forget_plan(self, notes: Sequence[str] = (), subject: str = "") -> ErasurePlan:
        """What `forget` would erase: the notes named, and every note naming `subject`."""
        self.live.fresh()
        p = self.engine.params
        return erasure.plan(self.store, self.index, {self._resolve(n) for n in notes},
                            subject.strip(), self.engine.encoder, p.max_tokens,
                            p.max_note_units)

    def forget(self, todo: ErasurePlan, extra_files: Sequence[Path] = (),
               before: Callable[[], object] | None = None) -> erasure.Erased:
        """Erase for good what `todo` names from the folder, the trash, the index, the
        embedding caches and the learned log, vacuum, and prove it by scanning every file of
        the vault and `extra_files` (the shared embedding cache) for the erased strings.
        Journalled first (a kill midway: the next `open` with a ledger finishes it); `before`
        runs once the journal holds the plan (the caller's own derived files)."""
        return erasure.execute(self.store, self.index, self.engine.cache, self.usage, todo,
                               self.live.sync_paths, extra_files, before)

    # -- health ----------------------------------------------------------------------------------

    def change_detection(self) -> dict[str, Any]:
        """How calls see edits made outside rmh: `watcher` (Linux inotify: only the paths it
        reports are synced) or not (every call stats every note), `auto_sync`, and the stat
        loop of a full sync: "c" (vault/storage/_stat_loop.c, built at install) or "python"
        (os.lstat: no compiler at install, or RMH_NO_NATIVE set; ~1.7x slower at 10^6 notes)."""
        return {"auto_sync": self.live.auto_sync, "watcher": self.watcher is not None,
                "stat_loop": "c" if NATIVE_STAT_LOOP else "python"}

    def doctor(self) -> dict[str, Any]:
        """Dangling links, missing attachments, parse errors, orphans, skipped files, counts."""
        report = self.sync()
        self.corpus()
        out = doctor_report(report, self._snapshot(), self.index, self.store.attachments())
        out["intents"] = {"pending": Journal(self.store).pending(),
                          "recovered": list(self.store.recovered)}
        return out


def _within(count: int, limit: int | None, what: str) -> None:
    """QuotaExceeded when a result of `count` items would pass `limit` (checked before the
    items are built)."""
    if limit is not None and count > limit:
        raise QuotaExceeded(f"{what} in one result ({count}; ask for less)", limit)
