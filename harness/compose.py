"""The composition root: build a Vault (engine, encoder, reranker, learning) from a Config.

This is where the wall clock enters rmh: learning receives `time.time` here, so everything
inside `vault` stays a pure function of its inputs.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from vault import (
    LEDGER_FILE,
    SESSIONS_DIR,
    DenseParams,
    EmbeddingCache,
    IvfParams,
    Ledger,
    MiniLmEncoder,
    OnnxCrossEncoder,
    SearchEngine,
    SearchParams,
    SessionLocks,
    SharedEmbeddingCache,
    TieredEmbeddingCache,
    Vault,
)

from .config import Config, load

log = logging.getLogger("rmh.embed")


def search_params(cfg: Config) -> SearchParams:
    """SearchParams from the [search] and [rerank] sections of rmh.toml."""
    return SearchParams(
        weights=dict(cfg.search.weights),
        rrf_k=cfg.search.rrf_k,
        rrf_depth=cfg.search.rrf_depth,
        redundancy_head=cfg.search.redundancy_head,
        max_note_units=cfg.search.max_note_units,
        beta=cfg.search.cooccurrence,
        push_above=cfg.search.push_above,
        dense=DenseParams(approx_above=cfg.search.dense_approx_above,
                          ivf=IvfParams(nprobe=cfg.search.dense_nprobe)),
        rerank_top_n=cfg.rerank.top_n,
        rerank_keep=cfg.rerank.keep,
    )


def open_ledger(vault: Vault) -> Ledger:
    """The vault's learned-state ledger, on the wall clock."""
    return Ledger.open(vault.root / ".rmh" / LEDGER_FILE, clock=time.time)


@functools.cache
def shared_encoder() -> MiniLmEncoder:
    """The process's one embedder: loaded on the first open that wants dense retrieval; its
    onnxruntime session is created on its first encode (a dense stage that runs)."""
    return MiniLmEncoder()


@functools.cache
def shared_embedding_cache(path: str) -> SharedEmbeddingCache:
    """The process's one handle on the user-level embedding cache at `path` (it opens a
    connection per operation, so holding it costs nothing); its first failure is logged once
    (stderr when logging is not configured) and turns it off."""
    return SharedEmbeddingCache(Path(path), on_error=log.warning)


def embedding_cache(cfg: Config, vault: Vault) -> EmbeddingCache:
    """Where the vault's chunk embeddings are read and written: its own index, then (unless
    [embed] shared_cache is "") the user-level cache shared by every vault."""
    if not cfg.embed.shared_cache:
        return vault.index
    return TieredEmbeddingCache(vault.index, shared_embedding_cache(cfg.embed.shared_cache))


def open_vault(
    cfg: Config, *, dense: bool = True, create: bool = False, learning: bool = True
) -> Vault:
    """Open (or with `create`, initialise) the configured vault with its full search engine.

    `dense=False` skips loading the ONNX embedder (lexical, graph and conjunctive signals only);
    `learning=False` leaves usage unrecorded (the ranking is then the learning-free one).
    """
    root: Path = cfg.require_vault()
    vault = Vault.init(root) if create else Vault.open(root)
    encoder = shared_encoder() if dense else None
    reranker = OnnxCrossEncoder.load(Path(cfg.rerank.model_dir)) if cfg.rerank.model_dir else None
    vault.engine = SearchEngine(
        search_params(cfg), encoder=encoder, reranker=reranker, cache=embedding_cache(cfg, vault),
        scratch=str(root / ".rmh"),  # the dense IVF's codes, above approx_above chunks
    )
    if learning:
        vault.usage = open_ledger(vault)
    return vault


class LedgerSessions:
    """Session hooks for the server: start and end sessions in the learning ledger.

    Liveness (issue 13): each session this process serves holds its lock file under
    VAULT/.rmh/sessions/ (vault SessionLocks) until it ends or the process dies; an open
    session in the ledger whose lock nobody holds is dead and is recovered (its rewards
    applied) at the next `recover()` or session start, at once, with no idle timer."""

    def __init__(self, ledger: Ledger, root: Path) -> None:
        self.ledger = ledger
        self.locks = SessionLocks(root / ".rmh" / SESSIONS_DIR)

    def recover(self) -> list[str]:
        """End every dead open session now (the server calls this as it starts)."""
        return self.ledger.recover(time.time(), alive=self.locks.alive)

    def start(self, session: str) -> Mapping[str, Any]:
        self.locks.hold(session)
        recovered = self.ledger.start_session(session, time.time(), alive=self.locks.alive)
        return {"recovered_sessions": recovered}

    def end(self, session: str) -> Mapping[str, Any]:
        try:
            applied = self.ledger.end_session(session, time.time())
        finally:
            self.locks.release(session)
        return {"rewards_applied": applied}


def plain_vault(vault: str | None) -> Vault:
    """The configured vault as `Vault.open` gives it: no configured engine, no ledger attached
    (for commands that open the learning ledger themselves)."""
    return Vault.open(load(vault=vault).require_vault())
