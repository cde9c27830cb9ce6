"""`rmh forget`: erasure with proof (vault/erasure.py), the operator's command.

Unlike `rmh delete` (reversible: the note goes to `.rmh/trash/`), `forget` removes the text
for good from the folder, the trash, the index, the embedding caches (the vault's and the
shared one) and the learned event log, vacuums the SQLite files, and ends with a proof: every
file rmh owns scanned for the erased strings (`0 occurrences in N files`). It exits 1 when the
proof finds anything, or could not read a file of the vault (`erasure_incomplete`; under
`--json` the error carries the report).
`--dry-run` shows what would go and changes nothing.
"""

from __future__ import annotations

import argparse
from typing import Any

from vault import ReadOnlyVault

from .. import hooks_index
from ..compose import open_vault, own_files
from ..config import load
from ..config_file import user_path
from .operation_commands import utf8_text
from .output import CommandFailed, counted, emit


class ErasureIncomplete(CommandFailed):
    """The proof found erased strings left in the vault's files (exit 1; `data` is the
    erasure's report, proof included)."""

    code_name = "erasure_incomplete"

    def __init__(self, summary: str, report: dict[str, Any]) -> None:
        super().__init__(f"erasure incomplete: {summary}")
        self.report = report

    def data(self) -> dict[str, Any]:
        return {"report": self.report}


def cmd_forget(args: argparse.Namespace) -> int:
    if not args.notes and not (args.subject or "").strip():
        raise CommandFailed("name at least one NOTE or a --subject")
    cfg = load(vault=args.vault)
    with open_vault(cfg) as v:
        todo = v.forget_plan(args.notes, args.subject or "")
        if args.dry_run:
            lines = [f"would erase {counted(len(todo.notes), 'note')}, "
                     f"{counted(len(todo.trash), 'trash copy', 'trash copies')}, "
                     "the stored embeddings of their "
                     f"{counted(len(todo.chunk_keys), 'chunk')} (none where they were never "
                     "embedded), and their learned events:",
                     *(f"  {p}" for p in todo.notes), *(f"  trash: {t}" for t in todo.trash),
                     *(f"  hidden: {h}" for h in todo.hidden)]  # storage/leftovers.py
            emit(args, {"dry_run": True, **todo.to_json()}, "\n".join(lines))
            return 0
        if v.read_only:  # refused before the hooks' files below, as every write is: their
            raise ReadOnlyVault()  # unlinks were the first thing to fail (an untyped EROFS)
        shared = [user_path(cfg.embed.shared_cache)] if cfg.embed.shared_cache else []
        # the hooks' files first, before the intent lands: the prompt hook reads them
        # without opening the vault, so no open's check guards them while it is pending
        had = own_files(v.root, todo.needles, cfg.fault_after_ops)
        # rmh.toml's folder paths naming the subject are the user's layout, reported apart
        done = v.forget(todo, shared, settings=[v.root / "rmh.toml"])
        if had:
            hooks_index.refresh(v)  # rebuilt from the notes that remain
    human = (f"erased {counted(len(todo.notes), 'note')} and "
             f"{counted(len(todo.trash), 'trash copy', 'trash copies')} "
             f"({counted(done.embeddings, 'embedding')}, "
             f"{counted(done.learning.get('events_dropped', 0), 'event')} "
             f"dropped, {done.learning.get('events_rewritten', 0)} rewritten); proof: "
             f"{done.proof.summary()}")
    if not done.proof.complete:  # under --json one document: the error, carrying the report
        if not args.json:
            print(human)
        raise ErasureIncomplete(done.proof.summary(), done.to_json())
    emit(args, done.to_json(), human)
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("forget", help="erase notes for good, with proof (not reversible)",
                       description=__doc__)
    p.add_argument("notes", nargs="*", metavar="NOTE", help="notes to erase (path or title)")
    p.add_argument("--subject", metavar="TEXT", type=utf8_text,  # it goes in the intent file
                   help="also erase every note naming TEXT (a whole word, case-insensitive)")
    p.add_argument("--dry-run", action="store_true", help="show what would go; change nothing")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.set_defaults(func=cmd_forget)
