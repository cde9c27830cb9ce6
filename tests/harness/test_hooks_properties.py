"""The prompt hook recalls a note by its frontmatter properties as the search finds it
(harness/hooks_index.py `described`, the search's own `vault.frontmatter_words`): generated
vaults whose notes hold code words only in a property (a list item, a wiki link, a plain
value); the prompt naming one recalls that note first, as `search` ranks it first; a key or a
number is no word; an index written before (without the column) is read whole until the
refresh that rebuilds it. Session 41: "the prompt hooks' index does not read properties"."""

from __future__ import annotations

import hashlib
import random
import sqlite3
from pathlib import Path

import pytest

from harness.hooks_index import FORMAT, index_path, refresh
from harness.hooks_recall import recall
from vault import Vault

from ..vault.notes.test_properties import write_vault

# FORMAT 5's tables, as session 41 wrote them (no `described` column; 6 has the same)
OLD = ("CREATE TABLE notes(id INTEGER PRIMARY KEY, path TEXT UNIQUE NOT NULL, hash TEXT NOT "
       "NULL, title TEXT, date TEXT, tier TEXT, speaker TEXT, conversation TEXT, previous TEXT, "
       "body TEXT)",
       "CREATE VIRTUAL TABLE fts USING fts5(title, body, tokenize='porter unicode61')")


def recalled(root: Path, prompt: str) -> list[str]:
    return recall(root, prompt, 400, k=5, min_share=0.5)[1]


@pytest.mark.parametrize("seed", range(3))
def test_a_property_value_recalls_its_note_as_search_finds_it(tmp_path: Path,
                                                              seed: int) -> None:
    rng = random.Random(seed)
    root = tmp_path / "v"
    root.mkdir()
    props = write_vault(root, rng)
    with Vault.init(root) as v:
        v.sync()
        refresh(v)
        for note in rng.sample(sorted(props), 6):
            code = props[note]["code"]
            prompt = f"what is new on the {code} platform?"
            assert v.search(prompt, 3, learn=False).hits[0].note == note
            assert recalled(root, prompt)[:1] == [note], (prompt, recalled(root, prompt))
        owner = props[sorted(props)[0]]["owner"]
        owned = {n for n, p in props.items() if p["owner"] == owner}
        got = recalled(root, f"news of the {owner} platform")  # a wiki link's words
        assert got and set(got) <= owned, (owner, got, owned)
        assert recalled(root, "which priority archived") == []  # keys and values of no word


def test_an_index_written_before_is_read_whole_until_rebuilt(tmp_path: Path) -> None:
    root = tmp_path / "v"
    root.mkdir()
    props = write_vault(root, random.Random(7), n=4)
    note = sorted(props)[0]
    code = props[note]["code"]
    with Vault.init(root) as v:
        v.sync()
        # an index before session 42 names no owner: its rows count where the note is here
        # with the bytes indexed (hooks_owner.Same, STORE17), so old.md is a real file
        old = root / "old.md"
        old.write_bytes(b"the kiln fires on Friday\n")
        digest = hashlib.sha256(old.read_bytes()).hexdigest()
        conn = sqlite3.connect(index_path(root))
        with conn:
            for table in OLD:
                conn.execute(table)
            conn.execute("INSERT INTO notes VALUES (1, 'old.md', ?, 'old', '2026-01-01', '', "
                         "'', '', '', 'the kiln fires on Friday')", (digest,))
            conn.execute("INSERT INTO fts(rowid, title, body) VALUES (1, 'old', "
                         "'the kiln fires on Friday')")
            conn.execute("PRAGMA user_version = 5")
        conn.close()
        assert recalled(root, "when does the kiln fire") == ["old.md"]  # read as it is
        assert recalled(root, f"what is new on the {code} platform?") == []
        old.unlink()
        assert refresh(v)["changed"] == 4
        assert recalled(root, "when does the kiln fire") == []
        assert recalled(root, f"what is new on the {code} platform?")[:1] == [note]
    conn = sqlite3.connect(index_path(root))
    assert conn.execute("PRAGMA user_version").fetchone()[0] == FORMAT
    conn.close()
