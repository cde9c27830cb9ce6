"""DMF archiving counts the turns said after a turn by time, not by file position (CONV6,
session 32: a file listing its sessions newest first decayed its newest turns fastest: the
2024 session was proposed for archiving and the 2022 one kept). Generated: many sessions on
distinct days, ingested in date order and in reverse order; the turns proposed for archiving
are the same turns (by speaker and text) both ways, and they are the oldest ones."""

from __future__ import annotations

import json
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from vault import Vault, archive_decisions, ingest_conversations, load_conversations
from vault.notes.note import parse


def _archived(root: Path, sessions: list[dict[str, Any]]) -> list[tuple[str, str]]:
    Vault.init(root)
    conv = {"format": "rmh-conversation/1", "id": "c", "sessions": sessions}
    with Vault.open(root, watch=False) as v:
        ingest_conversations(v, load_conversations(json.dumps(conv)), use_nlp=False)
        got = archive_decisions(v.corpus(), date(2030, 1, 1))
    out = []
    for d in got:
        if d.rule == "dmf":
            note = parse((root / d.note).read_text(encoding="utf-8"))
            out.append((str(note.frontmatter["date"]), note.body.strip()))
    return sorted(out)


@pytest.mark.parametrize("n", [60, 90])
def test_the_oldest_turns_decay_first_in_any_file_order(tmp_path: Path, n: int) -> None:
    start = datetime(2022, 2, 28, 23, 30)
    sessions: list[dict[str, Any]] = [
        {"id": f"s{k}", "date": (start + timedelta(days=7 * k)).isoformat(),
         "turns": [{"speaker": "Al", "text": f"ok {k} fine", "role": "assistant"},
                   {"speaker": "Bo", "text": f"hm {k} right", "role": "assistant"}]}
        for k in range(n)]
    forward = _archived(tmp_path / "forward", sessions)
    backward = _archived(tmp_path / "backward", sessions[::-1])
    assert forward, "nothing decayed: the test needs more turns"
    assert backward == forward
    newest_archived = max(when for when, _ in forward)
    kept = [s["date"] for s in sessions if str(s["date"]) > newest_archived]
    assert kept  # the newest turns stay
