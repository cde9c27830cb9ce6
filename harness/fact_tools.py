"""Corrections and provenance on every surface: `correct`, `why`, and trust labels on hits.

Thin adapters over `vault.correct_fact`, `vault.note_origin` and the learning ledger's
`note_history`, shared by the CLI (`rmh fact`, `rmh why`), the operation table (JSON-RPC
`vault.correct` / `vault.why`, MCP tools and REPL functions `correct` / `why`, run on the
vault thread) and `search` (`label_hits`). The wall clock
is read here, at the boundary, to stamp a correction (`at`); the vault takes it as a parameter.
"""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vault import Vault

EVENTS_SHOWN = 20


def now_iso() -> str:
    """The correction's time: UTC, to the second."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def correct_note(vault: Vault, note: str, action: str, *, value: str | None, reason: str,
                 by: str, at: str | None = None) -> dict[str, Any]:
    """Confirm, reject or supersede the fact note `note` (vault.correct_fact)."""
    from vault import correct_fact

    return correct_fact(vault, note, action, by=by, at=at or now_iso(), value=value,
                        reason=reason).to_json()


def used_for(vault: Vault, note_id: int) -> dict[str, Any]:
    """What the learning log says the note was used for: events by kind, sessions, the
    latest events (searches that showed it, reads, citations); {} without a ledger."""

    if vault.ledger is None:
        return {"learning": "off"}
    hist = vault.ledger.note_history(note_id)
    events = hist["events"]
    kinds = Counter(str(e["kind"]) for e in events)
    sessions = sorted({str(e["session"]) for e in events if e.get("session")})
    return {"events_total": hist["events_total"], "by_kind": dict(sorted(kinds.items())),
            "sessions": sessions, "q": hist["q"],
            "latest": [{k: e[k] for k in ("seq", "kind", "session", "rank", "query", "from")
                        if k in e} for e in events[-EVENTS_SHOWN:]]}


def why_note(vault: Vault, note: str) -> dict[str, Any]:
    """Where `note` came from and what it has been used for (module docstring)."""
    from vault import note_origin

    out = note_origin(vault, note)
    out["used_for"] = used_for(vault, int(out["id"]))
    return out


def label_hits(vault: Vault, doc: dict[str, Any]) -> dict[str, Any]:
    """A search result's fact hits with their trust (state, by, at, current)."""
    from vault import claim_trust

    for hit in doc.get("hits", []):
        if "/facts/" not in str(hit.get("note", "")):
            continue
        row = vault.note_row(int(hit["id"]))
        if row is not None and row.frontmatter.get("key") is not None:
            hit["trust"] = claim_trust(row.frontmatter).to_json()
    return doc
