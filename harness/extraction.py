"""`[extract] entities` applied to one ingest: what the conversations and the vault's
`ingest_conversations(..., use_nlp=...)` get, and what the choice did (a JSON-safe report).

- "auto": as loaded; the vault parses with spaCy when it is installed, else the rules;
- "rules": as loaded, `use_nlp` False (no parse at all);
- "spacy": as "auto", but ConfigError when spaCy or its model is not installed;
- "llm": each turn's entities from the configured model (harness/llm_entities.py), the
  turns without a usable answer as "auto".
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .config import Config, ConfigError, ExtractSection
from .errors import BadArgument

FILE_BYTES = ExtractSection.file_bytes  # the default bound of `read_conversation_file`


class ConversationFileTooLarge(BadArgument):
    """A conversation file longer than `[extract] file_bytes`: refused whole, nothing read."""


def read_conversation_file(path: str, limit: int = FILE_BYTES) -> bytes:
    """The bytes of the conversation file `path`, read at most `limit` + 1 of them (0: no
    bound): ConversationFileTooLarge past `limit` (a file that grows while read, or
    /dev/zero, is refused too), so the memory is O(limit) whatever the file holds."""
    with open(path, "rb") as f:
        data = f.read(limit + 1) if limit else f.read()
    if limit and len(data) > limit:
        raise ConversationFileTooLarge(
            "file", f"{path} is larger than [extract] file_bytes = {limit} bytes; nothing was "
            "ingested (raise it in rmh.toml to read this file, 0 = no bound)")
    return data


def prepare(cfg: Config, root: Path, conversations: Sequence[Any]
            ) -> tuple[list[Any], bool, dict[str, Any]]:
    """(conversations to ingest, use_nlp, report) for `cfg.extract.entities`."""
    mode = cfg.extract.entities
    if mode == "rules":
        return list(conversations), False, {"extractor": "rules"}
    if mode == "llm":
        from .llm_entities import llm_entities

        out, report = llm_entities(cfg, root, conversations)
        return out, True, report.to_json()
    from vault import nlp_status

    status = nlp_status()
    if mode == "spacy" and status["extractor"] != "spacy":
        raise ConfigError(f'[extract] entities = "spacy": {status["reason"]}')
    return list(conversations), True, {"extractor": status["extractor"]}


def fallback_lines(report: dict[str, Any]) -> list[str]:
    """One line per turn the LLM step fell back on (for stderr)."""
    return [f"turn {f['turn']} of {f['conversation']}: no LLM entities ({f['reason']}); "
            "automatic extraction used" for f in report.get("fallback", [])]
