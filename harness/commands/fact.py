"""`rmh fact confirm|reject|supersede NOTE` and `rmh why NOTE`: corrections and provenance.

`rmh fact` sets a fact note's trust (vault/notes/trust.py, vault/conversation/corrections.py):
`confirm`, `reject` (the note stays as a tombstone: re-ingesting the conversation, or another
that says the same, never brings the value back as current) or `supersede --value NEW` (the
new value's note is confirmed and the old one points to it). Who (`--by`, default "user") and
when (`--at`, default now, UTC) are kept in the note's frontmatter with the history of states.

`rmh why NOTE` prints where a note came from (its source turns, conversation and session, or
the correction that made it) and what it has been used for (the learning log's searches,
reads and sessions that name it).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from datetime import datetime
from typing import Any

from harness.compose import open_vault
from harness.config import load
from harness.fact_tools import correct_note, why_note

from .output import counted, emit


def rule(name: str) -> Callable[[str], Any]:
    """argparse `type` of an argument of `correct`: the operation's rule for it, as JSON-RPC
    and MCP apply it. `rmh fact` took a `--by` of 10,000 characters, an empty one, a
    `--reason` past 1,000, into the note's frontmatter: rules the other surfaces refuse."""
    from .operation_commands import operation, value_type

    return value_type(next(p for p in operation("correct").params if p.name == name))


def iso_time(text: str) -> str:
    """argparse `type` of --at: an ISO 8601 date or time, kept as written. `--at 2024-02-30`,
    `--at yesterday`, `--at nan` were stored as the correction's time."""
    try:
        datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an ISO 8601 time: {text!r}") from None
    return text


def trust_text(t: dict[str, Any]) -> str:
    """A note's trust in words. A superseded note keeps its state while `by`/`at` name who
    superseded it and when (the state before is the history's last entry, where `why` gives
    it): it read "confirmed by user at T (not current)" right after a `confirm --by me`, the
    superseder shown as the confirmer."""
    if not t["superseded_by"]:
        return f"{t['state']} by {t['by']} at {t['at']}" + ("" if t["current"] else
                                                            " (not current)")
    was = t.get("history") or [{}]
    before = (f"; was {was[-1].get('state')} by {was[-1].get('by')} at {was[-1].get('at')}"
              if was[-1] else "")
    return f"superseded by {t['by']} at {t['at']} (not current{before})"


def cmd_fact(args: argparse.Namespace) -> int:
    with open_vault(load(vault=args.vault), dense=False) as v:
        done = correct_note(v, args.note, args.action, value=args.value,
                            reason=args.reason or "", by=args.by, at=args.at)
    human = (f"{done['note']}: {trust_text(done['trust'])}"
             + (f"; current belief: {done['current']}" if done["current"] != done["note"]
                and done["current"] else ""))
    emit(args, done, human)
    return 0


def _why_text(doc: dict[str, Any]) -> str:
    lines = [f"{doc['note']} ({doc['kind']}, id {doc['id']})"]
    where = ", ".join(f"{k} {doc[k]}" for k in ("conversation", "session", "turn") if k in doc)
    if where:
        lines.append(f"  from {where}")
    if "trust" in doc:
        t = doc["trust"]
        lines.append(f"  trust: {trust_text(t)}"
                     + (f"; replaced by {', '.join(t['superseded_by'])}"
                        if t["superseded_by"] else ""))
        for h in t["history"]:
            lines.append(f"    was {h.get('state')} by {h.get('by')} at {h.get('at')}")
    if isinstance(doc.get("source"), str):
        lines.append(f"  source: {doc['source']}")
    lines.append(f"  sources ({doc['sources_total']}):")
    for s in doc["sources"]:
        said = f"{s.get('speaker', '')}: {s.get('text', '')}".strip(": ")
        lines.append(f"    {s['note']}  {s.get('date', '')}  {said}"[:240])
    for name in ("derived", "linked_from"):
        if doc[name]:
            lines.append(f"  {name.replace('_', ' ')}: {', '.join(doc[name])}")
    used = doc["used_for"]
    if "events_total" in used:
        kinds = ", ".join(f"{k} {n}" for k, n in used["by_kind"].items()) or "none"
        lines.append(f"  used for: {counted(used['events_total'], 'event')} ({kinds}) in "
                     f"{counted(len(used['sessions']), 'session')}")
    else:
        lines.append("  used for: (learning is off)")
    return "\n".join(lines)


def cmd_why(args: argparse.Namespace) -> int:
    with open_vault(load(vault=args.vault), dense=False) as v:
        doc = why_note(v, args.note)
    emit(args, doc, _why_text(doc))
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("fact", help="confirm, reject or supersede a fact note",
                       description=__doc__)
    p.add_argument("action", choices=("confirm", "reject", "supersede"))
    p.add_argument("note", type=rule("note"), help="the fact note (path or title)")
    p.add_argument("--value", type=rule("value"), help="supersede: the value that replaces it")
    p.add_argument("--reason", type=rule("reason"),
                   help="why (kept in the note's trust history)")
    p.add_argument("--by", default="user", type=rule("by"),
                   help="who corrects (default: user)")
    p.add_argument("--at", default=None, metavar="TIME", type=iso_time,
                   help="when, ISO 8601 (default: now, UTC)")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.set_defaults(func=cmd_fact)
    w = sub.add_parser("why", help="where a note or fact came from and what it was used for",
                       description="Where a note or fact came from (source turns, conversation, "
                       "session, correction) and what it has been used for (searches, reads, "
                       "sessions).")
    w.add_argument("note", help="the note (path or title)")
    w.add_argument("--json", action="store_true", help="print one JSON document")
    w.set_defaults(func=cmd_why)
