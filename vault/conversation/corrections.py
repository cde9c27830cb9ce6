"""Corrections that stay corrected: confirm, reject or supersede a fact note, on every surface.

The trust state lives in the fact note's frontmatter (notes/trust.py), so the folder stays the
source of truth and an index rebuild keeps it. Three actions (`correct`):

- ``confirm``: trust becomes ``confirmed``;
- ``reject``: trust becomes ``rejected``; the note stays as a tombstone;
- ``supersede`` with a new value: the note for (subject, key, new value) in the same
  conversation is confirmed (written when there is none, as a correction: confidence 1.0,
  observed at the correction's date, no source turn) and lists the old note in ``corrects``;
  the old note gets ``superseded_by``. Both notes change as one journalled operation: a
  kill leaves both or neither (the next open), and so does a refusal of the second write
  (the old note put back; a full disk leaves the journal, which writes it once there is room).

Each action records who (`by`) and when (`at`, an ISO time given by the caller: nothing here
reads a clock) and keeps the state before in ``trust_history``. Writes are compare-and-swap
(the hash read), so a correction never overwrites an edit made since.

Ingest respects them (`carry`): a fact note it renders again keeps the trust fields of the
note already there for the same (conversation, subject, key, value), and a (subject, key,
value) rejected anywhere in the vault is written rejected (a tombstone of the first). So
re-ingesting the conversation, or one that says the same thing again, never brings a rejected
value back as current; only `confirm` does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from ..errors import EditRefused
from ..notes.note import parse, render
from ..notes.trust import (
    apply,
    is_claim,
    kept_fields,
    links_in,
    not_current,
    transition,
    trust_of,
)
from .facts import sentence
from .layout import fact_path, link
from .per_corpus import kept

if TYPE_CHECKING:
    from ..core import Vault
    from ..storage.corpus import Corpus

ACTIONS = ("confirm", "reject", "supersede")
Triple = tuple[str, str, str]


@dataclass(frozen=True)
class Correction:
    """What one correction did: the notes written and the claim's trust after it."""

    action: str
    note: str
    trust: dict[str, Any]
    written: tuple[str, ...]
    current: str  # the note holding the current belief of the claim's (subject, key)

    def to_json(self) -> dict[str, Any]:
        return {"action": self.action, "note": self.note, "trust": self.trust,
                "written": list(self.written), "current": self.current}


def fold(subject: str, key: str, value: str) -> Triple:
    """The (subject, key, value) a tombstone matches: case-folded subject and value."""
    return (subject.casefold(), key, value.casefold())


def triple_of(fm: Mapping[str, Any]) -> Triple:
    return fold(str(fm.get("subject", "")), str(fm.get("key", "")), str(fm.get("value", "")))


def _iso(at: datetime | str) -> str:
    return at if isinstance(at, str) else at.isoformat(timespec="seconds")


def _day(at: str) -> str:
    try:
        return datetime.fromisoformat(at).date().isoformat()
    except ValueError:
        return date.fromisoformat(at[:10]).isoformat()


def correct(vault: Vault, note: str, action: str, *, by: str, at: datetime | str,
            value: str | None = None, reason: str = "") -> Correction:
    """Confirm, reject or supersede (with `value`) the fact note `note` (module docstring).
    EditRefused when `note` is no fact note, the action is unknown, or `value` is missing
    (supersede) or equal to the note's; NoteNotFound / EditConflict as for any edit."""
    when = _iso(at)
    if action not in ACTIONS:
        raise EditRefused("correct", f"unknown action {action!r} (one of {', '.join(ACTIONS)})")
    # a write: a name several notes share is refused, not picked (README)
    rec = vault.read(vault.path_of(vault.resolve(note, as_link=False)), learn=False)
    # The frontmatter of the very bytes whose hash guards the write (a read's parsed parts
    # come from the index, which another process's write may have overtaken since).
    fm = parse(rec.text).frontmatter
    if not is_claim(fm):
        raise EditRefused("correct", f"{rec.note} is not a fact note (tier L2/L3 with a key)")
    if action != "supersede":
        state = "confirmed" if action == "confirm" else "rejected"
        fields = transition(fm, state, by, when, reason)
        if action == "confirm":
            fields.pop("superseded_by", None)  # confirming an old value makes it current
        vault.write(rec.note, apply(rec.text, fields), expected_hash=rec.hash)
        return Correction(action, rec.note, trust_of(fields).to_json(), (rec.note,), rec.note
                          if trust_of(fields).current else "")
    new_value = " ".join((value or "").split()).lower()  # as extraction writes values
    if not new_value or new_value.casefold() == str(fm.get("value", "")).casefold():
        raise EditRefused("correct", "supersede needs a new value, different from the old")
    if fm.get("subject") in (None, ""):  # the new value's note is (subject, key, value)
        raise EditRefused("correct", f"{rec.note} names no subject: supersede needs one "
                          "(confirm or reject it instead)")
    cid, subject, key = str(fm.get("conversation", "")), str(fm["subject"]), str(fm["key"])
    target = fold(subject, key, new_value)
    found = next((p for p, f in _claims(vault.corpus()) if triple_of(f) == target
                  and str(f.get("conversation", "")) == cid), None)
    old_link = link(rec.note, str(fm.get("value", "")))
    if found is not None:
        new = vault.read(found, learn=False)
        new_fm = parse(new.text).frontmatter
        nf = transition(new_fm, "confirmed", by, when, reason)
        nf["corrects"] = sorted({*links_in(new_fm.get("corrects")), old_link})
        nf.pop("superseded_by", None)
        new_path, new_text, new_hash = found, apply(new.text, nf), new.hash
    else:
        new_path = _free_path(vault, cid, sentence(subject, key, new_value))
        new_text, new_hash = _correction_note(fm, new_value, by, when, reason, old_link), None
    of = transition(fm, trust_of(fm).state, by, when, reason or f"superseded by {new_value}")
    of["superseded_by"] = [link(new_path, new_value)]
    old_text = apply(rec.text, of)
    # refused (its folder not writable, an edit meanwhile): the old note put back, both or
    # neither, a kill midway too (whole: Vault.journalled); a full disk: the journal writes
    # the rest once there is room
    with vault.journalled([(rec.note, old_text), (new_path, new_text)], whole=True):
        vault.write(rec.note, old_text, expected_hash=rec.hash)
        vault.write(new_path, new_text, overwrite=new_hash is not None, expected_hash=new_hash)
    return Correction(action, rec.note, trust_of(of).to_json(), (rec.note, new_path), new_path)


def _free_path(vault: Vault, cid: str, title: str) -> str:
    taken = {p.casefold() for p in vault.corpus().paths}
    path, n = fact_path(cid, title), 1
    while path.casefold() in taken:
        n += 1
        path = fact_path(cid, f"{title[:100]} ({n})")  # the number kept (fact_notes.fact_paths)
    return path


def _correction_note(old: Mapping[str, Any], value: str, by: str, at: str, reason: str,
                     old_link: str) -> str:
    subject, key = str(old["subject"]), str(old["key"])
    title = sentence(subject, key, value)
    fm: dict[str, Any] = {
        "tier": "L2", "kind": old.get("kind", "fact"), "conversation": old.get("conversation"),
        "subject": subject, "key": key, "value": value, "statement": title,
        "said": f"(a correction by {by})", "confidence": 1.0, "first_observed": _day(at),
        "last_confirmed": _day(at), "confirmations": 1, "sessions": [], "sources": [],
        "source": f"correction by {by} at {at}",
    }
    for name in ("subject_note",):
        if old.get(name):
            fm[name] = old[name]
    body = (f"# {title}\n\nFact (L2), a correction: {by} said at {at} that this replaces "
            f"{old_link}.\n")
    fields = {"trust": "confirmed", "trust_by": by, "trust_at": at,
              "trust_history": [{"state": "provisional", "by": by, "at": at, "reason": ""}],
              "corrects": [old_link]}
    if reason:
        fields["trust_reason"] = reason
    return apply(render(fm, body), fields)


def _claims(corpus: Corpus) -> list[tuple[str, Mapping[str, Any]]]:
    return [(corpus.paths[i], fm) for i, fm in enumerate(corpus.frontmatter)
            if fm and is_claim(fm)]


def carry(corpus: Corpus, notes: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """Ingest's rendered notes with the trust the vault already holds (module docstring):
    each fact note keeps the trust fields of the note for its (conversation, triple), else a
    triple rejected elsewhere is written rejected. Other notes pass unchanged."""
    claims = _claims(corpus)
    if not any(kept_fields(fm) for _, fm in claims):
        return list(notes)
    held: dict[tuple[str, Triple], dict[str, Any]] = {}
    dead: dict[Triple, tuple[str, Mapping[str, Any]]] = {}
    for path, fm in sorted(claims, key=lambda c: c[0]):
        kept = kept_fields(fm)
        if kept:
            held.setdefault((str(fm.get("conversation", "")), triple_of(fm)), kept)
        if fm.get("trust") == "rejected":
            dead.setdefault(triple_of(fm), (path, fm))
    out: list[tuple[str, str]] = []
    for path, text in notes:
        if "/facts/" not in path:
            out.append((path, text))
            continue
        fm = parse(text).frontmatter
        mine = (str(fm.get("conversation", "")), triple_of(fm))
        if mine in held:
            out.append((path, apply(text, held[mine])))
        elif mine[1] in dead:
            src, dfm = dead[mine[1]]
            out.append((path, apply(text, {
                "trust": "rejected", "trust_by": str(dfm.get("trust_by", "")),
                "trust_at": str(dfm.get("trust_at", "")),
                "trust_reason": f"tombstone of {link(src, str(dfm.get('value', '')))}"})))
        else:
            out.append((path, text))
    return out


def stale_sources(corpus: Corpus) -> Mapping[str, tuple[str, ...]]:
    """Turn note path -> what a reader must know about the claims it is evidence for that are
    no longer current ("'alice lives in rome' was rejected by user at ..."), for `context`;
    kept while `corpus` is the current one (per_corpus.py)."""
    return kept("stale sources", corpus, lambda: _stale_sources(corpus))


def _stale_sources(corpus: Corpus) -> Mapping[str, tuple[str, ...]]:
    out: dict[str, list[str]] = {}
    for _, fm in _claims(corpus):
        if not not_current(fm):
            continue
        t = trust_of(fm)
        what = (f"rejected by {t.by} at {t.at}" if t.state == "rejected"
                else f"superseded by {', '.join(t.superseded_by)}")
        label = f"correction: '{fm.get('statement', '')}' was {what}"
        for src in fm.get("sources", []) or []:
            target = str(src).removeprefix("[[").split("|", 1)[0].split("]]", 1)[0]
            out.setdefault(f"{target}.md", []).append(label)
    return MappingProxyType({k: tuple(sorted(set(v))) for k, v in sorted(out.items())})
