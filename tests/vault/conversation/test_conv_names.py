"""Hostile names in a conversation file (CONV, session 26): the ids and speakers that become
note file names, frontmatter values and link labels.

Before: a speaker of no key ("." or "") stopped the ingest with an IndexError (the turn's first
entity was taken for the speaker's); two turns or sessions whose notes share a file (the same id
twice, "a/b" and "a-b", or two conversations of one id in one file) lost a turn without a word
(the second conversation: rewritten in turn by every ingest); a session named "facts" put its
turn notes among the fact notes; a name holding "[[x]]" made a dangling link of each mention.
Now every turn has its own note, and the notes hold no dangling link."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vault import Vault, ingest_conversations, load_transcript
from vault.notes.note import parse


def _file(convs: list[tuple[str, list[tuple[str, list[tuple[str, str]]]]]]) -> str:
    """Conversations of (id, sessions of (id, turns of (turn id, speaker))) as a simple file."""
    return json.dumps([{"format": "rmh-conversation/1", "id": cid, "sessions": [
        {"id": sid, "date": "2024-05-01T10:00",
         "turns": [{"id": tid, "speaker": spk, "text": f"I adopted a zebrafinch named n{k}"}
                   for k, (tid, spk) in enumerate(turns)]}
        for sid, turns in sessions]} for cid, sessions in convs])


def _check(root: Path, text: str) -> dict[str, Any]:
    """Ingest `text` twice into a new vault at `root`; assert the invariants; the turn notes'
    frontmatter by path."""
    convs = load_transcript(text).conversations
    n_turns = sum(len(c.turns()) for c in convs)
    with Vault.init(root) as v:
        report = ingest_conversations(v, convs, use_nlp=False)
        again = ingest_conversations(v, convs, use_nlp=False)
        v.sync()
        assert again.written == (), again.written
        assert v.doctor()["dangling_links"] == []
        turns = {}
        for path in set(report.notes):
            assert (root / path).resolve().is_relative_to(root.resolve())
            fm = parse((root / path).read_text(encoding="utf-8")).frontmatter
            if fm.get("tier") == "L0":
                assert "/facts/" not in path and "/entities/" not in path
                turns[path] = fm
        assert len(turns) == n_turns, sorted(turns)
    return turns


def test_a_speaker_of_no_key_has_no_speaker_note(tmp_path: Path) -> None:
    text = _file([("c", [("s1", [("t1", "."), ("t2", ""), ("t3", "Bob")])])])
    turns = _check(tmp_path / "v", text)
    assert sorted("speaker_note" in fm for fm in turns.values()) == [False, False, True]


def test_turns_and_sessions_of_one_file_name_keep_their_notes(tmp_path: Path) -> None:
    text = _file([("c", [("s1", [("t", "Bob"), ("t", "Bob"), ("T", "Bob")]),
                         ("s1", [("t", "Bob")]), ("a/b", [("t", "Ann")]),
                         ("a-b", [("t", "Ann")]), ("facts", [("x", "Ann")])]),
                  ("c", [("s1", [("t", "Bob")])])])
    turns = _check(tmp_path / "v", text)
    assert {fm["turn"] for fm in turns.values()} == {"t", "t 2", "T 3", "x"}
    assert {fm["conversation"] for fm in turns.values()} == {"c", "c 2"}


def test_names_with_brackets_make_no_link(tmp_path: Path) -> None:
    text = _file([("a[[b|c#d^e]]", [("s[[1]]", [("t[[0]]|#^", "Bo|b[[x]]#^")])])])
    (fm,) = _check(tmp_path / "v", text).values()
    assert fm["speaker"] == "Bo|b((x))#^" and fm["session"] == "s((1))"


NAMES = st.text(alphabet=st.sampled_from(list("aA./-[]|#^:' \n\u00e9\u0301_会")),
                max_size=6)


@settings(max_examples=12, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(st.lists(st.tuples(NAMES, st.lists(st.tuples(NAMES, NAMES), min_size=1, max_size=3)),
                min_size=1, max_size=3), NAMES)
def test_hostile_names_every_turn_a_note(tmp_path: Path,
                                         sessions: list[tuple[str, list[tuple[str, str]]]],
                                         cid: str) -> None:
    _check(Path(tempfile.mkdtemp(dir=tmp_path)) / "v", _file([(cid, sessions)]))
