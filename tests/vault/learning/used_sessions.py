"""A small vault learning from its use (a ledger on a test clock, the default engine) and the
sessions that teach it: for tests of what one question's learned use does to another's
ranking."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from vault import LEDGER_FILE, Ledger, SearchResult, Vault

from .test_ledger_facade import Clock

FILLER = ("Folders", "Tags", "Search")  # notes about none of the questions (a corpus for idf)


def learning_vault(root: Path, clock: Clock, notes: Mapping[str, str]) -> tuple[Vault, Ledger]:
    """The vault at `root` (its `.rmh` made here) with its ledger on `clock`: `notes` (path ->
    text, in order) written, then one note for each FILLER name."""
    (root / ".rmh").mkdir()
    ledger = Ledger.open(root / ".rmh" / LEDGER_FILE, clock=clock)
    v = Vault.open(root, usage=ledger)
    for path, text in notes.items():
        v.write(path, text)
    for name in FILLER:
        v.write(f"{name}.md", f"{name} organise each note in a vault.\n")
    return v, ledger


def reading_sessions(v: Vault, ledger: Ledger, clock: Clock, question: str, note: str, *,
                     shown: Sequence[str] | None = None) -> None:
    """Three sessions, a minute each, in which `question` was searched (or, given `shown`,
    answered with only those notes shown) and `note` read."""
    for s in range(3):
        ledger.start_session(f"s{s}", clock.t)
        if shown is None:
            v.search(question, session=f"s{s}")
        else:
            v.shown(question, list(shown), session=f"s{s}")
        v.read(note, session=f"s{s}")
        clock.t += 60.0
        ledger.end_session(f"s{s}", clock.t)


def held_and_replayed(v: Vault, hits: SearchResult, title: str, query: str,
                      clock: Clock) -> None:
    """The hold's receipt and replay checks shared by the licence tests: the held note's
    receipt still sums to its score, and the search replayed `as_of` the clock is the same."""
    got = {h.title: h for h in hits.hits}
    receipt = got[title].receipt
    parts = ("fused", "context", "named", "warmth", "prior")
    assert abs(sum(float(receipt[p]) for p in parts) - got[title].score) < 1e-12
    replayed = v.search(query, as_of=clock.t).hits
    assert [(h.title, h.score) for h in hits.hits] == [(h.title, h.score) for h in replayed]
