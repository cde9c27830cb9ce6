"""The opening request of an agent's session as a goal (the `nlp` extra): what `episodes`'
parsed path takes as the goal of a session whose first user turn neither the parse
(`parsed_episodes.parsed_goal`) nor the text rules (`task_words`) read a goal in.

A user who opens a session with an assistant has asked for something, whatever the words:
"payments-worker pod is in CrashLoopBackOff. ideas?", "p99 of 2.3s, product wants it under
200ms. help", "Why is my fig dropping leaves?" (the small model parses "leaves" as a verb).
The structure says it, not the phrasing: the turn is the session's first user turn (a
request opens a session; later turns answer the assistant) and the assistant answers it
(the next turn, same session). Its anchors are the turn's own
(`parsed_episodes.turn_goal`), a "problem" goal when the text rules find a problem's terms
in it.

A greeting or a story before the request ("morning! rough night, the pager went off
twice") is the opening too; `episodes.find_episodes` leaves the goal to the session's next
user turn when the reading finds a goal there that closes with a verdict. It applies only
in a session with an assistant (between people an opener is small talk; LoCoMo's sessions
are left as they were), and the episode still needs a verdict later in its window.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .events import Event
from .parsed_episodes import Goal, turn_goal
from .task_words import goal_terms


def _fold(text: str) -> str:
    return " ".join(text.replace("’", "'").replace("‘", "'").casefold().split())


def opening(evs: Sequence[Event], i: int, doc: Any) -> Goal | None:
    """The goal of user turn `evs[i]` (parse `doc`) as its session's opening request,
    answered by the assistant (module docstring), or None."""
    ev = evs[i]
    if ev.role != "user" or i + 1 >= len(evs):
        return None
    if any(e.session == ev.session and e.role == "user" for e in evs[:i]):
        return None  # not the session's first user turn
    nxt = evs[i + 1]
    if nxt.role != "assistant" or nxt.session != ev.session:
        return None
    return turn_goal(doc, problem=bool(goal_terms(_fold(ev.text))[1]))
