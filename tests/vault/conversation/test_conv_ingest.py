"""Ingest into a real vault, re-ingest no-op, context and what-came-next over the notes."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path

from tests.vault.conversation.test_conv_ndm_golden import ndm_conversation
from vault import NullUsage, Vault, build_context, ingest_conversations, next_in_vault
from vault.conversation.formats import Conversation, Session, Turn


def test_ingest_writes_turn_session_entity_notes_and_reingest_is_a_no_op(tmp_path: Path) -> None:
    with Vault.init(tmp_path / "v") as v:
        first = ingest_conversations(v, ndm_conversation())
        assert (first.turns, first.sessions, first.unchanged) == (5, 1, 0)
        assert len(first.written) == 5 + 1 + first.entities + first.facts
        turn = v.read("conversations/ndm/S1/ndm t3")
        fm = turn.frontmatter
        assert (fm["tier"], fm["speaker"], fm["tick"], fm["session"]) == ("L0", "Bob", 3, "S1")
        assert fm["dates"] == [{"expr": "Last month", "start": "2024-04-01", "end": "2024-04-30"}]
        assert "conversations/ndm/entities/bob's bike" in " ".join(fm["entities"])
        she = v.read("conversations/ndm/S1/ndm t4").frontmatter["references"][0]
        assert (she["expr"], she["status"], she["entity"]) == ("she", "resolved", "carla")
        assert v.read("conversations/ndm/ndm S1").frontmatter["tier"] == "L1"
        carla = v.read("conversations/ndm/entities/carla")
        assert carla.frontmatter["mentions"] == 2 and "ndm t2" in carla.body
        before = {p: p.stat().st_mtime_ns for p in (tmp_path / "v").rglob("*.md")}
        again = ingest_conversations(v, ndm_conversation())
        assert again.written == () and again.unchanged == len(first.written)
        after = {p: p.stat().st_mtime_ns for p in (tmp_path / "v").rglob("*.md")}
        assert after == before


def test_context_keeps_the_best_turn_and_the_one_before_in_date_order(tmp_path: Path) -> None:
    with Vault.init(tmp_path / "v") as v:
        ingest_conversations(v, ndm_conversation())
        ctx = build_context(v, "When was Alice's vase praised?", 20)
        turns = [ln.item.turn_id for ln in ctx.lines]
        assert turns == ["t1", "t2"]
        assert [ln.reason for ln in ctx.lines] == ["before", "hit"]
        assert ctx.text.splitlines()[1] == "[2024-05-08 18:00] Alice: Carla praised my vase."
        assert ctx.words <= 20
        small = build_context(v, "When was Alice's vase praised?", 8)
        assert [ln.item.turn_id for ln in small.lines] == ["t2"]  # the turn before is cut first
        doc = ctx.to_json()
        assert doc["words"] == ctx.words and doc["lines"][1]["turn"] == "t2"
        april = build_context(v, "bike", 50, date_from=date(2024, 4, 1), date_to=date(2024, 4, 30))
        assert [ln.item.turn_id for ln in april.lines] == ["t3"]


def test_what_came_next_returns_the_following_events(tmp_path: Path) -> None:
    with Vault.init(tmp_path / "v") as v:
        ingest_conversations(v, ndm_conversation())
        nxt = next_in_vault(v, "Carla runs the pottery class teacher", 2)
        assert nxt.anchor is not None and nxt.anchor.turn_id == "t1"
        assert [it.turn_id for it in nxt.following] == ["t2", "t3"]


def _sales() -> Conversation:
    turns = (Turn("t0", "Bob", "I sold my guitar.", datetime(2024, 3, 10, 10, 0)),
             Turn("t1", "Bob", "I sold my bike.", datetime(2024, 4, 12, 10, 0)))
    return Conversation("sales", (Session("S1", turns[0].when, turns),))


def test_context_reads_the_time_a_question_names_on_the_day_it_is_asked(tmp_path: Path) -> None:
    """"Two months ago", asked on 5 June, is April: the April sale leads; without a day to
    read it against both sales tie and the earlier one leads (the order of ticks)."""
    asked = "What was sold two months ago?"
    june = datetime(2024, 6, 5, 12, 0, tzinfo=UTC).timestamp()
    with Vault.init(tmp_path / "v", usage=NullUsage(lambda: june)) as v:
        ingest_conversations(v, _sales())
        assert v.today() == date(2024, 6, 5)
        dated = build_context(v, asked, 200)
        assert [ln.item.turn_id for ln in dated.lines if ln.reason == "hit"][:1] == ["t1"]
        assert build_context(v, asked, 200, now=date(2024, 6, 5)).text == dated.text
    with Vault.open(tmp_path / "v", usage=NullUsage()) as v:  # no clock: no day
        assert v.today() is None
        plain = build_context(v, asked, 200)
        assert [ln.item.turn_id for ln in plain.lines if ln.reason == "hit"][:1] == ["t0"]


def test_a_given_day_is_the_day_the_search_reads_the_question_on_too(tmp_path: Path) -> None:
    """`build_context(now=...)` pins the day for the turns' search scores as well: the same
    question on the same day scores the same whatever the vault's clock says."""
    asked = "What was sold two months ago?"
    scores = []
    for month in (5, 6):  # the clock in May, then in June; the question is asked on 5 May
        clock = datetime(2024, month, 5, 12, 0, tzinfo=UTC).timestamp()
        with Vault.init(tmp_path / str(month), usage=NullUsage(clock.__float__)) as v:
            ingest_conversations(v, _sales())
            ctx = build_context(v, asked, 200, now=date(2024, 5, 5))
            scores.append([(ln.item.turn_id, ln.score) for ln in ctx.lines])
    assert scores[0] == scores[1]


def test_every_link_ingest_writes_resolves_whatever_the_names(tmp_path: Path) -> None:
    """Ingest writes entity links in quoted frontmatter values: "bob's bike" as
    `'[[.../bob''s bike|...]]'`, read with the doubled quote (a dangling link, no backlink)
    until links in quoted values were read as YAML reads them; and a speaker named "[[x]]"
    left "[[" in a link's label, which the scanner took for a link to "x))" (session
    25, STORE). Every link now resolves."""
    when = datetime(2024, 5, 1, 10, 0)
    conv = Conversation("odd", (Session("s1", when, (
        Turn("t0", "[[x]]", "I sold my bike to Carla last week.", when),
        Turn("t1", "Bob", "Bob's bike was red, [[x]] said.", when))),))
    with Vault.init(tmp_path / "v") as v:
        ingest_conversations(v, [conv])
        ingest_conversations(v, ndm_conversation())
        assert v.doctor()["dangling_links"] == []
        assert v.backlinks("conversations/ndm/entities/bob's bike")
