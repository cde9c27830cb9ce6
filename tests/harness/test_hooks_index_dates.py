"""The hooks' index dates a note as the search does (harness/hooks_index.py `_date`): a
prompt that asks for a day and nothing else recalls on the FTS path the notes the engine
finds dated that day, whichever way the date is written."""

from __future__ import annotations

import random
import sqlite3
from datetime import date, timedelta
from pathlib import Path

import pytest

from harness.hooks_index import FORMAT, index_path, refresh
from harness.hooks_recall import recall
from vault import Vault

TODAY = date(2024, 6, 1)
# Each way a note's day is written that the search reads (retrieval/when.py `note_day`, else
# `name_day`): the path, and its text with {d} for the day.
FORMS = (
    ("Journal/{iso}.md", "Fixed the {w} with Sam.\n"),  # a daily note: no frontmatter
    ("Journal/{iso} Saturday.md", "Walked by the {w}.\n"),
    ("spelled-{i}.md", "---\ndate: {day} {month}, {year}\n---\nBought a {w}.\n"),
    ("slashed-{i}.md", "---\ndate: {year}/{mm}/{dd}\n---\nThe {w} lesson.\n"),
    ("iso-{i}.md", "---\ndate: {iso}\n---\nThe {w} club.\n"),
)
WORDS = ("boiler", "kayak", "violin", "chess", "garden", "lamp")


@pytest.mark.parametrize("seed", range(3))
def test_a_day_asked_recalls_every_note_the_search_dates_that_day(
        tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    root = tmp_path / "v"
    days = [TODAY - timedelta(days=rng.randint(3, 300)) for _ in range(4)]
    dated: dict[date, set[str]] = {d: set() for d in days}
    with Vault.init(root) as v:
        for i in range(12):
            d, (path, text) = rng.choice(days), rng.choice(FORMS)
            fields = {"iso": d.isoformat(), "i": i, "day": d.day, "month": d.strftime("%B"),
                      "year": d.year, "mm": f"{d.month:02d}", "dd": f"{d.day:02d}",
                      "w": rng.choice(WORDS)}
            note = path.format(**fields)
            if note in dated[d]:
                continue
            v.write(note, text.format(**fields))
            dated[d].add(note)
        v.sync()
        refresh(v)
        for d, notes in dated.items():
            prompt = f"What happened on {d.day} {d.strftime('%B')} {d.year}?"
            found = {h.note for h in v.search(prompt, 20, learn=False, now=TODAY).hits
                     if h.receipt["signals"].get("time", {}).get("raw") == 1.0}
            assert found == notes
            text, shown = recall(root, prompt, 400, k=20, min_share=0.5, today=TODAY)
            assert set(shown) == notes, (prompt, text)
            assert all(f"[{d.isoformat()}]" in line for line in text.splitlines()
                       if line.startswith("- ")), text


def test_an_index_dated_by_the_old_rules_is_rebuilt(tmp_path: Path) -> None:
    root = tmp_path / "v"
    with Vault.init(root) as v:
        v.write("Journal/2024-05-08.md", "Fixed the boiler.\n")
        v.sync()
        refresh(v)
        conn = sqlite3.connect(index_path(root))
        with conn:
            conn.execute("UPDATE notes SET date = '2030-01-01'")
            conn.execute(f"PRAGMA user_version = {FORMAT - 1}")
        conn.close()
        assert refresh(v)["changed"] == 1
    assert recall(root, "What happened on 8 May 2024?", 80, k=5, min_share=0.5,
                  today=TODAY)[1] == ["Journal/2024-05-08.md"]
