"""Configuration, read once: `rmh.toml` (in the vault root, or $RMH_CONFIG) and the environment.

The public face of four modules, one concept each: harness/config_schema.py (what each key
allows, `ConfigError`), harness/config_sections.py (the sections, frozen dataclasses),
harness/config_load.py (reading the file and the environment into a `Config`) and
harness/config_file.py (reading the file's bytes without ever waiting on it). Here too: the
folders agent clients keep their settings in. These are the only modules of rmh that read
environment variables.

Precedence for each value: explicit argument > environment variable > rmh.toml > default.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from .config_file import user_path
from .config_load import _SECTIONS as _SECTIONS
from .config_load import default_graph_cache as default_graph_cache
from .config_load import default_shared_cache as default_shared_cache
from .config_load import load as load
from .config_schema import EXTRACTORS as EXTRACTORS
from .config_schema import MAX_K as MAX_K
from .config_schema import SIGNALS as SIGNALS
from .config_schema import ConfigError as ConfigError
from .config_sections import Config as Config
from .config_sections import EmbedSection as EmbedSection
from .config_sections import ExtractSection as ExtractSection
from .config_sections import HooksSection as HooksSection
from .config_sections import LearningSection as LearningSection
from .config_sections import LlmSection as LlmSection
from .config_sections import RerankSection as RerankSection
from .config_sections import SandboxSection as SandboxSection
from .config_sections import SearchSection as SearchSection


def home_dir(env: Mapping[str, str] | None = None) -> Path:
    """The user's home folder: $HOME (from `env`, default os.environ), else the password
    database's (`Path.home`). Where user-scope client settings live (harness/hooks_install)."""
    environ = os.environ if env is None else env
    return Path(environ["HOME"]) if environ.get("HOME") else Path.home()


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
