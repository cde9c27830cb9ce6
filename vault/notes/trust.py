"""Trust in a note's claim: a state with who set it and when, kept in the note's frontmatter.

A fact note (conversation/fact_notes.py) is a claim extracted from what someone said. Its
trust is one of three states:

- ``provisional``: as extracted (the default; a note without ``trust`` is provisional, set by
  ``extraction`` when it was first observed);
- ``confirmed``: a person or agent said it is right;
- ``rejected``: a person or agent said it is wrong. The note stays, as a **tombstone**: a
  later ingest that extracts the same (subject, key, value) again writes it rejected too
  (conversation/corrections.py), so a correction stays corrected.

A claim is **superseded** when a correction names the value that replaces it: the old note
gets ``superseded_by`` (a wiki-link to the new value's note), the new one ``corrects`` (links
to the values it replaces). A claim is *current* when it is not rejected and not superseded;
default search and `context` show only current claims, history on request.

Frontmatter written (the folder is the source of truth: an index rebuild keeps all of it):
``trust``, ``trust_by`` (who or what: "user", "agent:<session>", "extraction", ...),
``trust_at`` (ISO time, a parameter: nothing here reads a clock), ``trust_reason`` (optional),
``trust_history`` (earlier states, oldest first, as {state, by, at, reason}),
``superseded_by`` and ``corrects``. The body gets one line right under its title saying the
state (``> Trust: rejected by user at ...``), so a reader of the markdown sees it too.
`apply` is a pure function of (text, fields): re-rendering a note and applying the same
fields gives the same bytes, which is how re-ingest leaves a corrected note unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .frontmatter import find_block
from .note import update_frontmatter

STATES = ("provisional", "confirmed", "rejected")
FIELDS = ("trust", "trust_by", "trust_at", "trust_reason", "trust_history", "superseded_by",
          "corrects")
_LINE = re.compile(r"^> Trust: [^\n]*\n(?:\r?\n)?", re.M)
_TITLE = re.compile(r"# [^\n]*\n(?:\r?\n)?")


@dataclass(frozen=True)
class Trust:
    """The trust state of one claim (module docstring)."""

    state: str
    by: str
    at: str
    reason: str = ""
    superseded_by: tuple[str, ...] = ()

    @property
    def current(self) -> bool:
        return self.state != "rejected" and not self.superseded_by

    def to_json(self) -> dict[str, Any]:
        return {"state": self.state, "by": self.by, "at": self.at, "reason": self.reason,
                "current": self.current, "superseded_by": list(self.superseded_by)}


def links_in(value: object) -> tuple[str, ...]:
    """The links a `superseded_by` or `corrects` value holds: one string, or a list's
    non-empty items (anything else an editor may have written there holds none)."""
    if isinstance(value, str) and value:
        return (value,)
    if isinstance(value, list):
        return tuple(str(v) for v in value if v)
    return ()


def trust_of(fm: Mapping[str, Any]) -> Trust:
    """The claim's trust as its frontmatter says (provisional, by extraction, when absent)."""
    state = fm.get("trust")
    state = state if state in STATES else "provisional"
    by = str(fm.get("trust_by") or "extraction")
    at = str(fm.get("trust_at") or fm.get("first_observed") or "")
    return Trust(str(state), by, at, str(fm.get("trust_reason") or ""),
                 links_in(fm.get("superseded_by")))


def is_claim(fm: Mapping[str, Any]) -> bool:
    """Whether the frontmatter is a fact note's (an L2 fact or L3 rule with a key)."""
    return fm.get("tier") in ("L2", "L3") and "key" in fm and "value" in fm


def not_current(fm: Mapping[str, Any]) -> bool:
    """A claim that is rejected or superseded (left out of default search and context)."""
    return bool(fm) and (fm.get("trust") == "rejected" or bool(links_in(fm.get("superseded_by"))))


def kept_fields(fm: Mapping[str, Any]) -> dict[str, Any]:
    """The trust fields a note holds (to carry onto a re-rendered text with `apply`)."""
    return {k: fm[k] for k in FIELDS if k in fm and fm[k] not in (None, "", [])}


def transition(fm: Mapping[str, Any], state: str, by: str, at: str, reason: str = ""
               ) -> dict[str, Any]:
    """The trust fields after setting `state` (ValueError for an unknown state); the state
    before goes to `trust_history`."""
    if state not in STATES:
        raise ValueError(f"unknown trust state {state!r} (one of {', '.join(STATES)})")
    out = kept_fields(fm)
    before = trust_of(fm)
    earlier = out.get("trust_history")  # an editor may have left anything there
    history = [dict(h) for h in (earlier if isinstance(earlier, list) else [])
               if isinstance(h, Mapping)]
    history.append({"state": before.state, "by": before.by, "at": before.at,
                    "reason": before.reason})
    out.update(trust=state, trust_by=by, trust_at=at, trust_history=history)
    out["trust_reason"] = reason or None
    return {k: v for k, v in out.items() if v is not None}


def apply(text: str, fields: Mapping[str, Any]) -> str:
    """`text` with the trust `fields` set in its frontmatter (every other key kept) and the
    body's trust line rewritten to match; a pure function of its arguments."""
    # Removed first, then set in FIELDS order at the end of the block: the same fields give
    # the same bytes whatever the note held before (re-ingest compares hashes).
    out = update_frontmatter(text, dict.fromkeys(FIELDS))
    out = update_frontmatter(out, {k: fields[k] for k in FIELDS if fields.get(k) is not None})
    out = _LINE.sub("", out)
    line = _line(fields)
    if not line:
        return out
    # The body starts where the parser's block ends (a byte-order mark, CRLF and a `...`
    # fence included); a closing fence that ends the file gets its line ending first, or the
    # trust line would fuse onto it (`---> Trust:`) and the note would lose its frontmatter.
    block = find_block(out)
    nl = "\n" if block is None else block.newline
    start = (1 if out.startswith("\ufeff") else 0) if block is None else block.body_start
    if block is not None and not out[:start].endswith("\n"):
        out += "\n" if out.endswith("\r") else nl
        start = len(out)
    title = _TITLE.match(out, start)
    at = start if title is None else title.end()
    return out[:at] + line + nl + nl + out[at:]


def _line(fields: Mapping[str, Any]) -> str:
    state = fields.get("trust")
    sup = links_in(fields.get("superseded_by"))
    cor = links_in(fields.get("corrects"))
    if state is None and not sup and not cor:
        return ""
    parts = [f"> Trust: {state or 'provisional'}"]
    if state is not None:
        parts.append(f" by {fields.get('trust_by', '?')} at {fields.get('trust_at', '?')}")
    if fields.get("trust_reason"):
        parts.append(f" ({fields['trust_reason']})")
    if sup:
        parts.append(f"; superseded by {', '.join(sup)}")
    if cor:
        parts.append(f"; corrects {', '.join(cor)}")
    return "".join(parts).replace("\n", " ")
