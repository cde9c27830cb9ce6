"""A note's frontmatter properties are found by search (vault/notes/properties.py): a value word
no other part of the note holds finds it, first, and judged relevant; keys, dates, numbers and
booleans are no words of the note; a value the note already says adds nothing; a changed
property is searched as changed, by a running vault and a new process alike. Session 40's new
user: `severity: SEV1` in frontmatter, `rmh search SEV1` -> "nothing relevant found"."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from vault import NullUsage, Vault
from vault.notes.properties import property_text
from vault.retrieval.signals.bm25 import described

ROOT = Path(__file__).resolve().parents[3]
CLOCK = datetime(2026, 12, 7, 12, tzinfo=UTC).timestamp()
STATUS = ("blocked", "shipped", "drafted", "abandoned", "reviewing")
PEOPLE = ("Alice", "Bob", "Carla", "Dmitri", "Esme")
SYLLABLES = ("zor", "quan", "blix", "tev", "mur", "pax", "dro", "kel", "vun", "yas")
BODIES = ("We talked about the rollout plan and the open questions.",
          "The migration needs another review before it can go out.",
          "Notes from the sync: nothing decided yet, follow up next week.",
          "The dashboard shows the error rate going down after the fix.")


def word(rng: random.Random) -> str:
    return "".join(rng.sample(SYLLABLES, 3))


def write_vault(root: Path, rng: random.Random, n: int = 24) -> dict[str, dict[str, str]]:
    """`n` notes whose properties hold words their bodies lack; returns each note's."""
    props: dict[str, dict[str, str]] = {}
    used: set[str] = set()
    for i in range(n):
        code = word(rng)
        while code in used:
            code = word(rng)
        used.add(code)
        p = {"status": rng.choice(STATUS), "owner": rng.choice(PEOPLE), "code": code}
        props[f"Projects/p{i}.md"] = p
        lines = ["---", f"status: {p['status']}", f'owner: "[[{p["owner"]}]]"',
                 f"project: [{code}, platform]", f"priority: {rng.randint(1, 5)}",
                 "archived: false", f"date: 2026-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}",
                 "---", rng.choice(BODIES)]
        (root / "Projects").mkdir(exist_ok=True)
        (root / f"Projects/p{i}.md").write_text("\n".join(lines) + "\n")
    return props


@pytest.mark.parametrize("seed", range(3))
def test_a_property_value_finds_its_note(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    props = write_vault(tmp_path, rng)
    with Vault.init(tmp_path, usage=NullUsage(lambda: CLOCK)) as v:
        for note in rng.sample(sorted(props), 6):
            got = v.search(props[note]["code"], 3, learn=False)
            assert got.hits and got.hits[0].note == note, (note, props[note])
            assert got.relevance is not None and got.relevance.relevant
            status = props[note]["status"]
            hits = v.search(f"{status} projects", 24, learn=False).hits
            holding = {n for n, p in props.items() if p["status"] == status}
            assert {h.note for h in hits[:len(holding)]} == holding, status
        # keys, numbers, booleans and the date are no words of the note
        for absent in ("priority", "archived", "false", "owner", "2026"):
            got = v.search(absent, 3, learn=False)
            assert all(h.receipt["signals"]["bm25"]["raw"] == 0.0 for h in got.hits), absent


def test_a_changed_property_is_searched_as_changed(tmp_path: Path) -> None:
    props = write_vault(tmp_path, random.Random(7), n=8)
    note = "Projects/p3.md"
    old = props[note]["code"]
    with Vault.init(tmp_path, usage=NullUsage(lambda: CLOCK)) as v:
        assert v.search(old, 1, learn=False).hits[0].note == note
        text = (tmp_path / note).read_text()
        v.write(note, text.replace(f"project: [{old},", "project: [snarkwood,"),
                expected_hash=v.read(note).hash)
        assert v.search("snarkwood", 1, learn=False).hits[0].note == note
        assert v.search(old, 1, learn=False).relevance.relevant is False  # type: ignore[union-attr]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-m", "harness", "--vault", str(tmp_path), "search",
                          "snarkwood", "--json", "--no-learn", "--no-dense"], env=env,
                         capture_output=True, text=True, timeout=300, check=True)
    assert json.loads(out.stdout)["hits"][0]["note"] == note


def test_what_is_read_of_the_properties() -> None:
    fm = {"Status": "blocked", "owner": "[[Alice Chen|Alice]]", "team": ["payments", 3, None],
          "nested": {"deep": "hidden"}, "date": "2026-03-02", "Created": "2026-03-01",
          "tags": ["t1"], "aliases": ["A"], "title": "Other title", "description": "desc",
          "cssclasses": ["wide"], "n": 5, "flag": True, "speaker": "Caroline"}
    got = property_text(fm, "Caroline: hello")
    assert got.split() == ["blocked", "alice", "chen", "alice", "payments"]
    ids = {"dia_id": "D1:3", "v": "2.1", "conv": "cc-1", "sev": "SEV1"}
    assert property_text(ids, "") == "sev1"
    assert property_text({"speaker": "Caroline"}, "[[Caroline]]: hi") == ""
    side = described(fm, "Note", "Caroline: hello").split()
    assert "blocked" in side and "wide" not in side and "2026" not in side
    assert property_text({"k": "word " * 5000}, "") == ""  # a blob is no keyword
