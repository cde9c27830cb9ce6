"""The sections of `rmh.toml`, each a frozen dataclass: its keys, their defaults and what they
mean. What each key allows is harness/config_schema.py's `RULES`; every section checks itself
against them when it is made (from the file or in code), so no value out of range is ever held.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .config_schema import ConfigError, check_section
from .run_bound import TIMEOUT_S


@dataclass(frozen=True)
class SearchSection:
    """Retrieval: fusion weights per signal, the RRF constant, default k, the dense units
    (chunks) embedded per note (0 = no cap; vault.SearchParams.max_note_units), the weight
    of learned co-occurrence edges next to wiki-links in PageRank (vault.SearchParams.beta),
    and the scale switches: notes ranked per signal in fusion (`rrf_depth`), notes from
    which PageRank is pushed (`push_above`), chunks above
    which the dense index is an int8 IVF (`dense_approx_above`) and the lists it scans per
    query (`dense_nprobe`); 0 turns either switch off (docs/scale.md, BENCHMARKS.md); the
    largest IVF (chunks) trained again at every change (`dense_retrain_max_rows`; a larger
    one keeps its lists until `rmh index`: vault/retrieval/signals/dense.py; 0 = never), and
    the share of such an IVF's rows changed since its training at which a running process
    trains it again and `rmh status`/`doctor` warn (`dense_retrain_share`, 0..1, 0: at any change;
    vault/retrieval/dense_health.py).
    Learning in ranking: `scope`, the query's top hits near which warmth and co-occurrence
    act (vault.SearchParams.scope; 0 = everywhere), and `prior_scale`, the size of the
    learned prior (vault.SearchParams.prior_scale; 0 = learned usefulness never ranks);
    both >= 0. `weights.couse` / `weights.spread` switch on the query-dependent co-use and
    spreading-activation channels (vault/retrieval/association.py; 0, off, by default);
    `weights.asked` the query-log neighbours, with its cosine floor `weights.asked_floor`
    (vault/learning/asked.py; needs the dense encoder; 0, off, by default); `weights.passed`
    demotes notes passed over more often than used, whatever the query
    (vault/retrieval/scope.py `passed_over_stage`); `weights.when` lifts the notes dated in the
    time the query names (vault/retrieval/when.py; 1.0, on, by default)."""

    k: int = 10
    rrf_k: int = 60
    max_note_units: int = 64
    cooccurrence: float = 0.0  # vault.SearchParams().beta; tests/harness/test_config_search.py
    rrf_depth: int = 1000
    push_above: int = 50_000
    dense_approx_above: int = 200_000
    dense_nprobe: int = 32
    dense_retrain_max_rows: int = 250_000  # vault.DenseParams().retrain_max_rows
    dense_retrain_share: float = 0.1  # vault.DenseParams().retrain_share
    redundancy_head: int = 0  # vault.SearchParams.redundancy_head: the conjunctive gate
    scope: int = 5  # vault.SearchParams().scope
    prior_scale: float = 0.2  # vault.SearchParams().prior_scale
    calibrate: bool = False  # vault.SearchParams.calibrate: fusion weights from pseudo-queries
    cloze: bool = False  # vault.SearchParams.cloze: the conjunctive weight from cloze queries
    second_pass: bool = True  # vault.SearchParams.second_pass: the passage pass over the head
    weights: Mapping[str, float] = field(default_factory=dict)


    def __post_init__(self) -> None:
        check_section("search", self)


@dataclass(frozen=True)
class RerankSection:
    """The optional ONNX cross-encoder: a folder holding model.onnx and tokenizer.json."""

    model_dir: str = ""
    top_n: int = 15
    keep: int = 10
    timeout_s: float = TIMEOUT_S  # one model run; past it the query keeps the fused order


    def __post_init__(self) -> None:
        check_section("rerank", self)


@dataclass(frozen=True)
class LlmSection:
    """The sub-LLM behind rlm_call: any OpenAI-compatible chat-completions endpoint."""

    base_url: str = ""
    api_key: str = field(default="", repr=False)  # never printed: it stays on the trusted side
    model: str = ""
    timeout_s: float = 60.0
    max_retries: int = 2
    calls_per_exec: int = 15
    in_flight: int = 5
    slice_max_chars: int = 60_000
    max_tokens: int = 1024
    temperature: float = 0.0
    retry_backoff_s: float = 0.5  # wait before retry n: retry_backoff_s * 2**(n-1), capped at 8 s


    def __post_init__(self) -> None:
        check_section("llm", self)


@dataclass(frozen=True)
class SandboxSection:
    """The REPL worker's limits. `tier`: auto | bwrap | landlock | seccomp (sandbox.TIER_NAMES).
    Write budgets for host functions called from the REPL (harness/write_quota.py): bytes and
    distinct notes written, per exec and per session. `worker_user`: who untrusted code runs
    as when rmh runs as root: "auto" (user rmh-sandbox if it exists, else uid/gid 65534), a
    user name, or "UID:GID" (never 0). `max_tasks`: threads one worker may run at once."""

    deadline_s: float = 30.0
    memory_mb: int = 1024
    output_cap: int = 65_536
    unsafe_no_sandbox: bool = False
    tier: str = "auto"
    write_bytes_per_exec: int = 8 << 20
    notes_per_exec: int = 200
    write_bytes_per_session: int = 64 << 20
    notes_per_session: int = 2_000
    worker_user: str = "auto"
    max_tasks: int = 1024

    def __post_init__(self) -> None:
        check_section("sandbox", self)


@dataclass(frozen=True)
class EmbedSection:
    """Embedding: `shared_cache` is the user-level embedding cache file shared by every vault
    (vault.SharedEmbeddingCache), consulted after a vault's own cache and filled with it.
    `load` defaults it to $XDG_CACHE_HOME/rmh/embeddings.sqlite (else
    ~/.cache/rmh/embeddings.sqlite); $RMH_EMBED_CACHE overrides; "" turns it off (also the
    default when neither XDG_CACHE_HOME nor HOME is set). `graph_cache` is the folder where
    the embedder's optimized ONNX graph is saved once and loaded by later processes (vault
    onnx_cache.py; ~90 MB, one for every vault): default $XDG_CACHE_HOME/rmh (else
    ~/.cache/rmh); $RMH_GRAPH_CACHE overrides; "" turns it off."""

    shared_cache: str = ""
    graph_cache: str = ""

    def __post_init__(self) -> None:
        check_section("embed", self)


@dataclass(frozen=True)
class HooksSection:
    """Agent-client hooks (harness/hooks.py): words of memory injected with each prompt and
    at session start, the share of a prompt's search terms a memory line must hold to be
    shown (the "nothing relevant" floor), the hits searched; `engine`: the prompt hook opens
    the vault and uses the full search engine (`dense`: with embeddings) instead of the
    hooks' own FTS5 index (harness/hooks_index.py). Off by default: a hook is a new process,
    and preparing the engine costs seconds per prompt on a large vault (NOTES/BENCHMARKS).
    `daemon`: the session-start hook starts `rmh hooks daemon` (harness/hooks_daemon.py),
    which keeps the engine warm (with embeddings when `dense`) for the prompt hook."""

    prompt_words: int = 120
    start_words: int = 150
    min_term_share: float = 0.3
    k: int = 20
    engine: bool = False
    dense: bool = False
    daemon: bool = True  # session start starts a warm daemon the prompt hook asks first
    daemon_wait_s: float = 0.2  # the prompt hook's wait for the daemon's answer


    def __post_init__(self) -> None:
        check_section("hooks", self)


@dataclass(frozen=True)
class ExtractSection:
    """Conversation extraction (`rmh ingest`, the session-end and pre-compact hooks): where a
    turn's entities come from. `entities`: "auto" (spaCy's parse when the `nlp` extra is
    installed, else the rules), "rules" (no parse), "spacy" (the parse; an error when it is not
    installed), "llm" (the NDM seed's step: the [llm] model lists each turn's entities,
    harness/llm_entities.py, at most `llm_max_calls` calls per ingest; answers cached in
    VAULT/.rmh/entities-llm.sqlite, so re-ingest needs no LLM; else "auto")."""

    entities: str = "auto"
    llm_max_calls: int = 10_000
    file_bytes: int = 256 << 20  # most bytes of a conversation file read (harness/extraction.py)

    def __post_init__(self) -> None:
        check_section("extract", self)


@dataclass(frozen=True)
class LearningSection:
    """Retention of the learning log VAULT/.rmh/learned.sqlite (vault LedgerLimits;
    vault/learning/compact.py): `session_bytes`, what one session's searches, reads and
    writes may add to it (past it they are not recorded, and a search's result says so);
    `log_bytes`, its size past which the oldest events are folded into a stored base state
    (keeping half of it). Sizes count each event's payload plus 32 bytes; 0 turns a bound
    off, else it is at least 1024 (config_schema.MIN_LOG_BOUND)."""

    session_bytes: int = 8 << 20
    log_bytes: int = 64 << 20

    def __post_init__(self) -> None:
        check_section("learning", self)


@dataclass(frozen=True)
class Config:
    """Everything rmh reads from outside, in one frozen value."""

    vault: Path | None
    search: SearchSection = field(default_factory=SearchSection)
    rerank: RerankSection = field(default_factory=RerankSection)
    llm: LlmSection = field(default_factory=LlmSection)
    sandbox: SandboxSection = field(default_factory=SandboxSection)
    embed: EmbedSection = field(default_factory=EmbedSection)
    hooks: HooksSection = field(default_factory=HooksSection)
    extract: ExtractSection = field(default_factory=ExtractSection)
    learning: LearningSection = field(default_factory=LearningSection)
    # Fault injection for crash tests and benchmarks ($RMH_FAULT_AFTER_OPS=N): the vault's
    # store SIGKILLs the process right after its N-th file operation (vault.Store).
    fault_after_ops: int | None = None

    def require_vault(self) -> Path:
        """The vault folder, or a ConfigError saying how to name one."""
        if self.vault is None:
            raise ConfigError("no vault given: pass --vault PATH or set RMH_VAULT")
        return self.vault
