"""The turns an ingest leaves out: those `rmh forget` erased (storage/forgotten.py; ingest.py's
module docstring)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from ..storage import forgotten
from ..storage.store import STATE_DIR
from .formats import Conversation
from .layout import turn_path


def remembered(root: Path, conversations: Sequence[Conversation]) -> list[Conversation]:
    """The conversations without the turns an ingest into the vault at `root` leaves out
    (erased by `rmh forget`: module docstring), for a step before the ingest that must not
    see them either (the LLM entity step: it sent them to the model and cached its answers
    naming the subject again)."""
    gone = forgotten.load(root / STATE_DIR)
    return [without_forgotten(c, gone) if gone else c for c in conversations]


def without_forgotten(conv: Conversation, gone: forgotten.Forgotten) -> Conversation:
    """`conv` without the turns `rmh forget` erased (module docstring)."""
    cid = conv.conversation_id
    return replace(conv, sessions=tuple(
        replace(s, turns=tuple(t for t in s.turns if not (
            gone.names(t.speaker) or gone.names(t.text)
            or gone.path(turn_path(cid, s.session_id, t.turn_id)))),
            title="" if gone.names(s.title) else s.title)
        for s in conv.sessions))
