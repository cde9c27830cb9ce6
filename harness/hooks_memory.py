"""What the hooks do with the vault open: memory for a prompt (engine mode), capture at the end.

- `prompt_memory` (each prompt, with `[hooks] engine = true` or the warm daemon; without
  them the prompt hook uses `hooks_recall.recall` on the hooks' own index): `vault.
  build_context` for the prompt at SPARE times the word budget (conversation turns and
  passages of ordinary notes, dated); a hit is kept only where it covers at least
  `min_share` of the prompt's content terms weighted by their idf over the vault
  (`vault.term_coverage`, as hooks_recall.py; the floor under which nothing is relevant; a
  prompt that asks for a time and nothing else, "what did we do yesterday?", has no floor:
  that time connects its turns), never a turn of the current session; the kept hits, best
  score first, while they fit the budget, then the turns before them, shown in date order
  (the seed's depiction), each line naming its note; fenced as data. The notes shown are
  logged as shown in the client session's learning session, so reading them later counts
  as use.
- `capture` (session end, before compaction): the transcript ingested as a conversation
  (incremental and idempotent: an unchanged transcript writes nothing, a grown one adds its
  new turns), and with `end` the notes the agent read or cited in it (a `[[link]]`, a
  `path.md`, an rmh read tool call) logged as read in the learning session, which then ends.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from vault import (
    AmbiguousNote,
    ContextLine,
    Vault,
    VaultError,
    asked_alone,
    build_context,
    content_stems,
    ingest_conversations,
    load_transcript,
    term_coverage,
    topic_terms,
)

from .config import Config
from .errors import BadArgument
from .extraction import FILE_BYTES, prepare, read_conversation_file
from .hooks import fence
from .hooks_recall import MAX_TERMS

SPARE = 3  # the context built for SPARE times the budget: the floor's drops leave room

# A path's parts are bounded as a vault's are (255 bytes, a path of at most 1024: storage/paths.py)
# so that a start scans at most so far: unbounded, each word of a long line without `.md` was
# scanned to the line's end (64 KiB of "a " took 7 s; session 42, SBX18).
_CITED = (re.compile(r"\[\[([^\]|#]+)"),
          re.compile(r"(?<![\w/.-])((?:[\w .-]{1,255}/){0,16}[\w .-]{1,255}\.md)\b"))
# `[tool NAME: PATH]` with "read" in NAME. As `\[tool [^\]:]*read[^\]:]*: ([^\]]+)\]` it tried
# every "read" of every `[tool ` to the text's end: 8 KiB of `[tool read` took 4 s, growing with
# the cube of the length (a cell's 64 KiB of output in a transcript; session 42, SBX18); no
# part holds `[` now.
_TOOL = re.compile(r"\[tool ([^\[\]:]*): ([^\[\]]+)\]")


def prompt_memory(vault: Vault, prompt: str, words: int, *, k: int, min_share: float,
                  session: str | None, own_conversation: str = "") -> str:
    """Memory for one prompt (module docstring); "" when nothing is relevant."""
    # the day asked on: the vault's clock, else (a vault opened without one) the wall clock's
    # UTC day, as the hooks' own path reads it (hooks_recall.recall)
    wanted, day = content_stems(prompt), vault.today() or datetime.now(UTC).date()
    timed = bool(asked_alone(prompt, day))
    if not wanted and not timed:
        return ""
    # lines for SPARE times the budget, so that the lines the floor drops leave room for the
    # next best: the kept hits, best score first, then the turns before them, while they
    # fit; then in date order (the seed's depiction)
    ctx = build_context(vault, prompt, words * SPARE, k=k, now=day)
    terms = topic_terms(prompt)[:MAX_TERMS]
    dfs, n = vault.document_frequency(terms), len(vault.corpus())

    def covers(text: str) -> bool:
        return timed or term_coverage(terms, dfs, n, [text]) >= min_share

    def render(ln: ContextLine) -> str:
        return f"- {ln.text}" if ln.item.kind == "note" else f"- {ln.item.note}: {ln.text}"

    turns = {(ln.item.conversation, ln.item.tick): ln for ln in ctx.lines
             if ln.item.kind == "turn"}
    hits = sorted((ln for ln in ctx.lines if ln.reason == "hit" and covers(ln.item.text)
                   and (not own_conversation or ln.item.conversation != own_conversation)),
                  key=lambda ln: (-ln.score, ln.item.instant, ln.item.tick, ln.item.note))
    befores = [(h, turns.get((h.item.conversation, h.item.tick - 1))) for h in hits
               if h.item.kind == "turn"]
    chosen: dict[str, ContextLine] = {}
    used = 0
    # the hits first (NDM step 6), then each turn before a hit shown, never without it (CONV5)
    for hit, ln in [*((h, h) for h in hits), *((h, b) for h, b in befores if b is not None)]:
        cost = len(render(ln).split())
        if (ln.item.note not in chosen and hit.item.note in {*chosen, ln.item.note}
                and used + cost <= words):
            chosen[ln.item.note] = ln
            used += cost
    ordered = sorted(chosen.values(), key=lambda ln: (ln.item.instant, ln.item.tick, ln.item.note))
    if not ordered:
        return ""
    lines = [render(ln) for ln in ordered]
    notes = list(dict.fromkeys(ln.item.note for ln in ordered))
    vault.shown(prompt, notes, session=session)
    return fence(lines, "Memory for this prompt")


def cited_notes(texts: list[str]) -> list[str]:
    """Names of notes the agent cited or read in `texts`, in order of first mention."""
    found: dict[str, None] = {}
    for text in texts:
        for rx in _CITED:
            for m in rx.finditer(text):
                found.setdefault(m.group(1).strip(), None)
        for m in _TOOL.finditer(text):
            if "read" in m.group(1):
                found.setdefault(m.group(2).strip(), None)
    return list(found)


def capture(vault: Vault, transcript: str, session_id: str, session: str | None,
            *, end: bool, cfg: Config | None = None) -> dict[str, Any]:
    """Ingest the transcript (an empty or missing one: nothing; entities as `cfg`'s [extract]
    says: harness/extraction.py); with `end`, log the cited notes as read and end `session`. An
    unreadable or malformed transcript raises, having ingested nothing."""
    limit = FILE_BYTES if cfg is None else cfg.extract.file_bytes
    try:  # no file yet: a session ended before anything was said (Claude Code writes the
        mode = os.stat(transcript).st_mode  # transcript with the first message)
    except FileNotFoundError:
        mode = None
    # a FIFO's open waits for a writer forever (the client held to its timeout); a device
    if mode is not None and not stat.S_ISREG(mode):  # (/dev/zero) is read to the bound
        raise BadArgument("transcript_path", f"{transcript} is not a regular file; nothing "
                          "was ingested")
    text = "" if mode is None else read_conversation_file(transcript, limit).decode("utf-8")
    if not text.strip():  # a session with nothing said yet: nothing to ingest
        doc: dict[str, Any] = {"turns": 0, "written": 0, "skipped_lines": 0}
        if end and session is not None:
            doc.update(used=[], session_ended=end_only(vault, session))
        return doc
    loaded = load_transcript(text, "auto", session_id or Path(transcript).stem)
    convs, use_nlp, extraction = (list(loaded.conversations), True, {"extractor": "auto"})
    if cfg is not None:
        convs, use_nlp, extraction = prepare(cfg, vault.root, loaded.conversations)
    report = ingest_conversations(vault, convs, use_nlp=use_nlp)
    doc = {**report.to_json(), "skipped_lines": len(loaded.problems)}
    if extraction["extractor"] == "llm":
        doc["extraction"] = extraction  # the LLM step's report
    if not end or session is None:
        return doc
    said = [t.text for c in loaded.conversations for t in c.turns() if t.role == "assistant"]
    used: list[str] = []
    for name in cited_notes(said):
        try:
            used.append(vault.read(name, session=session).note)
        except AmbiguousNote:  # a name notes of several folders share (this very ingest's
            found = vault.resolver().resolve_wiki(name)  # entities/kafka.md): as the link
            if found is not None:  # `[[Kafka]]` reads it, by Obsidian's rule (README)
                with contextlib.suppress(VaultError):
                    used.append(vault.read(vault.path_of(found), session=session).note)
        except VaultError:
            continue
    doc["used"] = used
    doc["session_ended"] = end_only(vault, session)
    return doc


def end_only(vault: Vault, session: str) -> bool:
    """End the learning session (its rewards apply); False when there is no ledger or the
    session is unknown or ended."""
    ledger = vault.ledger
    return ledger.end_session(session, time.time()) if ledger is not None else False
