"""`rmh lifecycle [--apply] [--json] [--today DATE]`: archive stale conversation memory, reversibly.

The decisions come from `vault.archive_decisions` (DMF survival for turn notes, the 4D archive
rule for L2 fact notes). Without --apply nothing is written (not even the ledger file). With
--apply each decision is recorded as an archive event in the learning ledger
(VAULT/.rmh/learned.sqlite): the note leaves default search but its file stays where it is;
`rmh restore NOTE` brings it back. Nothing is ever deleted. The wall clock is read here only
to default --today and to timestamp the ledger events.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from datetime import UTC, date, datetime
from typing import Any

from harness.compose import open_ledger, plain_vault, reading_ledger
from vault import LEDGER_FILE, ArchiveDecision, Vault, archive_decisions

from .output import emit, iso_date


def plan(vault: Vault, today: date, *, apply: bool,
         now: float | None = None) -> tuple[list[ArchiveDecision], list[bool], int]:
    """The decisions, whether each note was already archived in the ledger, and how many
    were archived now (0 unless `apply`)."""
    decisions = list(archive_decisions(vault.corpus(), today))
    if not apply and not (vault.root / ".rmh" / LEDGER_FILE).exists():
        return decisions, [False] * len(decisions), 0
    ledger = open_ledger(vault.root) if apply else reading_ledger(vault.root)[1]
    try:
        already = [bool(a) for a in ledger.archived([d.id for d in decisions])]
        done = 0
        if apply:
            stamp = time.time() if now is None else now
            for d, was in zip(decisions, already, strict=True):
                if not was:
                    ledger.archive(d.id, stamp, f"{d.rule}: {d.reason}")
                    done += 1
    finally:
        ledger.close()
    return decisions, already, done


def cmd_lifecycle(args: argparse.Namespace) -> int:
    # the clock's UTC day, as every other day rmh reads off the clock (retrieval/when.py
    # clock_day): date.today() was the local day, so TZ changed the decisions
    today: date = args.today or datetime.fromtimestamp(time.time(), UTC).date()
    with plain_vault(args.vault) as v:
        decisions, already, done = plan(v, today, apply=args.apply)
    rules = Counter(d.rule for d in decisions)
    doc: dict[str, Any] = {
        "today": today.isoformat(), "apply": args.apply, "archived": done,
        "by_rule": dict(sorted(rules.items())),
        "decisions": [{**d.to_json(), "already_archived": a}
                      for d, a in zip(decisions, already, strict=True)],
    }
    lines = [f"{'=' if a else '-'} [{d.rule}] {d.note}: {d.reason}"
             for d, a in zip(decisions, already, strict=True)]
    pending = sum(1 for a in already if not a)
    if args.apply:
        lines.append(f"archived {done} note(s) as of {today} (reversible: rmh restore NOTE)")
    else:
        lines.append(f"{pending} note(s) to archive as of {today}, "
                     f"{len(decisions) - pending} already archived; nothing changed"
                     + (", run with --apply" if pending else ""))
    emit(args, doc, "\n".join(lines))
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `lifecycle` to the `rmh` parser."""
    p = sub.add_parser(
        "lifecycle", help="archive stale conversation notes (DMF survival, 4D rule); reversible")
    p.add_argument("--apply", action="store_true",
                   help="record the archive decisions in the learning ledger (default: report)")
    p.add_argument("--today", default=None, type=iso_date,
                   help="ISO date the rules are judged at (default: today's date)")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.set_defaults(func=cmd_lifecycle)
