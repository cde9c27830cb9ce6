"""Episode notes: one markdown note per episode (`episodes.find_episodes`), tier "episodic".

Path ``conversations/<cid>/episodes/<cid> <session> episode <n>.md`` (n counts the session's
episodes from 1, in tick order). Frontmatter: tier "episodic", extraction "patterns" (the note
says it was found by fixed patterns, not written by a model), conversation, session, date (the
goal turn's), goal, outcome (success | failure), lesson (or absent), first_tick, last_tick,
entity_keys (the union of the turns' non-speaker rows, so `context` can match it), turns
(wiki-links to every turn of the episode) and parts ([{label, turn}], the label of each part).
The body lists the parts, each labelled and linked to its turn. Archiving an episode note is
reversible like any note (the ledger's archive flag; `rmh restore NOTE`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..notes.note import render
from .episodes import Beat, Episode
from .events import Event
from .layout import ROOT, link, slug, turn_path


def episode_path(cid: str, session: str, n: int) -> str:
    return f"{ROOT}/{slug(cid)}/episodes/{slug(cid)} {slug(session)} episode {n}.md"


def _turn_link(ev: Event) -> str:
    return link(turn_path(ev.conversation, ev.session, ev.turn_id), ev.turn_id)


def episode_notes(episodes: Sequence[Episode], events: Sequence[Event]) -> list[tuple[str, str]]:
    """Every episode note of one conversation, as (path, text), in path order."""
    by_tick: Mapping[int, Event] = {e.tick: e for e in events}
    counts: dict[str, int] = {}
    out: list[tuple[str, str]] = []
    for ep in episodes:
        counts[ep.session] = counts.get(ep.session, 0) + 1
        path = episode_path(ep.conversation, ep.session, counts[ep.session])
        evs = [by_tick[t] for t in ep.ticks if t in by_tick]
        keys = sorted({e.key for ev in evs for e in ev.entities if e.kind != "speaker"})
        parts: list[Beat] = [ep.goal, *ep.steps, ep.outcome]
        if ep.lesson and ep.lesson.tick != ep.outcome.tick:
            parts.append(ep.lesson)
        fm: dict[str, Any] = {
            "tier": "episodic", "extraction": "patterns", "conversation": ep.conversation,
            "session": ep.session, "date": by_tick[ep.goal.tick].when.isoformat(),
            "goal": ep.goal.text, "outcome": ep.outcome.label,
            "first_tick": ep.ticks[0], "last_tick": ep.ticks[-1], "entity_keys": keys,
            "turns": [_turn_link(e) for e in evs],
            "parts": [{"label": p.label, "turn": by_tick[p.tick].turn_id} for p in parts],
        }
        if ep.lesson:
            fm["lesson"] = ep.lesson.text
        body = [f"# Episode: {ep.goal.text}", "",
                "Found by fixed patterns (goal, steps tried, outcome, lesson); no model wrote "
                "it. Each part links to the turn it came from.", ""]
        body.append(f"- **Goal** ({_turn_link(by_tick[ep.goal.tick])}, {ep.goal.speaker}): "
                    f"{ep.goal.text}")
        for p in ep.steps:
            what = "Tried" if p.label == "tried" else "Step"
            body.append(f"- **{what}** ({_turn_link(by_tick[p.tick])}, {p.speaker}): {p.text}")
        body.append(f"- **Outcome: {ep.outcome.label}** ({_turn_link(by_tick[ep.outcome.tick])}, "
                    f"{ep.outcome.speaker}): {ep.outcome.text}")
        if ep.lesson:
            body.append(f"- **Lesson** ({_turn_link(by_tick[ep.lesson.tick])}, "
                        f"{ep.lesson.speaker}): {ep.lesson.text}")
        body += ["", "## Summary", "", ep.summary()]
        out.append((path, render(fm, "\n".join(body) + "\n")))
    return sorted(out)
