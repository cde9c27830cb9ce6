"""Conversation commands: `rmh ingest FILE`, and `rmh context QUERY --budget N` (the `context`
operation, generated from the table by harness.commands.vault_commands)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.extraction import FILE_BYTES, ConversationFileTooLarge, read_conversation_file
from vault import (
    CONVERSATION_DATE_ORDERS,
    CONVERSATION_FORMATS,
    ingest_conversations,
    load_slack_export,
    load_transcript,
)

from . import vault_commands
from .notes import configured_vault
from .output import counted, emit, fail


def transcript_text(file: str, limit: int = FILE_BYTES) -> str:
    """The text of the conversation file `file`: bytes that are not UTF-8 (a transcript cut
    mid-character, a log in another encoding) are read as U+FFFD with a warning, as the
    loaders read a NUL or a lone surrogate (vault/conversation/formats.py), rather than
    losing the whole file to one byte; a file that cannot be read, one over `limit` bytes
    (`[extract] file_bytes`), or one too large to hold in memory under no limit (a sparse
    terabyte was a MemoryError traceback) is a clear failure."""
    try:
        data = read_conversation_file(file, limit)
    except OSError as exc:
        fail(f"cannot read {file}: {exc.strerror}")
    except ConversationFileTooLarge as exc:
        fail(exc.reason)
    except MemoryError:
        fail(f"cannot read {file}: too large to hold in memory "
             f"({Path(file).stat().st_size} bytes)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        print(f"rmh: {file}: not valid UTF-8 (the first bad byte at offset {exc.start}): "
              "read with U+FFFD in place of the bytes that are not", file=sys.stderr)
        return data.decode("utf-8", errors="replace")


def export_files(folder: str, limit: int = FILE_BYTES) -> dict[str, str]:
    """The JSON files of an unzipped export folder (Slack's: `users.json`, `CHANNEL/DAY.json`)
    as {path relative to it: text}, read as `transcript_text` reads one file; `limit` bounds
    the bytes of all of them together (`[extract] file_bytes`)."""
    root = Path(folder)
    files: dict[str, str] = {}
    total = 0
    for path in sorted([*root.glob("*.json"), *root.glob("*/*.json")]):
        if not path.is_file():
            continue
        text = transcript_text(str(path), limit)
        files[path.relative_to(root).as_posix()] = text
        total += len(text)
        if limit and total > limit:
            fail(f"{folder}: its JSON files are larger than [extract] file_bytes = {limit} "
                 "bytes together; nothing was ingested (raise it in rmh.toml, 0 = no bound)")
    return files


def cmd_ingest(args: argparse.Namespace) -> int:
    from harness.config import load
    from harness.extraction import fallback_lines, prepare

    cfg = load(vault=args.vault)
    if Path(args.file).is_dir():
        loaded = load_slack_export(export_files(args.file, cfg.extract.file_bytes))
    else:
        text = transcript_text(args.file, cfg.extract.file_bytes)
        loaded = load_transcript(text, args.format, Path(args.file).stem, args.date_order)
    for problem in loaded.problems:
        print(f"rmh: {args.file}: skipped {problem}", file=sys.stderr)
    convs, use_nlp, extraction = prepare(cfg, cfg.require_vault(), loaded.conversations)
    for line in fallback_lines(extraction):
        print(f"rmh: {args.file}: {line}", file=sys.stderr)
    from harness.interrupt import stop_between_notes

    with configured_vault(args, dense=False) as v, stop_between_notes():
        report = ingest_conversations(v, convs, use_nlp=use_nlp, regenerate=args.regenerate)
    more = {} if cfg.extract.entities == "auto" else {"extraction": extraction}
    emit(args, {**report.to_json(), "skipped_lines": list(loaded.problems), **more},
         f"ingested {counted(len(report.conversations), 'conversation')}: "
         f"{counted(report.turns, 'turn')}, {counted(report.sessions, 'session')}, "
         f"{counted(report.entities, 'entity', 'entities')}, {counted(report.facts, 'fact')} "
         f"({report.rules} promoted to L3 rules); "
         f"{counted(len(report.written), 'note')} written, {report.unchanged} unchanged"
         + (f"; {counted(report.forgotten, 'turn')} left out: erased by `rmh forget`"
            if report.forgotten else "")
         + edited_lines(report.kept, report.trashed, report.left_deleted))
    return 0


def edited_lines(kept: Sequence[str], trashed: Sequence[tuple[str, str]],
                 deleted: Sequence[str] = ()) -> str:
    """The report's lines on notes edited, moved or deleted by hand since the ingest wrote
    them (none: "")."""
    out = ""
    if kept:
        out += (f"\nkept {len(kept)} note(s) edited by hand as they are (`rmh ingest "
                "--regenerate` rewrites them, the edited version going to the trash):")
        out += "".join(f"\n  {p}" for p in kept)
    if trashed:
        out += (f"\nrewrote {len(trashed)} note(s) whose bytes were not the ingest's; "
                "the version before is in the trash:")
        out += "".join(f"\n  {p} -> {t}" for p, t in trashed)
    if deleted:
        out += (f"\nleft out {len(deleted)} note(s) you deleted (`rmh ingest --regenerate` "
                "writes them again):")
        out += "".join(f"\n  {p}" for p in deleted)
    return out


def register(sub: Any) -> None:
    """Add the conversation commands to the `rmh` parser."""
    p: argparse.ArgumentParser = sub.add_parser(
        "ingest", help="turn a conversation file into notes (turns, sessions, entities, facts)")
    p.add_argument("file", help="rmh-conversation/1, LoCoMo, LongMemEval, an OpenAI chat "
                   "messages list, a ChatGPT or Claude.ai export (conversations.json), a "
                   "Claude Code / Codex CLI session JSONL, a WhatsApp chat export (.txt), a "
                   "plain \"Name: text\" transcript, or an unzipped Slack export folder (a "
                   "channel's day file alone too)")
    p.add_argument("--format", choices=CONVERSATION_FORMATS, default="auto")
    p.add_argument("--date-order", choices=CONVERSATION_DATE_ORDERS, default=None,
                   help="how a WhatsApp export's dates read, day or month first (needed only "
                   "where no date shows it: no field above 12)")
    p.add_argument("--regenerate", action="store_true",
                   help="rewrite notes edited by hand since the ingest wrote them (the edited "
                   "version goes to .rmh/trash/) and write again those deleted; without it "
                   "the edited ones are kept and the deleted ones left out, both listed")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.set_defaults(func=cmd_ingest)
    vault_commands.register(sub, ("context",))
