"""Learning commands: `rmh replay`, `rmh archive NOTE`, `rmh restore NOTE`, `rmh learning`.

`learning_health(vault, ledger, now)` is the learning section of `rmh doctor`. The ledger file
is VAULT/.rmh/learned.sqlite; the wall clock is read here (the harness), never in vault/.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

from harness.compose import open_ledger, plain_vault
from vault import Ledger, Vault

from .output import emit


def learning_health(vault: Vault, ledger: Ledger, now: float | None = None) -> dict[str, Any]:
    """The learning section of `rmh doctor`: reward counts, forward citations, Pearson(exposure,
    Q), edge weight distribution, rows naming missing notes (must be 0), replay consistency."""
    report = ledger.health(vault.corpus().ids, time.time() if now is None else now)
    report["replay_matches"] = ledger.replay() == ledger.state
    return report


def cmd_replay(args: argparse.Namespace) -> int:
    with plain_vault(args.vault) as v:
        ledger = open_ledger(v)
        try:
            stored = ledger.state
            rebuilt = ledger.replay()
            same = rebuilt == stored
            if not args.check:
                ledger.rebuild()
            doc = {"events": sum(ledger.event_counts().values()), "matched": same,
                   "notes": len(rebuilt.notes), "pairs": len(rebuilt.pairs),
                   "rewritten": not args.check}
        finally:
            ledger.close()
    verb = "checked" if args.check else "rebuilt"
    emit(args, doc, f"{verb} learned state from {doc['events']} events: "
                    f"{doc['notes']} notes, {doc['pairs']} pairs; stored state "
                    f"{'matched' if same else 'DIFFERED'}")
    return 0 if same or not args.check else 1


def _flag(args: argparse.Namespace, archive: bool) -> int:
    with plain_vault(args.vault) as v:
        note_id = v.resolve(args.note)
        path = v.path_of(note_id)
        ledger = open_ledger(v)
        try:
            if archive:
                ledger.archive(note_id, time.time(), args.reason)
                changed = True
            else:
                changed = ledger.restore(note_id, time.time())
        finally:
            ledger.close()
    what = "archived" if archive else "restored"
    emit(args, {"note": path, "id": note_id, what: changed},
         f"{what} {path}" if changed else f"{path} was not archived")
    return 0


def cmd_archive(args: argparse.Namespace) -> int:
    return _flag(args, archive=True)


def cmd_restore(args: argparse.Namespace) -> int:
    return _flag(args, archive=False)


def cmd_learning(args: argparse.Namespace) -> int:
    with plain_vault(args.vault) as v:
        ledger = open_ledger(v)
        try:
            report = learning_health(v, ledger)
        finally:
            ledger.close()
    emit(args, report, json.dumps(report, indent=2, sort_keys=True))
    return 0 if report["missing_rows"] == 0 and report["replay_matches"] else 1


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add replay, archive, restore and learning to the `rmh` parser."""
    p = sub.add_parser("replay", help="rebuild every learned number from the event log")
    p.add_argument("--check", action="store_true", help="only compare; write nothing")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_replay)
    p = sub.add_parser("archive", help="take a note out of default search (reversible)")
    p.add_argument("note")
    p.add_argument("--reason", default="manual")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_archive)
    p = sub.add_parser("restore", help="bring an archived note back into search")
    p.add_argument("note")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_restore)
    p = sub.add_parser("learning", help="audit learned state (the learning part of doctor)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_learning)
