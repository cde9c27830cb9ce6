"""L2 facts from turns: confirmations, conflicts side by side, promotion, notes in a real vault."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from pathlib import Path

import pytest

from vault import Vault, ingest_conversations
from vault.conversation.events import build_events
from vault.conversation.facts import FactRecord, build_facts, fact_from_frontmatter
from vault.conversation.formats import Conversation, Session, Turn
from vault.conversation.lifecycle import parse_relation_fields

D0 = datetime(2024, 1, 2, 9, 0)


def conv(*sessions: tuple[int, list[tuple[str, str]]], roles: dict[str, str] | None = None,
         cid: str = "sarah") -> Conversation:
    """Sessions given as (days after D0, [(speaker, text), ...])."""
    out = []
    for n, (days, turns) in enumerate(sessions, 1):
        when = D0 + timedelta(days=days)
        out.append(Session(f"s{n}", when, tuple(
            Turn(f"s{n}:{i}", sp, text, when + timedelta(minutes=i),
                 role=(roles or {}).get(sp, "user"))
            for i, (sp, text) in enumerate(turns))))
    return Conversation(cid, tuple(out))


def facts_of(c: Conversation) -> dict[tuple[str, str, str], FactRecord]:
    return {r.triple: r for r in build_facts(build_events(c))}


TABS = conv(
    (0, [("Sarah", "I really prefer tabs over spaces. I live in Paris."),
         ("Bot", "Noted."),
         ("Sarah", "I'm working on the Payments API.")]),
    (18, [("Sarah", "Again: I prefer tabs. I prefer tabs!"),
          ("Sarah", "The Payments API depends on the Auth service.")]),
    (44, [("Sarah", "I moved to Rome last month, and I prefer tabs."),
          ("Sarah", "My boss is Maria.")]),
    roles={"Bot": "assistant"},
)


def test_repeated_statements_confirm_one_fact_with_noisy_or_and_anchored_dates() -> None:
    tabs = facts_of(TABS)[("sarah", "opinion:tab", "likes")].fact
    # one confirmation per turn (the twice-said s2 turn counts once): 0.7, 0.91, 0.973
    assert tabs.confirmations == 3
    assert tabs.confidence == pytest.approx(1 - 0.3 ** 3)
    assert (tabs.first_observed, tabs.last_confirmed) == (date(2024, 1, 2), date(2024, 2, 15))
    assert tabs.sessions == ("s1", "s2", "s3")


def test_conflict_is_kept_side_by_side_and_the_older_value_is_discounted() -> None:
    facts = facts_of(TABS)
    paris = facts[("sarah", "lives_in", "paris")]
    rome = facts[("sarah", "lives_in", "rome")]
    assert paris.fact.confidence == pytest.approx(0.7 * 0.3)  # weakened, not removed
    assert rome.fact.confidence == pytest.approx(0.7)
    assert paris.evidence[0].turn_id == "s1:0" and rome.evidence[0].turn_id == "s3:0"
    again = facts_of(conv(*[(d, t) for d, t in [
        (0, [("Sarah", "I live in Paris.")]), (5, [("Sarah", "I live in Rome.")]),
        (9, [("Sarah", "I live in Paris.")])]]))
    back = again[("sarah", "lives_in", "paris")].fact
    assert back.confirmations == 2
    assert back.confidence == pytest.approx(1 - (1 - 0.21) * 0.3)
    assert again[("sarah", "lives_in", "rome")].fact.confidence == pytest.approx(0.21)


def test_assistant_turns_are_not_evidence_and_third_party_weighs_less() -> None:
    c = conv((0, [("Bot", "I love cats."), ("Sarah", "Dan reports to Maria.")]),
             roles={"Bot": "assistant"})
    facts = facts_of(c)
    assert list(facts) == [("dan", "reports_to", "maria")]
    assert facts[("dan", "reports_to", "maria")].fact.confidence == pytest.approx(0.5)


@pytest.mark.parametrize(("last_day", "tier"), [(30, "L3"), (29, "L2")])
def test_promotion_needs_three_sessions_over_thirty_days(tmp_path: Path, last_day: int,
                                                         tier: str) -> None:
    c = conv((0, [("Sarah", "I prefer tabs.")]), (10, [("Sarah", "I prefer tabs.")]),
             (last_day, [("Sarah", "I prefer tabs.")]))
    with Vault.init(tmp_path / "v") as v:
        report = ingest_conversations(v, c)
        note = v.read("conversations/sarah/facts/sarah likes tab")
    assert note.frontmatter["tier"] == tier
    assert report.rules == (1 if tier == "L3" else 0) and report.facts == 1


def test_ingest_writes_fact_notes_relations_and_reingest_is_a_no_op(tmp_path: Path) -> None:
    with Vault.init(tmp_path / "v") as v:
        first = ingest_conversations(v, TABS)
        assert first.facts == 6 and first.rules == 1
        tabs = v.read("conversations/sarah/facts/sarah likes tab")
        fm = tabs.frontmatter
        assert (fm["tier"], fm["kind"], fm["confirmations"], fm["confidence"]) == (
            "L3", "preference", 3, 0.973)
        assert fm["sources"][0] == "[[conversations/sarah/s1/sarah s1-0|s1:0]]"
        assert "conversations/sarah/s1/sarah s1-0" in v.links("conversations/sarah/facts/"
                                                              "sarah likes tab")[0].target
        rome = v.read("conversations/sarah/facts/sarah lives in rome").frontmatter
        paris = v.read("conversations/sarah/facts/sarah lives in paris")
        old = "[[conversations/sarah/facts/sarah lives in paris|paris]]"
        assert rome["conflicts_with"] == [old]
        assert rome["supersedes"] == rome["conflicts_with"]
        assert "supersedes" not in paris.frontmatter
        assert "never overwritten" in paris.body and "0.210" in paris.body
        dep = v.read("conversations/sarah/facts/payments api depends on auth service")
        assert dep.frontmatter["depends_on"] == [
            "[[conversations/sarah/entities/auth service|auth service]]"]
        sarah = v.read("conversations/sarah/entities/sarah")
        rels = parse_relation_fields("sarah", sarah.frontmatter)
        assert {(r.type, r.target) for r in rels} == {
            ("works_on", "conversations/sarah/entities/payments api"),
            ("reports_to", "conversations/sarah/entities/maria")}
        read_back = fact_from_frontmatter(fm)
        assert read_back is not None and read_back.confirmations == 3
        assert read_back.last_confirmed == date(2024, 2, 15) and read_back.tier == "L3"
        before = {p: p.stat().st_mtime_ns for p in (tmp_path / "v").rglob("*.md")}
        again = ingest_conversations(v, TABS)
        assert again.written == () and again.facts == 6
        assert {p: p.stat().st_mtime_ns for p in (tmp_path / "v").rglob("*.md")} == before
