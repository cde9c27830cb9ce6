"""The composition root: build a Vault (engine, encoder, reranker, learning) from a Config."""

from __future__ import annotations

from pathlib import Path

from vault import MiniLmEncoder, OnnxCrossEncoder, SearchEngine, SearchParams, Vault

from .config import Config


def search_params(cfg: Config) -> SearchParams:
    """SearchParams from the [search] and [rerank] sections of rmh.toml."""
    base = SearchParams()
    weights = dict(base.weights)
    weights.update(cfg.search.weights)
    return SearchParams(
        weights=weights,
        rrf_k=cfg.search.rrf_k,
        rerank_top_n=cfg.rerank.top_n,
        rerank_keep=cfg.rerank.keep,
    )


def open_vault(cfg: Config, *, dense: bool = True, create: bool = False) -> Vault:
    """Open (or with `create`, initialise) the configured vault with its full search engine.

    `dense=False` skips loading the ONNX embedder (lexical, graph and conjunctive signals only).
    """
    root: Path = cfg.require_vault()
    vault = Vault.init(root) if create else Vault.open(root)
    encoder = MiniLmEncoder() if dense else None
    reranker = OnnxCrossEncoder.load(Path(cfg.rerank.model_dir)) if cfg.rerank.model_dir else None
    vault.engine = SearchEngine(
        search_params(cfg), encoder=encoder, reranker=reranker, cache=vault.index
    )
    return vault
