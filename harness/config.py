"""Configuration, read once: `rmh.toml` (in the vault root, or $RMH_CONFIG) and the environment.

This is the only module of rmh that reads environment variables. Every section is a frozen
dataclass; unknown keys in `rmh.toml` are an error (a typo must not silently do nothing).

Precedence for each value: explicit argument > environment variable > rmh.toml > default.
"""

from __future__ import annotations

import math
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from .config_file import beside, expand_home, fault_after, read_config, user_path
from .config_learning import LearningSection
from .hooks_client import MAX_WAIT_S
from .run_bound import TIMEOUT_S

MAX_K = 100  # the most hits one search returns: [search].k and every surface's `k`
SIGNALS = ("asked", "asked_floor", "asked_walk", "bm25", "conjunctive", "context", "couse",
           "dense", "graph", "learned", "named", "passed", "protect", "spread", "warmth",
           "when")  # vault.DEFAULT_WEIGHTS' keys (a test holds them equal; this module stays light)


class ConfigError(Exception):
    """The configuration is invalid (bad TOML, unknown key, wrong type, no vault)."""

    code_name = "config_error"


@dataclass(frozen=True)
class SearchSection:
    """Retrieval: fusion weights per signal, the RRF constant, default k, the dense units
    (chunks) embedded per note (0 = no cap; vault.SearchParams.max_note_units), the weight
    of learned co-occurrence edges next to wiki-links in PageRank (vault.SearchParams.beta),
    and the scale switches: notes ranked per signal in fusion (`rrf_depth`), notes from
    which PageRank is pushed (`push_above`), chunks above
    which the dense index is an int8 IVF (`dense_approx_above`) and the lists it scans per
    query (`dense_nprobe`); 0 turns either switch off (docs/scale.md, BENCHMARKS.md).
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
    redundancy_head: int = 0  # vault.SearchParams.redundancy_head: the conjunctive gate
    scope: int = 5  # vault.SearchParams().scope
    prior_scale: float = 0.2  # vault.SearchParams().prior_scale
    calibrate: bool = False  # vault.SearchParams.calibrate: fusion weights from pseudo-queries
    second_pass: bool = True  # vault.SearchParams.second_pass: the passage pass over the head
    weights: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not 1 <= self.k <= MAX_K:  # else every search failed as if -k had been typed
            raise ConfigError(f"rmh.toml: [search].k must be between 1 and {MAX_K}")
        unknown = sorted(set(self.weights) - set(SIGNALS))
        if unknown:  # a typo (`bm52`) meant nothing; every command reads the config
            raise ConfigError(f"rmh.toml: [search].weights.{unknown[0]} is no signal "
                              f"(known: {', '.join(SIGNALS)})")


@dataclass(frozen=True)
class RerankSection:
    """The optional ONNX cross-encoder: a folder holding model.onnx and tokenizer.json."""

    model_dir: str = ""
    top_n: int = 15
    keep: int = 10
    timeout_s: float = TIMEOUT_S  # one model run; past it the query keeps the fused order

    def __post_init__(self) -> None:
        if self.timeout_s <= 0:
            raise ConfigError("rmh.toml: [rerank].timeout_s must be above 0")


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

    def __post_init__(self) -> None:  # 0 in flight held every call to the exec's deadline
        for key in ("in_flight", "timeout_s"):  # and a timeout of 0 sent none (PLUG5)
            if getattr(self, key) <= 0:
                raise ConfigError(f"rmh.toml: [llm].{key} must be above 0")


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
        if self.daemon_wait_s > MAX_WAIT_S:  # a hook refuses a longer wait (hooks_client.py)
            raise ConfigError(f"rmh.toml: [hooks].daemon_wait_s must be at most {MAX_WAIT_S:g}")


EXTRACTORS = ("auto", "rules", "spacy", "llm")


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


_SECTIONS: dict[str, type[Any]] = {
    "search": SearchSection,
    "rerank": RerankSection,
    "llm": LlmSection,
    "sandbox": SandboxSection,
    "embed": EmbedSection,
    "hooks": HooksSection,
    "extract": ExtractSection,
    "learning": LearningSection,
}

# Environment variable -> (section, key). Documented in README.md.
_ENV: dict[str, tuple[str, str]] = {
    "OPENAI_BASE_URL": ("llm", "base_url"),
    "OPENAI_API_KEY": ("llm", "api_key"),
    "RMH_MODEL": ("llm", "model"),
    "RMH_RERANK_MODEL": ("rerank", "model_dir"),
}
# Set even to "" (which turns the shared cache off), these override rmh.toml.
_ENV_EVEN_EMPTY: dict[str, tuple[str, str]] = {
    "RMH_EMBED_CACHE": ("embed", "shared_cache"),
    "RMH_GRAPH_CACHE": ("embed", "graph_cache"),
}
_PATHS = (("rerank", "model_dir"), ("embed", "shared_cache"), ("embed", "graph_cache"))


def default_shared_cache(environ: Mapping[str, str]) -> str:
    """$XDG_CACHE_HOME/rmh/embeddings.sqlite, else $HOME/.cache/rmh/embeddings.sqlite, else ""
    (off). Read from `environ` only, so `load(env={})` never reaches the real home."""
    if environ.get("XDG_CACHE_HOME"):
        return str(Path(environ["XDG_CACHE_HOME"]) / "rmh" / "embeddings.sqlite")
    if environ.get("HOME"):
        return str(Path(environ["HOME"]) / ".cache" / "rmh" / "embeddings.sqlite")
    return ""


def default_graph_cache(environ: Mapping[str, str]) -> str:
    """$XDG_CACHE_HOME/rmh, else $HOME/.cache/rmh, else "" (off); from `environ` only."""
    shared = default_shared_cache(environ)
    return str(Path(shared).parent) if shared else ""


def home_dir(env: Mapping[str, str] | None = None) -> Path:
    """The user's home folder: $HOME (from `env`, default os.environ), else the password
    database's (`Path.home`). Where user-scope client settings live (harness/hooks_install)."""
    environ = os.environ if env is None else env
    return Path(environ["HOME"]) if environ.get("HOME") else Path.home()


def _number(name: str, key: str, value: object) -> float:
    """`value` as a number, when it is one, finite and >= 0: no setting of rmh.toml means
    anything below 0 ("0 turns it off"), and a NaN or infinite weight or constant gave
    searches that answered wrongly (NaN scores, Infinity in --json, no hits) without a word."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(f"rmh.toml: [{name}].{key} has the wrong type")
    try:
        number = float(value)
    except OverflowError:  # an integer past any float: tomllib takes any length
        number = math.inf
    if not (math.isfinite(number) and number >= 0):
        raise ConfigError(f"rmh.toml: [{name}].{key} must be a finite number >= 0, not "
                          f"{value if math.isfinite(number) else number}")
    return number


def _section(name: str, cls: type[Any], raw: Mapping[str, Any]) -> Any:
    known = {f.name: f for f in fields(cls)}
    values: dict[str, Any] = {}
    for key, value in raw.items():
        if key not in known:
            raise ConfigError(f"rmh.toml: unknown key [{name}].{key}")
        default = getattr(cls(), key)
        if isinstance(default, bool):
            ok = isinstance(value, bool)
        elif isinstance(default, float):
            ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        elif isinstance(default, int):
            ok = isinstance(value, int) and not isinstance(value, bool)
        elif isinstance(default, str):
            ok = isinstance(value, str)
        elif isinstance(default, Mapping):
            ok = isinstance(value, Mapping)
            value = dict(value) if ok else value
        else:
            ok = True
        if not ok:
            raise ConfigError(f"rmh.toml: [{name}].{key} has the wrong type")
        if isinstance(default, Mapping):  # [search].weights: a number per signal
            value = {k: _number(name, f"{key}.{k}", v) for k, v in value.items()}
        elif isinstance(default, (int, float)) and not isinstance(default, bool):
            number = _number(name, key, value)
            value = number if isinstance(default, float) else value
        values[key] = value
    return cls(**values)


def load(
    vault: str | Path | None = None,
    env: Mapping[str, str] | None = None,
    config_file: str | Path | None = None,
) -> Config:
    """Read the configuration once.

    `vault` is the --vault argument (None: $RMH_VAULT). `env` defaults to os.environ.
    `config_file` overrides $RMH_CONFIG and the vault's own rmh.toml.
    """
    environ = os.environ if env is None else env
    vault_str = str(vault) if vault is not None else environ.get("RMH_VAULT", "")
    vault_path = user_path(vault_str).absolute() if vault_str else None

    path: Path | None = None
    if config_file is not None:
        path = Path(config_file)
    elif environ.get("RMH_CONFIG"):
        path = Path(environ["RMH_CONFIG"])
    elif vault_path is not None and (vault_path / "rmh.toml").exists():
        path = vault_path / "rmh.toml"  # not a regular file: refused below, never ignored

    raw: dict[str, Any] = {}
    if path is not None:
        try:
            raw = tomllib.loads(read_config(path).decode("utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError) as exc:
            raise ConfigError(f"cannot read {path}: {exc}") from exc
    for key, value in raw.items():
        if key not in _SECTIONS:
            raise ConfigError(f"rmh.toml: unknown section [{key}]")
        if not isinstance(value, dict):  # `search = 5`, `[[llm]]`: no table
            raise ConfigError(f"rmh.toml: {key} must be a table ([{key}])")

    merged: dict[str, dict[str, Any]] = {name: dict(raw.get(name, {})) for name in _SECTIONS}
    for section, key in _PATHS:  # rmh.toml's own paths: from its folder (config_file.beside)
        if path is not None and key in merged[section]:
            merged[section][key] = beside(merged[section][key], path)
    for var, (section, key) in _ENV.items():
        if environ.get(var):
            merged[section][key] = environ[var]
    for var, (section, key) in _ENV_EVEN_EMPTY.items():
        if var in environ:
            merged[section][key] = environ[var]
    embed = merged["embed"]
    if "shared_cache" not in embed:
        embed["shared_cache"] = default_shared_cache(environ)
    elif isinstance(embed["shared_cache"], str):
        embed["shared_cache"] = expand_home(embed["shared_cache"], environ)
    if "graph_cache" not in embed:
        embed["graph_cache"] = default_graph_cache(environ)
    elif isinstance(embed["graph_cache"], str):
        embed["graph_cache"] = expand_home(embed["graph_cache"], environ)
    built = {name: _section(name, cls, merged[name]) for name, cls in _SECTIONS.items()}
    if built["extract"].entities not in EXTRACTORS:
        raise ConfigError(f"rmh.toml: [extract].entities must be one of {', '.join(EXTRACTORS)}"
                          f", not {built['extract'].entities!r}")
    try:
        fault = fault_after(environ)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    return Config(vault=vault_path, fault_after_ops=fault, **built)


@dataclass(frozen=True)
class UserDirs:
    """Where agent clients keep their settings (`rmh setup`): the home folder, and the
    overrides their own documentation names ($APPDATA on Windows for Claude Desktop,
    $XDG_CONFIG_HOME on Linux, $CODEX_HOME for Codex CLI). None where unset."""

    home: Path | None
    appdata: Path | None = None
    xdg_config_home: Path | None = None
    codex_home: Path | None = None


def user_dirs(env: Mapping[str, str] | None = None) -> UserDirs:
    """The folders agent clients read their settings from, from `env` (default os.environ)."""
    environ = os.environ if env is None else env

    def path(name: str) -> Path | None:
        value = environ.get(name, "")
        return user_path(value) if value else None

    home = path("HOME") or path("USERPROFILE")
    return UserDirs(home=home, appdata=path("APPDATA"),
                    xdg_config_home=path("XDG_CONFIG_HOME"), codex_home=path("CODEX_HOME"))
