"""Working memory (4D seed: "Current conversation -> Working context"): the live session's
scratch notes, promoted or archived when the session ends.

A working note lives at ``conversations/<cid>/working/<session>/<title>.md`` with frontmatter
tier "working", conversation, session, date (the caller's: no wall clock) and, once someone
confirms it, ``confirmed: true``. It is an ordinary note: search finds it and `context` shows it
(labelled "Working") while the session runs.

Session end (`session_end`, a pure function of the corpus) decides, for every working note of
that session not already archived:

- **promote** when it is *cited* (another note links to it: a `[[link]]` written after it) or
  *confirmed* (``confirmed: true``): the note keeps its path and id, its tier becomes "L2" with
  ``kind: working-note``, ``promoted_from: working`` and ``promoted_because`` (the citing notes
  or "confirmed"), so it lives on as semantic memory;
- **archive** otherwise: the ledger's reversible archive flag (`rmh restore NOTE` undoes it).

Both are reversible: `demoted_text` turns a promoted note back into the working note it was
(tier "working", the promotion fields removed), and archiving is a flag, never a deletion.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..notes.note import render
from ..storage.corpus import Corpus
from .layout import ROOT, slug

TIER = "working"
_PROMOTION_FIELDS = ("kind", "promoted_from", "promoted_because")


def working_path(cid: str, session: str, title: str) -> str:
    return f"{ROOT}/{slug(cid)}/working/{slug(session)}/{slug(title)}.md"


def working_note(cid: str, session: str, text: str, when: datetime,
                 confirmed: bool = False) -> str:
    """The text of a new working note (frontmatter + body)."""
    fm: dict[str, Any] = {"tier": TIER, "conversation": cid, "session": session,
                          "date": when.isoformat()}
    if confirmed:
        fm["confirmed"] = True
    return render(fm, text.strip() + "\n")


@dataclass(frozen=True)
class WorkingDecision:
    """What session end does to one working note; `text` is the promoted note (promote only)."""

    note: str
    id: int
    action: str  # "promote" | "archive"
    reason: str
    text: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"note": self.note, "id": self.id, "action": self.action, "reason": self.reason}


def is_working(fm: Mapping[str, Any], cid: str, session: str) -> bool:
    return (fm.get("tier") == TIER and str(fm.get("conversation", "")) == cid
            and str(fm.get("session", "")) == session)


def session_end(corpus: Corpus, cid: str, session: str) -> tuple[WorkingDecision, ...]:
    """The decision for every live working note of (`cid`, `session`), in path order."""
    cited: dict[int, list[str]] = {}
    for a, b in corpus.edges:
        if a != b:
            cited.setdefault(b, []).append(corpus.paths[a])
    out: list[WorkingDecision] = []
    for i in range(len(corpus)):
        fm = corpus.frontmatter[i]
        if corpus.archived[i] or not is_working(fm, cid, session):
            continue
        by = sorted(cited.get(i, []))
        if by or fm.get("confirmed") is True:
            because = ("cited by " + ", ".join(by)) if by else "confirmed"
            new = {**fm, "tier": "L2", "kind": "working-note", "promoted_from": TIER,
                   "promoted_because": because}
            out.append(WorkingDecision(corpus.paths[i], corpus.ids[i], "promote", because,
                                       render(new, corpus.bodies[i])))
        else:
            out.append(WorkingDecision(corpus.paths[i], corpus.ids[i], "archive",
                                       "neither cited nor confirmed by session end"))
    return tuple(sorted(out, key=lambda d: (d.note, d.id)))


def demoted_text(frontmatter: Mapping[str, Any], body: str) -> str | None:
    """The working note a promoted note came from; None if it was not promoted from working."""
    if frontmatter.get("promoted_from") != TIER:
        return None
    fm = {k: v for k, v in frontmatter.items() if k not in _PROMOTION_FIELDS}
    fm["tier"] = TIER
    return render(fm, body)
