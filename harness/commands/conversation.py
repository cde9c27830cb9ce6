"""`rmh conversation ...`: stability of extraction, and the working partition's session end.

- ``rmh conversation stability ID [--mode supplied|normalisation] [--file F] [--date-order O]
  [--json]``:
  the Jaccard index of two extraction runs' collision sets and the pairs that differ
  (`vault.conversation_stability`). The conversation comes from the vault's turn notes, or
  from ``--file`` (needed for ``supplied``: entity lists live in the file, not in notes),
  read as `rmh ingest` reads it: a conversation the file names none of is the file's stem.
- ``rmh conversation note ID SESSION TITLE TEXT [--date D] [--confirmed]``: write a working
  (scratch) note for a live session.
- ``rmh conversation end-session ID SESSION [--apply] [--json]``: promote the session's cited
  or confirmed working notes (a frontmatter rewrite, same path and id) and archive the rest in
  the learning ledger, all or none even when killed midway. Without --apply it only reports.
  Reversible: ``rmh conversation demote NOTE`` and ``rmh restore NOTE``.
"""

from __future__ import annotations

import argparse
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from harness.compose import open_ledger, plain_vault
from vault import (
    CONVERSATION_DATE_ORDERS,
    CONVERSATION_FORMATS,
    LEDGER_FILE,
    STABILITY_MODES,
    EditConflict,
    conversation_from_corpus,
    conversation_stability,
    demoted_text,
    load_transcript,
    session_end,
    working_note,
    working_path,
)

from .ingest import transcript_text
from .output import emit, fail


def cmd_stability(args: argparse.Namespace) -> int:
    if args.file:
        text = transcript_text(args.file)
        loaded = load_transcript(text, args.format, Path(args.file).stem, args.date_order)
        convs = [c for c in loaded.conversations if c.conversation_id == args.id]
        if not convs:  # a file that names none holds `rmh ingest`'s id: the file's stem
            held = sorted(c.conversation_id for c in loaded.conversations)
            fail(f"{args.file} holds no conversation {args.id!r} (it holds "
                 f"{', '.join(map(repr, held[:10])) or 'none'}"
                 f"{' ...' if len(held) > 10 else ''})")
        conv = convs[0]
    else:
        with plain_vault(args.vault) as v:
            conv = conversation_from_corpus(v.corpus(), args.id)
    mode = args.mode or ("supplied" if any(t.entities is not None for t in conv.turns())
                         else "normalisation")
    st = conversation_stability(conv, mode)
    lines = [f"conversation {st.conversation}: A = {st.runs[0]}, B = {st.runs[1]}",
             f"collision pairs: A {st.pairs[0]}, B {st.pairs[1]}, both {st.common}",
             f"Jaccard J = {st.jaccard:.4f}"]
    for d in st.differing:
        lines.append(f"  only {d.run}: {d.turns[0]} - {d.turns[1]} "
                     f"(ticks {d.i}-{d.j}) shared: {', '.join(d.shared)}")
    emit(args, st.to_json(), "\n".join(lines))
    return 0


def iso_datetime(text: str) -> datetime:
    """argparse `type` of `--date`: an ISO 8601 datetime, else a usage error (any other text
    was a ValueError traceback)."""
    try:
        return datetime.fromisoformat(text)
    except (ValueError, OverflowError):
        raise argparse.ArgumentTypeError(f"not an ISO datetime: {text!r}") from None


def cmd_note(args: argparse.Namespace) -> int:
    when = args.date if args.date is not None else (  # naive UTC, as every note date
        datetime.fromtimestamp(int(time.time()), UTC).replace(tzinfo=None))
    path = working_path(args.id, args.session, args.title)
    with plain_vault(args.vault) as v:
        v.write(path, working_note(args.id, args.session, args.text, when, args.confirmed))
    emit(args, {"note": path}, f"working note {path}")
    return 0


def cmd_end_session(args: argparse.Namespace) -> int:
    with plain_vault(args.vault) as v:
        corpus = v.corpus()
        read = dict(zip(corpus.paths, corpus.content_hashes, strict=True))  # what was decided on
        decisions = list(session_end(corpus, args.id, args.session))
        done = 0
        if decisions and (args.apply or (v.root / ".rmh" / LEDGER_FILE).exists()):
            ledger = open_ledger(v.root)
            try:  # notes the ledger already archived are out of working memory already
                gone = ledger.archived([d.id for d in decisions])
                decisions = [d for d, g in zip(decisions, gone, strict=True) if not g]
                if args.apply and decisions:  # all or none, even killed (vault archive_writes)
                    left = v.archive_and_write(  # an edit made since is kept (edit_conflict)
                        ledger, [(d.note, d.text) for d in decisions if d.action == "promote"],
                        read, [(d.id, f"working: {d.reason}") for d in decisions
                               if d.action == "archive"], time.time())
                    if left:
                        raise EditConflict(left[0], read.get(left[0]) or "", None)
                    done = len(decisions)
            finally:
                ledger.close()
    doc: dict[str, Any] = {"conversation": args.id, "session": args.session,
                           "apply": args.apply, "done": done,
                           "decisions": [d.to_json() for d in decisions]}
    lines = [f"- [{d.action}] {d.note}: {d.reason}" for d in decisions]
    lines.append(f"{done} working note(s) promoted or archived (reversible: rmh conversation "
                 "demote NOTE, rmh restore NOTE)" if args.apply else
                 f"{len(decisions)} working note(s) to decide; nothing changed"
                 + (", run with --apply" if decisions else ""))
    emit(args, doc, "\n".join(lines))
    return 0


def cmd_demote(args: argparse.Namespace) -> int:
    with plain_vault(args.vault) as v:  # a name several notes share is refused (README)
        rec = v.read(v.path_of(v.resolve(args.note, as_link=False)))
        text = demoted_text(rec.frontmatter, rec.body)
        if text is None:
            fail(f"{rec.note} was not promoted from working memory")
        v.write(rec.note, text, expected_hash=rec.hash)  # an edit made since is kept
    emit(args, {"note": rec.note, "tier": "working"}, f"{rec.note} is a working note again")
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `conversation` and its sub-commands to the `rmh` parser."""
    p = sub.add_parser("conversation", help="conversation memory: stability, working notes")
    cs = p.add_subparsers(dest="conversation_command", metavar="SUBCOMMAND")
    cs.required = True
    s = cs.add_parser("stability", help="Jaccard of two extraction runs' collision sets")
    s.add_argument("id", help="conversation id")
    s.add_argument("--mode", choices=STABILITY_MODES, default=None,
                   help="supplied (file's entity lists vs automatic) or normalisation "
                   "(default: supplied when the conversation has lists, else normalisation)")
    s.add_argument("--file", default=None, help="read the conversation from this file")
    s.add_argument("--format", choices=CONVERSATION_FORMATS, default="auto")
    s.add_argument("--date-order", choices=CONVERSATION_DATE_ORDERS, default=None,
                   help="with --file: how a WhatsApp export's dates read (as `rmh ingest`)")
    s.add_argument("--json", action="store_true", help="print one JSON document")
    s.set_defaults(func=cmd_stability)
    n = cs.add_parser("note", help="write a working (scratch) note for a live session")
    for name in ("id", "session", "title", "text"):
        n.add_argument(name)
    n.add_argument("--date", default=None, type=iso_datetime,
                   help="ISO datetime (default: now)")
    n.add_argument("--confirmed", action="store_true", help="mark it confirmed")
    n.add_argument("--json", action="store_true", help="print one JSON document")
    n.set_defaults(func=cmd_note)
    e = cs.add_parser("end-session", help="promote cited/confirmed working notes, archive "
                      "the rest (reversible)")
    e.add_argument("id")
    e.add_argument("session")
    e.add_argument("--apply", action="store_true", help="do it (default: report)")
    e.add_argument("--json", action="store_true", help="print one JSON document")
    e.set_defaults(func=cmd_end_session)
    d = cs.add_parser("demote", help="turn a promoted working note back into a working note")
    d.add_argument("note")
    d.add_argument("--json", action="store_true", help="print one JSON document")
    d.set_defaults(func=cmd_demote)
