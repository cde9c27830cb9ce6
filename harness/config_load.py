"""Reading the configuration once: `rmh.toml` (in the vault root, or $RMH_CONFIG) and the
environment, merged into one `Config` (harness/config.py re-exports `load`).

This and harness/config.py are the only modules of rmh that read environment variables.
Unknown sections and keys are an error (a typo must not silently do nothing); each value is
checked against its rule (harness/config_schema.py) as its section is built.

Precedence for each value: explicit argument > environment variable > rmh.toml > default.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import fields
from pathlib import Path
from typing import Any

from .config_file import (
    beside,
    config_text,
    expand_home,
    fault_after,
    read_config,
    user_path,
)
from .config_schema import ConfigError, check_value, type_of
from .config_sections import (
    Config,
    EmbedSection,
    ExtractSection,
    HooksSection,
    LearningSection,
    LlmSection,
    RerankSection,
    SandboxSection,
    SearchSection,
)
from .config_twice import about_twice, twice

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


def _section(name: str, cls: type[Any], raw: Mapping[str, Any]) -> Any:
    """Section `name` built from its table: each key known and checked (config_schema)."""
    known = [f.name for f in fields(cls)]
    defaults = cls()
    values: dict[str, Any] = {}
    for key, value in raw.items():
        if key not in known:
            raise ConfigError(f"rmh.toml: unknown key [{name}].{key} (known: "
                              f"{', '.join(known)})")
        values[key] = check_value(name, key, type_of(getattr(defaults, key)), value)
    return cls(**values)


def _from_env(var: str, section: str, key: str, value: str) -> str:
    """An environment variable's value for `[section].key`, checked; its refusal names the
    variable, not rmh.toml."""
    try:
        check_value(section, key, str, value)
    except ConfigError as exc:
        raise ConfigError(str(exc).replace("rmh.toml: ", f"${var}: ", 1)) from None
    return value


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
        text = ""
        try:
            text = config_text(read_config(path))
            raw = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:  # a key set twice: which one (config_twice)
            said = twice(text) if about_twice(exc) else None
            raise ConfigError(said or f"cannot read {path}: {exc}") from exc
        except (OSError, ValueError, RecursionError) as exc:  # ValueError: not UTF-8 text
            raise ConfigError(f"cannot read {path}: {exc}") from exc
    for key, value in raw.items():
        if key not in _SECTIONS:
            raise ConfigError(f"rmh.toml: unknown section [{key}] (known: "
                              f"{', '.join(_SECTIONS)})")
        if not isinstance(value, dict):  # `search = 5`, `[[llm]]`: no table
            raise ConfigError(f"rmh.toml: {key} must be a table ([{key}])")

    merged: dict[str, dict[str, Any]] = {name: dict(raw.get(name, {})) for name in _SECTIONS}
    for section, key in _PATHS:  # rmh.toml's own paths: from its folder (config_file.beside)
        if path is not None and key in merged[section]:
            merged[section][key] = beside(merged[section][key], path)
    for var, (section, key) in (*_ENV.items(), *_ENV_EVEN_EMPTY.items()):
        if environ.get(var) or (var in _ENV_EVEN_EMPTY and var in environ):
            merged[section][key] = _from_env(var, section, key, environ[var])
    rerank = merged["rerank"]  # keep's default is at most top_n: `top_n = 5` alone is no error
    if isinstance(rerank.get("top_n"), int) and "keep" not in rerank:
        rerank["keep"] = max(1, min(RerankSection.keep, rerank["top_n"]))
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
    try:
        fault = fault_after(environ)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    return Config(vault=vault_path, fault_after_ops=fault, **built)
