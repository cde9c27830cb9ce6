"""The L1 session note of one session (ingest.py writes it; layout.py says where it lives).

Frontmatter: tier "L1", conversation, session, date, speakers, turns, first_tick, last_tick;
for a session its source titled (a chat export's conversation title), `title` and that title
as its one alias, so `read` and `search` find the conversation by the name its app showed.
The body: a heading (the title, else "Session <id> (<date>)"), a deterministic extractive
summary (the session's top turns by Omega, ties by tick, shown in tick order; min(5, n/5
rounded up) of them), and a link to every turn.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..notes.note import render
from .events import Event
from .layout import link, session_path, turn_path

SUMMARY_MAX = 5


def session_note(session: str, evs: Sequence[Event], title: str = "") -> tuple[str, str]:
    """(path, text) of the session note of `evs` (the session's turns, in tick order)."""
    first = evs[0]
    n_keep = min(SUMMARY_MAX, math.ceil(len(evs) / 5))
    best = sorted(evs, key=lambda e: (-e.survival.omega, e.tick))[:n_keep]
    summary = sorted(best, key=lambda e: e.tick)
    tlink = {e.tick: link(turn_path(e.conversation, e.session, e.turn_id), e.turn_id) for e in evs}
    speakers = sorted({e.speaker for e in evs})
    fm: dict[str, Any] = {
        "tier": "L1", "conversation": first.conversation, "session": session,
        "date": first.when.isoformat(), "speakers": speakers, "turns": len(evs),
        "first_tick": first.tick, "last_tick": evs[-1].tick,
    }
    heading = f"Session {session} ({first.when.date().isoformat()})"
    title = " ".join(title.split())
    if title:
        fm["title"], fm["aliases"] = title, [title]
        heading = f"{title}\n\n{heading}"
    lines = [f"# {heading}", "", "## Summary (extractive)", ""]
    lines += [f"- {tlink[e.tick]} **{e.speaker}**: {e.text}" for e in summary]
    lines += ["", "## Turns", ""] + [f"- {tlink[e.tick]}" for e in evs]
    return session_path(first.conversation, session), render(fm, "\n".join(lines) + "\n")
