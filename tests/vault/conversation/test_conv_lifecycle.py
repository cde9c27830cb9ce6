"""Every 4D lifecycle rule on hand-built cases."""

from __future__ import annotations

from dataclasses import replace
from datetime import date, timedelta

import pytest

from vault.conversation.lifecycle import (
    Fact,
    Relation,
    apply_rules,
    archivable,
    conflicts,
    observe,
    parse_relation_fields,
    promotable,
    relation_fields,
)

D0 = date(2024, 1, 1)


def fact(**kw: object) -> Fact:
    base = Fact("sarah", "indentation", "tabs", 0.96, D0, D0 + timedelta(days=30), 3,
                ("s1", "s2", "s3"), ("t1",))
    return replace(base, **kw)  # type: ignore[arg-type]


def test_observe_confirms_with_noisy_or_and_widens_dates() -> None:
    book = observe((), "sarah", "indentation", "tabs", confidence=0.9, when=D0, session="s1",
                   source="t1")
    book = observe(book, "sarah", "indentation", "tabs", confidence=0.5,
                   when=D0 + timedelta(days=40), session="s2", source="t9")
    (f,) = book
    assert f.confidence == pytest.approx(1 - 0.1 * 0.5)
    assert (f.first_observed, f.last_confirmed) == (D0, D0 + timedelta(days=40))
    assert (f.confirmations, f.sessions, f.sources) == (2, ("s1", "s2"), ("t1", "t9"))
    with pytest.raises(ValueError):
        observe(book, "s", "k", "v", confidence=1.5, when=D0, session="s", source="x")


def test_promotion_needs_all_three_conditions_at_their_boundaries() -> None:
    assert promotable(fact())
    assert not promotable(fact(confidence=0.9499))
    assert not promotable(fact(sessions=("s1", "s2")))
    assert not promotable(fact(last_confirmed=D0 + timedelta(days=29)))
    assert promotable(fact(confidence=0.95, last_confirmed=D0 + timedelta(days=30)))


def test_promotion_through_repeated_observation() -> None:
    book: tuple[Fact, ...] = ()
    tiers = []
    for i, day in enumerate((0, 15, 31)):
        book = observe(book, "sarah", "indentation", "tabs", confidence=0.7,
                       when=D0 + timedelta(days=day), session=f"s{i}", source=f"t{i}")
        book = apply_rules(book, D0 + timedelta(days=day))
        tiers.append(book[0].tier)
    assert tiers == ["L2", "L2", "L3"]  # 0.7 -> 0.91 -> 0.973; 3 sessions; 31 days
    assert apply_rules(book, D0 + timedelta(days=5000))[0].tier == "L3"  # kept once reached


def test_archive_needs_age_low_confidence_and_few_confirmations() -> None:
    weak = fact(confidence=0.5, confirmations=1, last_confirmed=D0, sessions=("s1",))
    today = D0 + timedelta(days=366)
    assert archivable(weak, today)
    assert not archivable(weak, D0 + timedelta(days=365))
    assert not archivable(replace(weak, confidence=0.6), today)
    assert not archivable(replace(weak, confirmations=2), today)
    (flagged,) = apply_rules((weak,), today)
    assert flagged.archived and flagged.value == "tabs"  # flagged, never deleted
    again = observe((flagged,), "sarah", "indentation", "tabs", confidence=0.1, when=today,
                    session="s9", source="t99")
    assert not apply_rules(again, today)[0].archived  # a new confirmation undoes it


def test_conflicting_values_are_kept_side_by_side() -> None:
    book = observe((), "sarah", "indentation", "tabs", confidence=0.9, when=D0, session="s1",
                   source="t1")
    book = observe(book, "sarah", "indentation", "spaces", confidence=0.6,
                   when=D0 + timedelta(days=3), session="s2", source="t2")
    assert [f.value for f in book] == ["spaces", "tabs"]
    (c,) = conflicts(book)
    assert (c.subject, c.key) == ("sarah", "indentation")
    assert [(f.value, f.sources, f.first_observed) for f in c.facts] == [
        ("tabs", ("t1",), D0), ("spaces", ("t2",), D0 + timedelta(days=3))
    ]
    assert conflicts(book[:1]) == ()


def test_typed_relations_are_wiki_link_fields_and_round_trip() -> None:
    rels = [
        Relation("works_on", "Sarah", "Payments"),
        Relation("reports_to", "Sarah", "Bob"),
        Relation("works_on", "Sarah", "Auth"),
        Relation("uses", "Bob", "Python"),
    ]
    fields = relation_fields(rels, "Sarah")
    assert fields == {"works_on": ["[[Auth]]", "[[Payments]]"], "reports_to": ["[[Bob]]"]}
    back = parse_relation_fields("Sarah", {**fields, "owns": "[[Ledger|the ledger]]", "x": 1})
    assert [(r.type, r.target) for r in back] == [
        ("works_on", "Auth"), ("works_on", "Payments"), ("owns", "Ledger"), ("reports_to", "Bob")
    ]
    with pytest.raises(ValueError):
        Relation("likes", "a", "b")
