"""What `rmh forget` erased stays erased when its conversation is ingested again (a client hook
ingests its transcript at every turn; vault/storage/forgotten.py, conversation/ingest.py).
Before, the first ingest after `forget --subject` wrote the subject's turns, summaries and
entities again from the transcript. Seeded conversations whose turns name generated subjects
(as speaker or in the text, alone or as part of a longer word), forgotten by subject or by a
turn note's path, then the same and a grown transcript ingested again; the invariants: no note
names a forgotten subject or sits at a path erased by name, the proof stays clean, a turn
naming nothing forgotten comes back as a fresh ingest writes it, and the record holds no
erased text."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path
from typing import Any

import pytest

from vault import Vault, ingest_conversations, load_conversations
from vault.storage import forgotten
from vault.storage.mentions import mentions

NAMES = ("Quillon", "Marisol", "Teodor", "Ann Lee", "Bo")
FILLER = ("kiln", "glaze", "annual", "bolt", "garden", "Lisbon", "piano", "Marisolution")


def conv(rng: random.Random, n_turns: int, cid: str = "cv") -> Any:
    turns = []
    for i in range(n_turns):
        words = [rng.choice(FILLER) for _ in range(6)]
        if rng.random() < 0.4:
            words.insert(rng.randrange(len(words) + 1), rng.choice(NAMES))
        speaker = rng.choice(("Alice", "Bob", "Teodor"))
        turns.append({"speaker": speaker, "text": f"Day {i}: " + " ".join(words) + ".",
                      "role": ("user", "assistant")[i % 2]})
    sessions = [{"id": f"s{k}", "date": f"2024-05-{k + 1:02d}T10:00",
                 "turns": turns[k * 5:k * 5 + 5]} for k in range((n_turns + 4) // 5)]
    (c,) = load_conversations(json.dumps({"format": "rmh-conversation/1", "id": cid,
                                          "sessions": sessions}))
    return c


def notes_of(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8")
            for p in sorted(root.rglob("*.md")) if ".rmh" not in p.relative_to(root).parts}


@pytest.mark.parametrize("seed", range(4))
def test_a_forgotten_subject_never_comes_back_from_its_transcript(tmp_path: Path,
                                                                  seed: int) -> None:
    rng = random.Random(seed)
    grown = conv(random.Random(seed), 24)
    first = conv(random.Random(seed), 14)
    subject = rng.choice([n for n in NAMES
                          if any(mentions(f"{t.speaker} {t.text}", n) for t in first.turns())])
    with Vault.init(tmp_path / "v") as v:
        ingest_conversations(v, first)
        assert any(mentions(t, subject) for t in notes_of(v.root).values())
        erased = v.forget(v.forget_plan(subject=subject.upper()))
        assert erased.proof.occurrences == 0
        for c in (first, grown, first):
            report = ingest_conversations(v, c)
            assert report.forgotten == sum(mentions(f"{t.speaker} {t.text}", subject)
                                           for t in c.turns())
            # what the erasure removed is no note the user deleted: what remains of it (a
            # session's other turns) is written again (DOCS: its session note stayed out)
            assert not report.left_deleted, report.left_deleted
            left = notes_of(v.root)
            assert not [p for p, t in left.items() if mentions(t, subject)]
            kept = [t for t in c.turns() if not mentions(f"{t.speaker} {t.text}", subject)]
            assert all(any(t.text in body for body in left.values()) for t in kept)
        data = (v.root / ".rmh" / forgotten.NAME).read_bytes()
        assert not any(w.casefold().encode() in data.lower()
                       for w in subject.split()), data
        assert v.forget(v.forget_plan(subject=subject)).proof.occurrences == 0


def test_a_turn_forgotten_by_name_is_not_written_again(tmp_path: Path) -> None:
    c = conv(random.Random(9), 12)
    with Vault.init(tmp_path / "v") as v:
        ingest_conversations(v, c)
        turn = sorted(p for p in notes_of(v.root) if "/s1/" in p)[2]
        text = (v.root / turn).read_text(encoding="utf-8")
        v.forget(v.forget_plan([turn]))
        again = ingest_conversations(v, c)
        assert again.forgotten == 1 and turn not in notes_of(v.root)
        assert turn not in again.written
        # another conversation, the same words: nothing of it is forgotten
        other = ingest_conversations(v, conv(random.Random(9), 12, cid="other"))
        assert other.forgotten == 0 and len(other.written) > 0
    assert text  # the turn note had text (the test is about something)


def test_the_record_matches_words_in_a_row_and_reads_safely(tmp_path: Path) -> None:
    forgotten.remember(tmp_path, "Ann  LEE", ["a/b.md"])
    forgotten.remember(tmp_path, "++", [])  # no word: nothing to match
    gone = forgotten.load(tmp_path)
    assert gone.names("call ann-lee today") and gone.names("ANN LEE.")
    assert not gone.names("Ann met Lee") and not gone.names("annlee") and not gone.names("")
    assert gone.path("a/b.md") and not gone.path("a/b2.md")
    calls: list[int] = []
    forgotten.remember(tmp_path, "ann lee", ["a/b.md"], lambda: calls.append(1))
    assert calls == []  # nothing new: nothing written
    forgotten.remember(tmp_path, "Bo", [], lambda: calls.append(1))
    assert len(calls) == 3 and forgotten.load(tmp_path).names("bo said")
    for bad in (b"{", b"[]", b'{"version": 2}', b'{"version": 1, "subjects": [[0, "x"]]}',
                b'{"version": 1, "subjects": "x", "paths": [1]}', b"\xff"):
        (tmp_path / forgotten.NAME).write_bytes(bad)
        with pytest.raises(OSError, match="cannot be read"):  # not read as empty: the
            forgotten.load(tmp_path)  # subjects it kept would come back (module docstring)


def test_a_forget_made_while_an_ingest_builds_its_notes_is_kept(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another process's `rmh forget` lands after the ingest read the record and before it
    writes (its notes built from the turns the forget erased): before, they were written."""
    from vault.conversation import ingest as ingest_module
    build = ingest_module._build
    fired: list[int] = []

    def forget_meanwhile(c: Any, use_nlp: bool = True) -> Any:
        if not fired:
            fired.append(1)
            with Vault.open(tmp_path / "v") as other:
                assert other.forget(other.forget_plan(subject="Quillon")).proof.occurrences == 0
        return build(c, use_nlp)

    with Vault.init(tmp_path / "v") as v:
        ingest_conversations(v, conv(random.Random(0), 10))
        monkeypatch.setattr(ingest_module, "_build", forget_meanwhile)
        report = ingest_conversations(v, conv(random.Random(0), 20))
        assert fired and report.forgotten > 0
        assert not [p for p, t in notes_of(v.root).items() if mentions(t, "Quillon")]


def test_a_subject_of_more_than_words_is_matched_by_its_tokens(tmp_path: Path) -> None:
    """"C++" is not the word "c": recorded by words, its forget left out every turn saying
    "vitamin c" (REV-A); "++" (no word at all) was not recorded and came back."""
    for subject in ("C++", "++", "@ann"):
        forgotten.remember(tmp_path, subject, [])
    gone = forgotten.load(tmp_path)
    assert gone.names("I like C++.") and gone.names("[[C++]] rocks") and gone.names("x ++ y")
    assert gone.names("ping @ann!")
    assert not gone.names("take vitamin c daily") and not gone.names("C++17 is out")
    assert not gone.names("ann said") and not gone.names("a+b")


DAMAGED = [b'{"version": 1, "subjects": [[1, "', b"", b"\xff\xfe", b"[]", b'{"version": 2}',
           b'{"version": 1, "subjects": [[1, 5]], "paths": []}',
           b'{"version": 1, "subjects": [], "paths": [null]}', None]


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("bad", DAMAGED)
def test_an_ingest_never_takes_a_damaged_record_as_nothing_forgotten(
        tmp_path: Path, seed: int, bad: bytes | None) -> None:
    """A `.rmh/forgotten.json` that is there but cannot be read (cut short, not JSON, another
    version, a damaged entry, a FIFO) was read as empty by the ingest, which then wrote the
    erased subject's turns back from the transcript. The ingest now stops with the record's
    error and writes nothing; with the record repaired it goes on and leaves them out."""
    c = conv(random.Random(seed), 14)
    subject = next(n for n in NAMES if any(mentions(f"{t.speaker} {t.text}", n)
                                           for t in c.turns()))
    with Vault.init(tmp_path / "v") as v:
        ingest_conversations(v, c)
        v.forget(v.forget_plan(subject=subject))
        record = v.root / ".rmh" / forgotten.NAME
        good = record.read_bytes()
        before = notes_of(v.root)
        record.unlink()
        if bad is None:
            os.mkfifo(record)
        else:
            record.write_bytes(bad)
        with pytest.raises(OSError, match="cannot be read"):
            ingest_conversations(v, c)
        assert notes_of(v.root) == before
        assert not any(mentions(t, subject) for t in notes_of(v.root).values())
        record.unlink()
        record.write_bytes(good)
        ingest_conversations(v, c)
        assert not any(mentions(t, subject) for t in notes_of(v.root).values())
