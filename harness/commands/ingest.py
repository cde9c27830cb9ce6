"""Conversation commands: `rmh ingest FILE` and `rmh context QUERY --budget N`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from vault import (
    CONVERSATION_FORMATS,
    build_context,
    ingest_conversations,
    load_transcript,
)

from .notes import configured_vault
from .output import emit, fail, iso_date


def cmd_ingest(args: argparse.Namespace) -> int:
    try:
        text = Path(args.file).read_text(encoding="utf-8")
    except OSError as exc:
        fail(f"cannot read {args.file}: {exc.strerror}")
    loaded = load_transcript(text, args.format, Path(args.file).stem)
    for problem in loaded.problems:
        print(f"rmh: {args.file}: skipped {problem}", file=sys.stderr)
    with configured_vault(args, dense=False) as v:
        report = ingest_conversations(v, loaded.conversations)
    emit(args, {**report.to_json(), "skipped_lines": list(loaded.problems)},
         f"ingested {len(report.conversations)} conversation(s): {report.turns} turns, "
         f"{report.sessions} sessions, {report.entities} entities, {report.facts} facts "
         f"({report.rules} promoted to L3 rules); "
         f"{len(report.written)} notes written, {report.unchanged} unchanged")
    return 0


def cmd_context(args: argparse.Namespace) -> int:
    if args.budget <= 0:
        fail("--budget must be positive")
    with configured_vault(args, dense=not args.no_dense) as v:
        ctx = build_context(v, args.query, args.budget, conversation=args.conversation,
                            date_from=iso_date(args.date_from), date_to=iso_date(args.date_to))
    emit(args, ctx.to_json(), ctx.text or ("(no matching turns)" if ctx.relevant else
                                           "Nothing in memory is relevant to this question."))
    return 0


def register(sub: Any) -> None:
    """Add the conversation commands to the `rmh` parser."""
    p: argparse.ArgumentParser = sub.add_parser(
        "ingest", help="turn a conversation file into notes (turns, sessions, entities, facts)")
    p.add_argument("file", help="rmh-conversation/1, LoCoMo, LongMemEval, an OpenAI chat "
                   "messages list, or a Claude Code / Codex CLI session JSONL")
    p.add_argument("--format", choices=CONVERSATION_FORMATS, default="auto")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.set_defaults(func=cmd_ingest)
    c: argparse.ArgumentParser = sub.add_parser(
        "context", help="budgeted, dated, speaker-labelled context for a question")
    c.add_argument("query")
    c.add_argument("--budget", type=int, default=600, help="word budget (default 600)")
    c.add_argument("--conversation", default=None, help="only this conversation id")
    c.add_argument("--from", dest="date_from", default=None, help="ISO date, inclusive")
    c.add_argument("--to", dest="date_to", default=None, help="ISO date, inclusive")
    c.add_argument("--no-dense", action="store_true", help="skip the ONNX embedder")
    c.add_argument("--json", action="store_true", help="print one JSON document")
    c.set_defaults(func=cmd_context)
