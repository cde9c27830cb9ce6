"""The Vault facade: the only writer of vault files, and the one door to the index.

Every read and search first reconciles the index with the folder (cheap when nothing changed),
so an edit made in Obsidian is seen by the next call. Writes go through the store's atomic
write and are indexed before the call returns. Usage facts go to a `UsageRecorder` (learning).

`Vault` is built in layers, each a module under 400 lines: vault/parts.py (`VaultParts`: the
open parts and the helpers every operation shares), vault/writes.py (`VaultWrites`: write,
edit, delete, move, batches), vault/reads.py (`VaultReads`: names, reading, links) and this
module (opening, search, erasure, health).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np

from . import erasure
from .archive_writes import finish_left
from .learning.ledger import LEDGER_FILE, Ledger
from .learning.read_only import highest_note_id
from .learning.usage import NullUsage, UsageRecorder, examination_probability
from .notes.rows import NoteRow
from .reads import VaultReads
from .retrieval.encoders import Encoder, Progress
from .retrieval.hits import SearchResult, with_basis
from .retrieval.pipeline import SearchEngine, SearchParams
from .retrieval.snippets import with_snippets
from .retrieval.when import clock_day
from .storage import leftovers
from .storage.doctor import doctor_report
from .storage.embeddings import EmbeddingCache
from .storage.erase import ErasurePlan
from .storage.fileops import alive
from .storage.folders import NATIVE as NATIVE_STAT_LOOP
from .storage.index import Index, StatRow
from .storage.intents import Journal
from .storage.state_folder import state_folder
from .storage.store import Store
from .storage.sync import SyncReport
from .storage.watch import Watcher
from .untyped_errors import writable
from .writes import VaultWrites

STATE_DIR = ".rmh"
INDEX_FILE = "index.sqlite"


class Vault(VaultWrites, VaultReads):
    """One open vault: folder, index, search engine and usage recorder."""

    # -- lifecycle ------------------------------------------------------------------------

    @staticmethod
    def state_dir(root: Path, *, create: bool = False) -> Path:
        """The vault's own folder (`root/.rmh/`), made first with `create` (the vault folder
        too); NotAVault when missing, PathRefused when a symlink leaving the vault (storage/
        state_folder.py). Where a ledger is opened before its vault (`open(usage=...)`)."""
        return state_folder(root, STATE_DIR, create=create)

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
        own_files: Callable[[list[str]], object] | None = None,
        retry_at_rest: bool = False,
    ) -> Vault:
        """Open an initialised vault (one with a `.rmh/` folder); NotAVault otherwise.

        The one constructor: the vault is built whole, with its search `engine` (or a function
        building it from the vault's own embedding cache, the index) and its usage recorder
        (learning; default: none), and no part is replaced afterwards. First, multi-file
        operations a killed process left are finished (storage/intents.py; `doctor` lists them).
        With `auto_sync` every call first syncs the index with the folder; with `watch` too
        (Linux) change notification replaces the full scan per call. `fault_after`: Store's
        fault injection. `own_files(needles)` erases the caller's own files (the hooks' memory)
        in each erasure a killed process left, before its intent goes (vault/erasure_steps.py;
        `retry_at_rest`: erasure.recover's `at_rest`). On failure `usage` is closed. A vault
        whose `.rmh/` this process may not write (a read-only mount, another owner) opens read
        only: nothing is recovered or cleaned, the index is read as its owner leaves it, and
        every write raises ReadOnlyVault before its first change."""
        recorder = usage if usage is not None else NullUsage()
        try:
            state = cls.state_dir(root)
            read_only = not writable(str(state), INDEX_FILE)
            store = Store(root, fault_after=fault_after, read_only=read_only, held=True)
            if not read_only:  # a read-only vault leaves its intents to its owner (doctor)
                own = recorder if isinstance(recorder, Ledger) else None  # else its file's
                finish_left(store, own)  # what a dead process left, then at every lock taken
                store.lock.on_acquire = lambda: finish_left(store, own)  # from free
            held = store.state  # `.rmh/` as opened, whatever takes its name later
            index = Index.open(held / INDEX_FILE, read_only=read_only,
                               id_floor=lambda: highest_note_id(held / LEDGER_FILE))
            auto_sync = auto_sync and not read_only  # the index is read as its owner left it
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
            if watcher is not None:  # its scan also sweeps stale temporaries (live.py)
                vault.opened = vault.live.opening_sync()
            if not isinstance(recorder, NullUsage) and not read_only:  # needs the ledger
                vault.erasures_recovered = erasure.recover(store, index, built.cache, recorder,
                    vault.live.sync_paths, own_files, at_rest=retry_at_rest)
            else:  # never served while pending (vault/erasure_steps.py)
                erasure.refuse_pending(store, "this open cannot finish it (the vault is read "
                                       "only for this process)" if read_only else
                                       "this command opens no learning log to redact")
            vault.live.guard = erasure.PendingGuard(store)  # another's erasure stops calls
        except BaseException:
            vault.close()
            raise
        return vault

    @property
    def root(self) -> Path:
        return self.store.root

    @property
    def read_only(self) -> bool:
        """Whether this vault was opened read only (`open`)."""
        return self.store.read_only

    def close(self) -> None:
        """Close the usage recorder and the index. A full disk failing the ledger's final
        checkpoint is a warning: its log is committed already (the WAL holds it)."""
        try:
            self._learn(self.usage.close)
        finally:
            self.live.close()

    def __enter__(self) -> Vault:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- index --------------------------------------------------------------------------------

    def sync(self, *, postpone_full: bool = False) -> SyncReport:
        """Reconcile the index with the folder now (read only: nothing to reconcile into; its
        index is read as its owner left it). With `postpone_full` (status, doctor) a full disk
        postpones it as the open's is (`live.opening_sync`: the index as it is, its `errors`
        say so); without (`rmh index`, asked to write it), DiskFull."""
        if self.read_only:
            return SyncReport(generation=self.index.generation())
        return self.live.opening_sync() if postpone_full else self.live.sync()

    # -- search ---------------------------------------------------------------------------------

    def shown(self, query: str, notes: Sequence[str], *, session: str | None = None) -> None:
        """Log `notes`, in this order, as shown for `query`: what `search` logs for its hits,
        for a result put together elsewhere (the ask loop's answer set)."""
        self.live.fresh()
        ids = [self._resolve(n) for n in notes]
        shown = [(i, r, examination_probability(r)) for r, i in enumerate(ids)]
        graph = self._snapshot().corpus.graph
        self._learn(lambda: self.usage.on_search(session, query, shown, graph))

    def search(self, query: str, k: int = 10, *, session: str | None = None,
               as_of: float | None = None, learn: bool = True,
               history: bool = False, now: date | None = None) -> SearchResult:
        """Hybrid search; hits carry snippets and receipts naming their `basis` (index
        generation, learned event seq, clock). Logged as a retrieved event unless `learn` is
        False or `as_of` is given (then ranked on the learned state replayed up to that time).
        Claims no longer believed (rejected or superseded facts, notes/trust.py) are left out
        unless `history`; with it they come after the current ones. `now`, the date the query
        is asked on (default: the day of the learning clock, UTC; none without a ledger),
        places the time the query names ("four weeks ago", retrieval/when.py); the basis then
        names the clock whose day did."""
        self.live.fresh()
        corpus = self.corpus()
        held = self._held_in(corpus, query)
        learned = self.usage.learned(corpus.ids, as_of, query=query, held=held)
        day = clock_day(learned.clock) if now is None else now
        stale = self._stale.mask(corpus)
        found = self.engine.search(
            corpus, query, k, warmth=learned.warmth, prior=learned.prior, free_prior=learned.free,
            cooccurrence=learned.cooccurrence, expansion=learned.expansion, asked=learned.asked,
            whole=learned.whole, archived=None if history or stale is None else stale, now=day)
        # the clock is the basis when something learned was read at it or its day placed the
        # time the query names (no state and no time: no clock)
        timed = now is None and found.stages.get("when", "").startswith("ran")
        result = with_basis(found, {"generation": corpus.generation, "learned_seq": learned.seq,
                                    "clock": learned.clock if learned.seq or timed else None})
        result = with_snippets(result, corpus)
        if history and stale is not None:  # the current belief first, then the history
            old = {corpus.ids[i] for i in np.flatnonzero(stale).tolist()}
            result = replace(result, hits=tuple(sorted(
                result.hits, key=lambda h: h.id in old)))  # stable: rank order kept within
        if learn and as_of is None:
            shown = [(h.id, r, examination_probability(r)) for r, h in enumerate(result.hits)]
            graph = self._snapshot().corpus.graph
            result = self._log_search(result, session, query, shown, graph)
        return result

    def today(self) -> date | None:
        """The day of the vault's clock (UTC; its usage recorder's), None without one: the day
        a query is asked on when the caller gives none (retrieval/when.py)."""
        return clock_day(self.usage.now())

    # -- erasure ---------------------------------------------------------------------------------

    def forget_plan(self, notes: Sequence[str] = (), subject: str = "") -> ErasurePlan:
        """What `forget` would erase: the notes named, and every note naming `subject`."""
        self.live.fresh()
        p = self.engine.params
        return erasure.plan(self.store, self.index, {self._resolve(n, False) for n in notes},
                            subject.strip(), self.engine.encoder, p.max_tokens, p.max_note_units)

    def forget(self, todo: ErasurePlan, extra_files: Sequence[Path] = (),
               before: Callable[[], object] | None = None,
               settings: Sequence[Path] = ()) -> erasure.Erased:
        """Erase for good what `todo` names (folder, trash, index, embedding caches, learned
        log), vacuum, and prove it (vault/erasure.py; the vault's files, `extra_files`; the
        `settings` files as storage/erase.py `scan` reads them). `before`: see erasure.py."""
        return erasure.execute(self.store, self.index, self.engine.cache, self.usage, todo,
                               self.live.sync_paths, extra_files, before, settings)

    # -- what the shell reads (harness never reaches into the parts) -------------------------

    def prepare(self, progress: Progress | None = None, retrain: bool = False) -> dict[str, Any]:
        """Build every derived structure for the notes as they are now, embedding what the
        cache lacks (SearchEngine.prepare: `retrain`); `progress` reports embedding."""
        self.live.fresh()
        return self.engine.prepare(self.corpus(), progress=progress, retrain=retrain)

    @property
    def dense(self) -> bool:
        """Whether search has its dense signal (an encoder was given)."""
        return self.engine.encoder is not None

    @property
    def reranks(self) -> bool:
        """Whether search ends with the cross-encoder stage (a reranker was given)."""
        return self.engine.reranker is not None

    def embedding_setup(self) -> tuple[Encoder, EmbeddingCache, int, int] | None:
        """What dense search embeds with: the encoder, its cache, and the chunking bounds
        (tokens per unit, units per note); None without an encoder or a cache."""
        encoder, cache = self.engine.encoder, self.engine.cache
        if encoder is None or cache is None:
            return None
        return encoder, cache, self.engine.params.max_tokens, self.engine.params.max_note_units

    def calibration(self) -> str:
        """The fusion calibration search uses (retrieval/calibration.py): "off", why none is
        ever made with these settings, "not made yet" (made at the first search that needs
        it), or what it chose and why."""
        known, never = self.engine.calibrator.known(), self.engine.never_calibrated()
        return never or ("not made yet" if known is None else known.describe())

    def counts(self) -> dict[str, int]:
        """Notes, links and skipped files in the index."""
        return self.index.counts()

    def dense_health(self, chunks: int | None = None, build: bool = False) -> dict[str, Any]:
        """SearchEngine.dense_health of the notes as they are (`chunks`: theirs, if counted)."""
        return self.engine.dense_health(self.corpus(), chunks, build)

    def index_stats(self) -> dict[str, StatRow]:
        """Each note's stat row (path -> size, mtime, ...), as the index holds them."""
        self.live.check()
        return self.index.stats()

    def note_rows(self) -> Iterator[NoteRow]:
        """Every note's index row, in id order, read in one transaction."""
        self.live.check()
        with self.index.reading():
            yield from self.index.iter_notes()

    def note_row(self, note_id: int) -> NoteRow | None:
        """The index row of note `note_id`, or None when there is none."""
        self.live.check()
        return self.index.note(note_id)

    def note_id(self, path: str) -> int | None:
        """The id of the note at vault-relative `path`, or None (no name resolution)."""
        self.live.check()
        return self.index.note_id(path)

    @property
    def ledger(self) -> Ledger | None:
        """The learning ledger when usage is recorded to one (None: learning off)."""
        return self.usage if isinstance(self.usage, Ledger) else None

    # -- health ----------------------------------------------------------------------------------

    def change_detection(self) -> dict[str, Any]:
        """How calls see edits made outside rmh: `watcher` (Linux inotify: only its paths are
        synced) or not (every call stats every note), `auto_sync`, the full sync's stat loop:
        "c" (storage/_stat_loop.c) or "python" (no compiler, or RMH_NO_NATIVE; ~1.7x slower)."""
        return {"auto_sync": self.live.auto_sync, "watcher": self.watcher is not None,
                "stat_loop": "c" if NATIVE_STAT_LOOP else "python"}

    def doctor(self, *, settle_leftovers: bool = False) -> dict[str, Any]:
        """Dangling links, missing attachments, parse errors, orphans, skipped files, counts
        (of the index as it is, on a full disk: `sync_errors` says so), the hidden files rmh
        left beside notes (`leftovers`; `settle_leftovers`: settled first, never losing a
        byte, what was done in `settled`: storage/leftovers.py)."""
        report = self.sync(postpone_full=True)
        self.corpus()
        out = doctor_report(report, self._snapshot(), self.index, self.store.attachments())
        out["intents"] = Journal(self.store).report()
        seen = None if self.read_only or report.errors else report.temps  # the scan's: one walk
        if settle_leftovers:
            out["settled"] = leftovers.settle(self.store, alive, seen)
        out["leftovers"] = [left.to_json() for left in leftovers.find(self.store, alive, seen)]
        return out

