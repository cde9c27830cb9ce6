"""The composition root: build a Vault (engine, encoder, reranker, learning) from a Config.

This is where the wall clock enters rmh: learning receives `time.time` here, so everything
inside `vault` stays a pure function of its inputs.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from vault import (
    LEDGER_FILE,
    SESSIONS_DIR,
    DenseParams,
    DiskFull,
    EmbeddingCache,
    ErasurePending,
    IvfParams,
    Ledger,
    LedgerError,
    LedgerLimits,
    MiniLmEncoder,
    ModelUnavailable,
    NullUsage,
    OnnxCrossEncoder,
    ReadOnlyUsage,
    ReadOnlyVault,
    RunBound,
    SearchEngine,
    SearchParams,
    SessionLocks,
    SharedEmbeddingCache,
    TieredEmbeddingCache,
    Vault,
    held_state,
    is_disk_full,
    no_space,
    open_read_only_ledger,
    operation_made,
    writable,
)

from . import hooks_forget, llm_entities
from .config import Config, load
from .config_file import user_path
from .run_bound import WallClock

log = logging.getLogger("rmh.embed")


def search_params(cfg: Config) -> SearchParams:
    """SearchParams from the [search] and [rerank] sections of rmh.toml."""
    return SearchParams(
        weights=dict(cfg.search.weights),
        rrf_k=cfg.search.rrf_k,
        rrf_depth=cfg.search.rrf_depth,
        redundancy_head=cfg.search.redundancy_head,
        calibrate=cfg.search.calibrate,
        cloze=cfg.search.cloze,
        second_pass=cfg.search.second_pass,
        max_note_units=cfg.search.max_note_units,
        beta=cfg.search.cooccurrence,
        push_above=cfg.search.push_above,
        scope=cfg.search.scope,
        prior_scale=cfg.search.prior_scale,
        dense=DenseParams(approx_above=cfg.search.dense_approx_above,
                          retrain_max_rows=cfg.search.dense_retrain_max_rows,
                          retrain_share=cfg.search.dense_retrain_share,
                          ivf=IvfParams(nprobe=cfg.search.dense_nprobe)),
        rerank_top_n=cfg.rerank.top_n,
        rerank_keep=cfg.rerank.keep,
    )


def ledger_limits(cfg: Config) -> LedgerLimits:
    """The learning log's bounds as rmh.toml's [learning] sets them."""
    return LedgerLimits(session_bytes=cfg.learning.session_bytes,
                        log_bytes=cfg.learning.log_bytes)


def open_ledger(root: Path, *, create: bool = False, recover: bool = True,
                limits: LedgerLimits | None = None) -> Ledger:
    """The learned-state ledger of the vault at `root`, on the wall clock (NotAVault when
    `root` is no vault; `create` makes it one first, as `Vault.init` does). DiskFull when
    the disk has no room for it to open (SQLite says only "disk I/O error" then);
    ReadOnlyVault when this process may not write it (a read-only mount, another owner's).

    Every process that opens it (the server, the CLI's search, learning, doctor...) first
    recovers the dead sessions: those whose serving process is gone (issue 31; `liveness`),
    and those with no recorded process idle for longer than `stale_session_s`. On a full
    disk that recovery waits for a later process (a warning says so). `limits`: the log's
    bounds (default: the vault's configuration, `ledger_limits`)."""
    state = held_state(root, create=create)  # never a folder swapped in meanwhile
    if not writable(str(state), LEDGER_FILE):
        raise ReadOnlyVault(LEDGER_FILE)
    cfg = load(vault=root)
    try:  # $RMH_FAULT_AFTER_OPS counts its transactions too (vault storage/faults.py)
        ledger = Ledger.open(state / LEDGER_FILE, clock=time.time,
                             limits=limits or ledger_limits(cfg), fault_after=cfg.fault_after_ops)
    except LedgerError as exc:
        if no_space(str(state)):
            raise DiskFull(LEDGER_FILE) from exc
        raise
    if recover:
        try:
            recovered = ledger.recover(time.time(), alive=liveness(ledger, root))
        except Exception as exc:
            if not is_disk_full(exc):
                ledger.close()
                raise
            logging.getLogger("rmh.learning").warning("recovery postponed: %s",
                                                      DiskFull(LEDGER_FILE))
            recovered = []
        if recovered:
            logging.getLogger("rmh.learning").info("recovered dead sessions %s", recovered)
    return ledger


def liveness(ledger: Ledger, root: Path, locks: SessionLocks | None = None
             ) -> Callable[[str], bool | None]:
    """Is an open session alive? True / False from the process and lock its start event
    recorded (vault SessionLocks.verdict), None when it recorded none."""
    held = locks if locks is not None else SessionLocks(held_state(root) / SESSIONS_DIR)
    return lambda session: held.verdict(session, ledger.session_owner(session))


def _learning_or_none(root: Path, create: bool,
                      limits: LedgerLimits) -> Ledger | ReadOnlyUsage | None:
    """The ledger, or None with a warning when a full disk keeps it from opening: the
    command runs without learning (a read or search still answers; a write fails on its own
    as disk_full). On a vault read only for this process (its `.rmh/` not writable) the
    learned state read as it is (vault ReadOnlyUsage: ranks as the owner's process does,
    records nothing), else None; a warning says learning is off."""
    try:
        return open_ledger(root, create=create, limits=limits)
    except ReadOnlyVault as exc:
        usage = open_read_only_ledger(root / ".rmh" / LEDGER_FILE, clock=time.time)
        kept = "; ranked with the learned state as it is" if usage is not None else ""
        logging.getLogger("rmh.vault").warning("%s; learning is off for this run%s", exc, kept)
        return usage
    except DiskFull as exc:
        logging.getLogger("rmh.vault").warning("%s; learning is off for this run", exc)
        return None


@functools.cache
def shared_encoder(graph_folder: str = "") -> MiniLmEncoder:
    """The process's one embedder: loaded on the first open that wants dense retrieval; its
    onnxruntime session is created on its first encode (a dense stage that runs), from the
    optimized graph saved in `graph_folder` ("" = none; vault onnx_cache.py)."""
    return MiniLmEncoder(graph_folder=Path(graph_folder) if graph_folder else None)


def graph_folder(cfg: Config) -> str:
    """Where the embedder's optimized graph is kept ([embed] graph_cache; "" = nowhere)."""
    return cfg.embed.graph_cache


@functools.cache
def shared_embedding_cache(path: str) -> SharedEmbeddingCache:
    """The process's one handle on the user-level embedding cache at `path` (it opens a
    connection per operation, so holding it costs nothing); its first failure is logged once
    (stderr when logging is not configured) and turns it off."""
    return SharedEmbeddingCache(Path(path), on_error=log.warning)


def embedding_cache(cfg: Config, own: EmbeddingCache) -> EmbeddingCache:
    """Where the vault's chunk embeddings are read and written: its own index (`own`), then
    (unless [embed] shared_cache is "") the user-level cache shared by every vault."""
    if not cfg.embed.shared_cache:
        return own
    return TieredEmbeddingCache(own, shared_embedding_cache(cfg.embed.shared_cache))


RERANK_FIX = ("fix the model, or set [rerank] model_dir = \"\" in rmh.toml (and unset "
              "RMH_RERANK_MODEL) to search without a reranker")  # every open refuses till then


def load_reranker(cfg: Config) -> OnnxCrossEncoder | None:
    """The configured cross-encoder ([rerank] model_dir; None when none is), loaded and tried
    once under its timeout; ModelUnavailable saying what to do (RERANK_FIX) when it cannot."""
    if not cfg.rerank.model_dir:
        return None
    bound: RunBound = WallClock(cfg.rerank.timeout_s)  # vault reads no clock: the shell's
    try:
        return OnnxCrossEncoder.load(user_path(cfg.rerank.model_dir),  # "~/models/x" too
                                     bound=bound)
    except ModelUnavailable as exc:
        raise ModelUnavailable(exc.what, exc.reason, RERANK_FIX) from exc


def open_vault(
    cfg: Config, *, dense: bool = True, create: bool = False, learning: bool = True,
    retry_at_rest: bool = False, ledger: Ledger | None = None, rerank: bool = True,
) -> Vault:
    """Open (or with `create`, initialise) the configured vault, built whole: its full search
    engine and (with `learning`) its learning ledger are given to `Vault.open`.

    `dense=False` skips loading the ONNX embedder (lexical, graph and conjunctive signals only);
    `learning=False` leaves usage unrecorded (the ranking is then the learning-free one);
    `retry_at_rest` (`rmh doctor`): Vault.open's; `ledger`: this open ledger as the usage
    recorder (`rmh learning NOTE` reads it too; closing the vault closes it); `rerank=False`
    (`rmh doctor`, which reports the reranker itself): search without the cross-encoder.
    """
    root: Path = cfg.require_vault()
    encoder = shared_encoder(graph_folder(cfg)) if dense else None
    reranker = load_reranker(cfg) if rerank else None

    def engine(own: EmbeddingCache) -> SearchEngine:
        return SearchEngine(
            search_params(cfg), encoder=encoder, reranker=reranker,
            cache=embedding_cache(cfg, own),
            scratch=str(root / ".rmh"),  # the dense IVF's codes, above approx_above chunks
        )

    usage = ledger or ((_learning_or_none(root, create, ledger_limits(cfg)) if learning
                        else None) or NullUsage(time.time))
    with _hooks_forget_pending(root):  # a killed `rmh forget`: the hooks' files too
        return (Vault.init if create else Vault.open)(
            root, engine=engine, usage=usage, fault_after=cfg.fault_after_ops,
            own_files=functools.partial(own_files, root, fault_after=cfg.fault_after_ops),
            retry_at_rest=retry_at_rest)


@contextlib.contextmanager
def _hooks_forget_pending(root: Path) -> Iterator[None]:
    """An erasure the open could not finish (ErasurePending) is still erased from the hooks'
    own files (the prompt hook reads them without opening the vault), then raised. (One it
    finishes erases them as a step of its own, before its intent goes: `own_files`.)"""
    try:
        yield
    except ErasurePending as exc:
        with contextlib.suppress(OSError):  # a full disk: what it managed; the error stands
            own_files(root, list(exc.needles))
        raise


def own_files(root: Path, needles: Sequence[str], fault_after: int | None = None) -> bool:
    """Erasure in the shell's own files, which the vault does not know (`rmh forget`, and an
    open finishing a killed one: `Vault.open(own_files=...)`): the hooks' index and journal,
    and the LLM entity cache. True when there was a hooks' index (the caller rebuilds it).
    Each file operation counts toward `fault_after` (vault `operation_made`)."""
    done = functools.partial(operation_made, fault_after)
    had = hooks_forget.forget(root, needles, done)
    llm_entities.forget(root, needles, done)
    return had


def learning_vault(vault: str | None, *, reads_only: bool = False) -> tuple[Vault, Ledger]:
    """The configured vault as `Vault.open` gives it (no configured engine) with its learning
    ledger as its usage recorder, and that ledger: for the commands that work on learned state
    (a removal the opening sync finds is a delete event there too). Closing the vault closes
    the ledger. `reads_only`: a command that only reads learned state also answers on a vault
    this process may not write (`reading_ledger`), the ledger read as its owner left it."""
    root = load(vault=vault).require_vault()
    usage, ledger = reading_ledger(root) if reads_only else (None, open_ledger(root))
    with _hooks_forget_pending(root):  # a killed `rmh forget`: the hooks' files too
        opened = Vault.open(root, usage=usage or ledger,
                            own_files=functools.partial(own_files, root))
    return opened, ledger


def reading_ledger(root: Path) -> tuple[ReadOnlyUsage | None, Ledger]:
    """The ledger for a command that only reads learned state (`rmh learning`, `replay
    --check` and `--until`, `lifecycle` without `--apply`): `open_ledger`'s (usage None), or,
    on a vault this process may not write (a read-only mount, another owner's), the file read
    as its owner left it, with the `ReadOnlyUsage` over it that records nothing (VAULT10,
    session 36: those commands were refused as read_only_vault there, though they write
    nothing). Still ReadOnlyVault when the file cannot be read so (another version's)."""
    try:
        return None, open_ledger(root)
    except ReadOnlyVault:
        usage = open_read_only_ledger(root / ".rmh" / LEDGER_FILE, clock=time.time)
        if usage is None:
            raise
        return usage, usage.ledger


def plain_vault(vault: str | None) -> Vault:
    """The configured vault as `Vault.open` gives it: no configured engine, no ledger attached
    (for commands that open the learning ledger themselves)."""
    cfg = load(vault=vault)
    return Vault.open(cfg.require_vault(), fault_after=cfg.fault_after_ops)
