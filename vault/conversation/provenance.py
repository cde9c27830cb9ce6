"""Provenance: where a note (a fact, entity, episode, turn, session or any note) came from.

`origin(vault, note)` answers from the folder alone (the source of truth), so it holds after
an index rebuild:

- ``kind``: fact | rule | entity | episode | turn | session | working | note;
- ``conversation``, ``session`` and ``turn`` when the note is conversation memory;
- ``sources``: the notes it was derived from, each {note, turn, session, speaker, date, text}
  (a fact's source turns, an episode's turns, an entity's trajectory, a session's turns, a
  turn's own conversation position); a correction names who made it instead (``source``);
- ``derived``: the notes derived from it (what links to it among conversation memory: the
  facts a turn is evidence for, the episodes it is part of), and ``linked_from``: every other
  note linking to it;
- ``trust`` for a fact (notes/trust.py), with its history.

What the note has been *used for* (searches that showed it, reads, citations, sessions) is the
learning log's to say; the harness adds it (`Ledger.note_history`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..notes.trust import is_claim, trust_of

if TYPE_CHECKING:
    from ..core import Vault

SOURCES_MAX = 50
TEXT_MAX = 300
_KINDS = {"L0": "turn", "L1": "session", "L2": "fact", "L3": "rule", "entity": "entity",
          "episodic": "episode", "working": "working"}


def _target(link: object) -> str:
    """The path of a wiki-link "[[folder/Note|label]]" (with .md)."""
    text = str(link).strip()
    if text.startswith("[["):
        text = text[2:].split("]]", 1)[0]
    text = text.split("|", 1)[0].split("#", 1)[0].strip()
    return text if text.endswith(".md") else f"{text}.md"


def _turn(vault: Vault, path: str) -> dict[str, Any]:
    """One source note as {note, ...}: a turn with its speaker, date and text."""
    out: dict[str, Any] = {"note": path}
    try:
        rec = vault.read(path, learn=False)
    except Exception:
        out["missing"] = True
        return out
    fm = rec.frontmatter
    for key in ("turn", "session", "speaker", "date"):
        if fm.get(key) is not None:
            out[key] = str(fm[key])
    text = " ".join(rec.body.split())
    speaker = str(fm.get("speaker", ""))
    out["text"] = (text.removeprefix(f"{speaker}: ") if speaker else text)[:TEXT_MAX]
    return out


def _link_fields(fm: Mapping[str, Any], names: tuple[str, ...]) -> list[str]:
    found: list[str] = []
    for name in names:
        value = fm.get(name)
        for item in value if isinstance(value, list) else [value] if value else []:
            if isinstance(item, str) and item.startswith("[["):
                found.append(_target(item))
    return list(dict.fromkeys(found))


def origin(vault: Vault, note: str) -> dict[str, Any]:
    """Where `note` came from (module docstring); NoteNotFound / AmbiguousNote as `read`."""
    rec = vault.read(note, learn=False)
    fm = rec.frontmatter
    tier = str(fm.get("tier", "")) if fm.get("tier") is not None else ""
    kind = _KINDS.get(tier, "note")
    out: dict[str, Any] = {"note": rec.note, "id": rec.id, "title": rec.title, "kind": kind}
    for key in ("conversation", "session", "turn"):
        if fm.get(key) is not None:
            out[key] = str(fm[key])
    if kind in ("fact", "rule"):
        paths = _link_fields(fm, ("sources",))
        for key in ("subject", "key", "value", "first_observed", "last_confirmed",
                    "confirmations", "confidence", "source"):
            if fm.get(key) is not None:
                out[key] = fm[key]
        if is_claim(fm):
            t = trust_of(fm)
            out["trust"] = {**t.to_json(), "history": list(fm.get("trust_history") or []),
                            "corrects": _link_fields(fm, ("corrects",))}
    elif kind == "turn":
        paths = _link_fields(fm, ("previous",))
    else:  # an entity's trajectory, an episode's parts, a session's turns: its body links
        paths = [li.resolved for li in rec.links if li.resolved and li.resolved.startswith(
            "conversations/") and li.resolved != rec.note and not any(
                part in li.resolved for part in ("/entities/", "/facts/", "/episodes/"))]
        paths = list(dict.fromkeys(p for p in paths if p is not None))
        if kind == "note":
            paths = []
    out["sources"] = [_turn(vault, p) for p in paths[:SOURCES_MAX]]
    out["sources_total"] = len(paths)
    back = vault.backlinks(rec.note)
    derived = [p for p in back if p.startswith("conversations/") and (
        "/facts/" in p or "/episodes/" in p)]
    out["derived"] = derived[:SOURCES_MAX]
    out["linked_from"] = [p for p in back if p not in derived][:SOURCES_MAX]
    if kind == "note":
        out["source"] = {"file": rec.note, "frontmatter": {
            k: str(fm[k]) for k in ("source", "created", "date", "updated", "author")
            if fm.get(k) is not None}}
    return out
