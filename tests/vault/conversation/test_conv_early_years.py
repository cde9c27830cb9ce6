"""CONV5: a turn dated before the year 1000 reads "0001-01-01" in its context line, its
session note's heading and its entities' trajectories, as every other date of rmh does
(isoformat). Before, strftime's %Y wrote "1-01-01" on glibc (other C libraries pad), so the
same conversation gave other note bytes and context lines by platform."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

from vault import Vault, build_context, ingest_conversations, load_transcript


@pytest.mark.parametrize("year", [1, 9, 42, 999, 1000, 2024])
def test_an_early_year_is_written_with_four_digits(tmp_path: Path, year: int) -> None:
    day = f"{year:04d}-03-05"
    text = json.dumps({"format": "rmh-conversation/1", "id": "c", "sessions": [
        {"id": "s1", "date": f"{day}T10:00", "turns": [
            {"speaker": "Al", "text": "I saw Carla at the kayak club."},
            {"speaker": "Bo", "text": "Carla paddles a green kayak."}]}]})
    with Vault.init(tmp_path / "v") as v:
        ingest_conversations(v, load_transcript(text).conversations, use_nlp=False)
        v.sync()
        ctx = build_context(v, "Who paddles a kayak?", 100, now=date(2025, 1, 1))
    assert ctx.lines and all(ln.text.startswith(f"[{day} 10:00] ") for ln in ctx.lines)
    session = (tmp_path / "v" / "conversations" / "c" / "c s1.md").read_text("utf-8")
    assert f"# Session s1 ({day})" in session
    carla = (tmp_path / "v" / "conversations" / "c" / "entities" / "carla.md").read_text("utf-8")
    assert f"- {day} [[" in carla
