"""The server's session hooks on the learning ledger: start and end sessions, recover the dead
ones, and match an ended session's answer to the notes it used.

Built by `rmh serve` (harness/commands/serve.py) from the ledger and the vault that
harness/compose.py opened; the wall clock enters here, as in compose (`time.time`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from vault import (
    LEDGER_FILE,
    SESSIONS_DIR,
    DiskFull,
    Ledger,
    SessionLocks,
    Vault,
    VaultError,
    answer_uses,
    is_disk_full,
)

from .ask_used import WIKI_LINK
from .compose import liveness
from .errors import Refused


def forget_deleted(vault: Vault, ledger: Ledger) -> list[int]:
    """Recovery: forget the learned rows of notes the index no longer holds (deleted while
    no ledger listened: by a process opened without learning, by an older rmh, or killed
    between its index and its ledger write); returns their ids. Deletes seen by a vault
    that has the ledger are delete events already, so this finds nothing then."""
    state = ledger.state  # O(learned notes), never O(notes): no snapshot is built
    named = set(state.notes) | {n for pair in state.pairs for n in pair}
    return ledger.prune_missing(vault.existing(named), time.time())


class LedgerSessions:
    """Session hooks for the server: start and end sessions in the learning ledger.

    Liveness (issue 13): each session this process serves holds its lock file under
    VAULT/.rmh/sessions/ (vault SessionLocks) until it ends or the process dies; an open
    session in the ledger whose lock nobody holds is dead and is recovered (its rewards
    applied) at the next `recover()` or session start, at once, with no idle timer."""

    def __init__(self, ledger: Ledger, vault: Vault,
                 texts: Callable[[Sequence[int]], Mapping[int, str]] | None = None) -> None:
        self.ledger = ledger
        self.vault = vault
        self.locks = SessionLocks(vault.state_path / SESSIONS_DIR)  # `.rmh` held
        self.alive = liveness(ledger, vault.root, self.locks)
        self.texts = texts if texts is not None else (lambda ids: {})

    def recover(self) -> list[str]:
        """End every dead open session now, and forget notes deleted while no ledger listened
        (`forget_deleted`; the server calls this as it starts). On a full disk nothing is
        recovered this time (a warning says so): the server still starts."""
        try:
            forget_deleted(self.vault, self.ledger)
            return self.ledger.recover(time.time(), alive=self.alive)
        except Exception as exc:
            if not is_disk_full(exc):
                raise
            logging.getLogger("rmh.serve").warning("recovery postponed: %s", DiskFull(LEDGER_FILE))
            return []

    def start(self, session: str) -> Mapping[str, Any]:
        """Open `session` here. An id the log knows is refused unless it is an open session
        no process claims (the CLI's --session), as `session_error`: an ended one (nothing more
        would count), another live process's, or a dead server's, which is
        recovered first; served here, the dead owner its start event names made the next
        rmh process recover it under this live server, and this server's use was lost."""
        verdict = self.alive(session) if session in self.ledger.open_sessions() else None
        if verdict is False:
            self.ledger.recover(time.time(), alive=self.alive)
        if self.ledger.session_ended(session):
            raise Refused("session_error", f"session {session!r} has ended; start another id "
                                           "(or none: one is made)")
        if verdict is True or not self.locks.hold(session):
            raise Refused("session_error", f"session {session!r} is open in another rmh "
                                            "process; start another id (or none: one is made)")
        recovered = self.ledger.start_session(session, time.time(), alive=self.alive,
                                              owner=self.locks.owner())
        return {"recovered_sessions": recovered}

    def end(self, session: str, answer: str | None = None) -> Mapping[str, Any]:
        """End the session: its evidence applies; `answer`, the agent's answer text, counts the
        retrieved notes whose distinctive terms it uses as used (vault answer_uses)."""
        try:
            answered = self._answered(session, answer) if answer else []
            applied = self.ledger.end_session(session, time.time(), answered=answered)
        finally:
            self.locks.release(session)
        return {"rewards_applied": applied, "answer_used": len(answered)}

    def _answered(self, session: str, answer: str) -> list[int]:
        """Retrieved notes the answer cites by a `[[link]]` that resolves to them, or whose
        distinctive terms it uses (vault answer_uses)."""
        shown = sorted({n for ev in self.ledger.session_events(session) for n, _, _ in ev.shown()})
        texts = self.texts(shown)
        used = set(answer_uses(answer, texts, self.ledger.params.answer_min_terms))
        return sorted(used | (cited_ids(self.vault, answer) & set(shown)))


def cited_ids(vault: Vault, answer: str) -> set[int]:
    """Ids of the notes the `[[link]]`s of `answer` resolve to (path, title or alias, as
    `read` resolves them); a link naming no note counts nothing."""
    out: set[int] = set()
    for target in sorted({m.group(1).strip() for m in WIKI_LINK.finditer(answer)}):
        try:
            out.add(vault.resolve(target))
        except VaultError:
            continue
    return out


def note_texts(vault: Vault) -> Callable[[Sequence[int]], Mapping[int, str]]:
    """Title and body of notes by id, from the vault's current corpus (ids it no longer
    holds are left out): what session.end's answer is matched against."""

    def texts(ids: Sequence[int]) -> Mapping[int, str]:
        corpus = vault.corpus()
        out: dict[int, str] = {}
        for note in ids:
            try:
                pos = corpus.position(note)
            except KeyError:
                continue
            out[note] = f"{corpus.titles[pos]}\n{corpus.bodies[pos]}"
        return out

    return texts
