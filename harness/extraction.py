"""`[extract] entities` applied to one ingest: what the conversations and the vault's
`ingest_conversations(..., use_nlp=...)` get, and what the choice did (a JSON-safe report).

- "auto": as loaded; the vault parses with spaCy when it is installed, else the rules;
- "rules": as loaded, `use_nlp` False (no parse at all);
- "spacy": as "auto", but ConfigError when spaCy or its model is not installed;
- "llm": each turn's entities from the configured model (harness/llm_entities.py), the
  turns without a usable answer as "auto".
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from .config import Config, ConfigError, ExtractSection
from .errors import BadArgument

FILE_BYTES = ExtractSection.file_bytes  # the default bound of `read_conversation_file`
READ_CHUNK = 1 << 16  # bytes a read asks for past a regular file's size (a pipe, a device)


class ConversationFileTooLarge(BadArgument):
    """A conversation file longer than `[extract] file_bytes`: refused whole, nothing read."""


def read_conversation_file(path: str, limit: int = FILE_BYTES) -> bytes:
    """The bytes of the conversation file `path`, read at most `limit` + 1 of them (0: no
    bound): ConversationFileTooLarge past `limit` (a regular file by its size, before any byte
    is read; a file that grows while read, or /dev/zero, when a read passes it), so the memory
    is O(the file) and O(limit) whatever the file holds. Reads ask for at most the file's size
    + 1, then READ_CHUNK, never `limit` + 1 at once: a read makes its buffer that large up
    front (256 MiB of address space for a 1 KB transcript; a raised limit was a MemoryError or
    an OverflowError on any file)."""
    with open(path, "rb") as f:
        if not limit:
            return f.read()
        info = os.fstat(f.fileno())
        size = info.st_size if stat.S_ISREG(info.st_mode) else 0
        parts: list[bytes] = []
        got, want = 0, size + 1 if size else READ_CHUNK
        while got <= limit and size <= limit:
            part = f.read(min(want, limit + 1 - got))
            if not part:
                break
            parts.append(part)
            got += len(part)  # then 1 byte to see the end of a file read whole, else a chunk
            want = 1 if size and got == size else READ_CHUNK
    if size > limit or got > limit:
        raise ConversationFileTooLarge(
            "file", f"{path} is larger than [extract] file_bytes = {limit} bytes; nothing was "
            "ingested (raise it in rmh.toml to read this file, 0 = no bound)")
    return parts[0] if len(parts) == 1 else b"".join(parts)


# conversations -> (the conversations to ingest, use_nlp, the report): `prepare` for one vault
Extract = Callable[[Sequence[Any]], tuple[list[Any], bool, dict[str, Any]]]


def configured(cfg: Config, root: Path) -> Extract | None:
    """The entity step `vault.ingest` applies for `cfg` on the vault at `root` (None for
    "auto": what the vault does by itself). Before, `vault.ingest` (JSON-RPC, MCP, the REPL)
    always extracted as "auto", whatever `[extract] entities` said."""
    return None if cfg.extract.entities == "auto" else partial(prepare, cfg, root)


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
            "automatic extraction used" for f in report.get("fallback", [])] + [
        f"the LLM's answers were used but not cached ({why})"
        for why in [report.get("not_cached", "")] if why]
