"""What the parse tests share: whether the `nlp` extra is installed (its tests skip without it,
except in CI, where RMH_REQUIRE_NLP=1 makes its absence an error), two speakers, the entity
keys of a turn ingested as an rmh-conversation/1 document, a one-session conversation and the
turns of the episodes found in it."""

from __future__ import annotations

import json
import os

import pytest

from vault import build_events, find_episodes, load_conversations, nlp_status
from vault.conversation.formats import Conversation

INSTALLED = nlp_status()["extractor"] == "spacy"
if not INSTALLED and os.environ.get("RMH_REQUIRE_NLP") == "1":
    raise AssertionError(f"RMH_REQUIRE_NLP=1 but: {nlp_status()['reason']}")
needs_nlp = pytest.mark.skipif(not INSTALLED, reason="the nlp extra is not installed")
PEOPLE = ("Rosa", "Omar")


def entities(text: str) -> list[str]:
    """The name and thing entity keys of `text` said by Rosa after Omar's greeting."""
    doc = {"format": "rmh-conversation/1", "id": "c", "sessions": [{"id": "s", "date":
           "2026-02-01T10:00", "turns": [{"id": "t0", "speaker": "Omar", "text": "Hi."},
                                         {"id": "t1", "speaker": "Rosa", "text": text}]}]}
    (conv,) = load_conversations(json.dumps(doc), "simple")
    return [e.key for e in build_events(conv)[1].entities if e.kind in ("name", "thing")]


def one_session(turns: list[tuple[str, str, str]]) -> Conversation:
    """The rmh-conversation/1 conversation "c" of one session of (speaker, role, text) turns,
    turn i with id "c:i"."""
    said = [{"id": f"c:{i}", "speaker": sp, "role": role, "text": text}
            for i, (sp, role, text) in enumerate(turns)]
    (conv,) = load_conversations(json.dumps({"format": "rmh-conversation/1", "id": "c",
                                             "sessions": [{"id": "s1",
                                                           "date": "2025-03-04T09:00",
                                                           "turns": said}]}))
    return conv


def episode_ticks(turns: list[tuple[str, str, str]], *, use_nlp: bool = True
                  ) -> list[tuple[int, int, str, int | None]]:
    """(goal, outcome, label, lesson or None) turn indices of each episode `find_episodes`
    finds in `one_session(turns)`."""
    eps = find_episodes(build_events(one_session(turns), use_nlp=use_nlp), use_nlp=use_nlp)
    return [(e.goal.tick, e.outcome.tick, e.outcome.label, e.lesson.tick if e.lesson else None)
            for e in eps]
