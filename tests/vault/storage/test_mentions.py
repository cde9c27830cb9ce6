"""Whole-word mentions (storage/mentions.py): the rule erasure picks notes, trash copies and log
lines by, and the proof's search of rmh's bytes for a subject. Generated texts against an
oracle (the text's words), and real binary files: a SQLite file of float32 vectors under hex
keys, as the embedding caches are."""

from __future__ import annotations

import json
import random
import re
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from vault.notes.text import SPACELESS_CLASS
from vault.storage.mentions import count_in_bytes, mentioning, mentions

PIECES = ("ann", "Ann", "ANN", "annual", "joanna", "3a9f", "deb", "debate", "é", "ß", "_", " ",
          ", ", "'s", "[[", "]]", "/", ".md", "\n", "\\n", "-", "0", "zoë", "Ann_", "日本")


def _words(text: str) -> list[str]:
    """The oracle: runs of word characters; a letter of a script written without spaces
    ("日本") is no part of a Latin word beside it ("Ann日本" names Ann)."""
    return re.findall(f"[^\\W{SPACELESS_CLASS}]+", text.casefold())


@pytest.mark.parametrize("seed", range(6))
def test_a_word_is_mentioned_exactly_when_it_is_one_of_the_text_s_words(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(2000):
        text = "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 12)))
        for subject in ("Ann", "deb", "Zoë", "3a9f"):
            want = subject.casefold() in _words(text.replace("\\n", " "))
            assert mentions(text, subject) == want, (text, subject)


def test_edges_that_are_no_word_character_need_no_boundary() -> None:
    assert mentions("I like C++.", "c++") and not mentions("xC++", "C++")
    assert mentions("mail @ann!", "@ann") and mentions("x@ann", "@ann")
    assert not mentions("anything", "") and not mentioning([])("anything")
    assert mentioning(["Ann", "Deb"])("Deb's") and not mentioning(["Ann", "Deb"])("debt")


def test_json_escapes_before_a_name_are_boundaries() -> None:
    line = json.dumps({"prompt": "hi\nAnn said\tAnn\u00e9 and \u00e9Ann"}, ensure_ascii=True)
    assert "\\nAnn" in line and mentions(line, "Ann")
    assert mentions(json.dumps({"q": "x\tAnn"}), "ann")
    assert not mentions(json.dumps({"q": "xAnn"}), "ann")


def _vector_cache(path: Path, rows: int, seed: int, texts: tuple[str, ...] = ()) -> None:
    """A SQLite file shaped like the embedding caches: hex keys, float32 vectors; `texts` as
    rows of a text table beside them."""
    rng = np.random.default_rng(seed)
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE embeddings (key TEXT PRIMARY KEY, vec BLOB)")
    con.execute("CREATE TABLE log (data TEXT)")
    con.executemany("INSERT INTO embeddings VALUES (?, ?)",
                    [(f"{rng.integers(1 << 62):016x}{rng.integers(1 << 62):016x}",
                      (rng.standard_normal(384) / 20).astype(np.float32).tobytes())
                     for _ in range(rows)])
    con.executemany("INSERT INTO log VALUES (?)", [(t,) for t in texts])
    con.commit()
    con.close()


def test_chance_bytes_are_no_mention_and_text_among_them_is(tmp_path: Path) -> None:
    cache = tmp_path / "cache.sqlite"
    _vector_cache(cache, 4000, 7)  # 6 MB of vectors and hex keys
    data = cache.read_bytes().lower()
    for name in ("ed", "al", "ada", "deb", "bede", "Fae"):
        assert count_in_bytes(cache, name) == 0, name
    assert sum(data.count(n.encode()) for n in ("ed", "al", "ada")) > 100  # chance bytes
    logged = tmp_path / "logged.sqlite"
    _vector_cache(logged, 4000, 7, ('{"query":"where does Al live","shown":[3,4]}',
                                    json.dumps({"prompt": "ok\nAda called"}),
                                    "Zoë and the annual debate"))
    assert count_in_bytes(logged, "al") == 1 and count_in_bytes(logged, "ADA") == 1
    assert count_in_bytes(logged, "zoë") == 1 and count_in_bytes(logged, "Deb") == 0


def test_a_short_text_file_is_text_to_its_ends(tmp_path: Path) -> None:
    note = tmp_path / "n.md"
    for body, want in (("Al", 1), ("Al\n", 1), ("[[Al]]", 1), ("Alan", 0), ("", 0),
                       ("\x00\x01Al\x02", 0), ("\x00\x01 Al says hello to everyone\x02", 1)):
        note.write_bytes(body.encode())
        assert count_in_bytes(note, "al") == want, body


def test_a_value_beside_another_in_a_sqlite_row_is_found(tmp_path: Path) -> None:
    """Bytes alone cannot tell "searchAnn met Bo" (two text values of one SQLite row side by
    side) from a word: the proof read no trace there, nor of "Ann" alone in a column. Read as
    rows, each value is text on its own; chance bytes stay no trace (hex keys, vectors)."""
    from vault.storage.erase import scan
    from vault.storage.mentions import count_in_sqlite

    db = tmp_path / "log.sqlite"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE events(kind TEXT, query TEXT, n INTEGER)")
    conn.executemany("INSERT INTO events VALUES (?, ?, ?)", [
        ("search", "Ann met Bo at the kiln today", 1), ("alias", "Ann", 2),
        ("annual", "Joanna", 3), ("3ann0" * 12, "x", 4)])
    conn.execute("CREATE TABLE vec(key TEXT, v BLOB)")
    conn.execute("INSERT INTO vec VALUES (?, ?)", ("ab" * 32, b"\x00ann\x01" * 8))
    conn.commit()
    conn.close()
    assert count_in_bytes(db, "Ann") == 0  # what the proof read before
    assert count_in_sqlite(db, "Ann") == 2 and count_in_sqlite(db, "Bo") == 1
    assert scan([db], ["Ann"], "Ann").occurrences == 2
    (tmp_path / "plain.txt").write_text("not SQLite: Ann")
    assert count_in_sqlite(tmp_path / "plain.txt", "Ann") == 0
    assert count_in_sqlite(db, "Joann") == 0 and count_in_sqlite(db, "") == 0


def test_a_name_is_the_same_composed_or_decomposed(tmp_path: Path) -> None:
    """"Zoë" typed composed (NFC) names a "Zoë" written decomposed (NFD, as macOS names files
    and some keyboards type): before, `forget --subject Zoë` left the NFD note, its proof
    found nothing (other bytes), and the record of the subject did not match it either."""
    from vault.storage import forgotten

    nfc, nfd = "Zo\u00eb", "Zoe\u0308"
    for text, needle in ((f"met {nfd} today", nfc), (f"met {nfc} today", nfd)):
        assert mentions(text, needle) and mentioning([needle])(text)
    assert not mentions(f"met {nfd}x today", nfc)
    (tmp_path / "log.txt").write_text(f"a long line of text about {nfd} and the kiln\n")
    assert count_in_bytes(tmp_path / "log.txt", nfc) == 1
    assert count_in_bytes(tmp_path / "log.txt", "Zoe") == 0 and not mentions(nfd, "Zoe")
    forgotten.remember(tmp_path, nfc, [])
    assert forgotten.load(tmp_path).names(f"{nfd} said hello")


def test_a_name_of_several_words_is_named_across_any_white_space(tmp_path: Path) -> None:
    """A hard-wrapped paragraph ("met Ann\\nLee") names "Ann Lee": before, `forget --subject
    "Ann Lee"` kept such a note and its proof, reading bytes for "ann lee", found nothing
    (.rmh/forgotten.json matched it: words in a row)."""
    for text in ("met Ann\nLee today", "met ANN  lee", "met Ann\t\n Lee", '{"t": "Ann\\nLee"}'):
        assert mentions(text, "Ann Lee") and mentioning(["ann lee"])(text), text
    for text in ("met Ann Leeds", "met Ann. Lee", "Ann", "met Joann Lee"):
        assert not mentions(text, "Ann Lee"), text
    assert not mentions("a  b", "  ") and not mentioning(["\n"])("a\nb")
    (tmp_path / "note.md").write_text("We met Ann\nLee at the kiln on a quiet Sunday morning.\n")
    assert count_in_bytes(tmp_path / "note.md", "Ann Lee") == 1
    assert count_in_bytes(tmp_path / "note.md", " ") == 0
