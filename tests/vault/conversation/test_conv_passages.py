"""An ordinary note's date as a context passage (vault/conversation/passages.py)."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path

from vault.conversation.passages import note_date

MTIME = int(datetime(2026, 12, 1, tzinfo=UTC).timestamp() * 1e9)


def test_a_daily_note_is_dated_by_its_name_before_its_file_time() -> None:
    """As search dates it (retrieval/when.py name_day): a copied vault's file times are the
    day of the copy, its daily notes' names are not."""
    assert note_date({}, MTIME, "Daily/2023-03-25.md") == datetime(2023, 3, 25)
    assert note_date({"date": "2023-01-02"}, MTIME, "Daily/2023-03-25.md") == datetime(2023, 1, 2)
    assert note_date({}, MTIME, "2023-03-25/plain.md") == datetime(2026, 12, 1)
    assert note_date({}, MTIME) == datetime(2026, 12, 1)


def test_a_hit_connects_by_a_content_word_in_any_form_never_by_a_stop_word() -> None:
    """The search stems ("dances" and "dance" are one term), so the gate does too: LoCoMo's
    "What is Jon's favorite style of dance?" is answered by "I love all dances, but
    contemporary is my top pick." (conv-30 D1:8), which shares no other content word; a stop
    word or a speaker's name still connects nothing, in any form."""
    from vault.conversation.passages import query_terms, shares_terms

    q = query_terms("What is Jon's favorite style of dance?", ["Jon", "Gina"])
    assert shares_terms("I love all dances, but contemporary is my top pick.", q)
    assert shares_terms("When is the party?", query_terms("Who came to the parties?", []))
    assert not shares_terms("What is it? It's Jon's.", q)
    assert not shares_terms("She said it was my best work.",
                            query_terms("When was Alice's vase praised?", ["Alice", "Bob"]))
    assert query_terms("Jon's?", ["Jon"]) == frozenset() == query_terms("what is it", [])


def test_the_words_of_a_time_the_question_names_connect_nothing() -> None:
    """A named time connects through the time term (context.py `named`), never as words:
    "last" in "Last month I sold my bike." is no answer to a question about the vase "last
    week", and "may" in "I may go" is not "in May 2024". Without a day to read "last
    week" against, the bike used to enter the seed's context through the word "last"."""
    from vault.conversation.passages import query_terms, shares_terms
    from vault.notes.clocks import untimed

    speakers = ["Alice", "Bob"]
    asked = query_terms("When was Alice's vase praised last week?", speakers)
    assert asked == query_terms("When was Alice's vase praised?", speakers)
    assert not shares_terms("Last month I sold my bike.", asked)
    assert shares_terms("Carla praised my vase.", asked)
    in_may = query_terms("What did Bob paint in May 2024?", speakers)
    assert not shares_terms("I may go in 2024.", in_may)
    assert shares_terms("I painted a bowl.", in_may)
    assert untimed("no time here") == "no time here"


def test_an_ordinary_note_s_line_has_no_speaker(tmp_path: Path) -> None:
    """NEWUSER5 (session 33): `vault.context` gave an ordinary note's line the note's path as
    its speaker (`"speaker": "Aphids.md"`), and the scorer read that path as a speaker the
    question could name (its `spk` term)."""
    from vault import Vault, build_context

    with Vault.init(tmp_path / "v") as v:
        v.write("Aphids.md", "# Aphids\n\nAphids on the roses; ladybirds help.\n")
        v.sync()
        ctx = build_context(v, "aphids roses ladybirds", 200, now=date(2025, 1, 1))
        lines = [ln for ln in ctx.to_json()["lines"] if ln["note"] == "Aphids.md"]
        assert lines, ctx.to_json()
        assert lines[0]["speaker"] == "" and lines[0]["turn"] == "Aphids"
        assert all(ln.item.speaker == "" for ln in ctx.lines if ln.item.kind == "note")
