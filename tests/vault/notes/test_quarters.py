"""Quarters and halves in a question (notes/quarters.py, read by notes/times_asked.py): every
phrasing generated, read against generated days and compared with the calendar counted by
hand; the negatives a bare "Q1" or "first half" meets; and a quarter named without a year moved
by retrieval/anchored.py to the latest one the notes hold, as a month is, through the search."""

from __future__ import annotations

import calendar
import random
from dataclasses import replace
from datetime import date

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vault.notes.times_asked import asked_ranges, by_calendar, topicless, untimed_asked
from vault.retrieval.anchored import anchored
from vault.retrieval.pipeline import SearchEngine
from vault.retrieval.when import SLACK

from ..retrieval_fixtures import make_corpus

DAYS = st.dates(min_value=date(1951, 1, 1), max_value=date(2099, 12, 31))
ORDINAL = {1: ("first", "1st"), 2: ("second", "2nd"), 3: ("third", "3rd"), 4: ("fourth", "4th")}


def by_hand(year: int, part: int, parts: int) -> tuple[date, date]:
    """The slow obvious twin: the months of the part, the last one's last day."""
    months = [m for m in range(1, 13) if (m - 1) * parts // 12 + 1 == part]
    return date(year, months[0], 1), date(year, months[-1],
                                          calendar.monthrange(year, months[-1])[1])


def names(part: int, parts: int, rng: random.Random) -> str:
    letter = "Q" if parts == 4 else "H"
    word = "quarter" if parts == 4 else "half"
    return rng.choice([f"{letter}{part}", f"{letter.lower()}{part}",
                       f"the {rng.choice(ORDINAL[part])} {word}",
                       f"the {rng.choice(ORDINAL[part]).upper()} {word.title()}"])


PARTS = st.sampled_from([(p, 4) for p in range(1, 5)] + [(p, 2) for p in range(1, 3)])


@settings(max_examples=300, deadline=None)
@given(now=DAYS, which=PARTS, year=st.integers(1950, 2100), seed=st.integers(0, 2**16))
def test_a_quarter_or_half_with_its_year_is_that_period_once_over(
        now: date, which: tuple[int, int], year: int, seed: int) -> None:
    rng = random.Random(seed)
    part, parts = which
    named = names(part, parts, rng)
    expr = rng.choice([f"{named} {year}", f"{named} of {year}", f"{named}, {year}",
                       *([f"{year} {named}", f"{year}-{named}"] if named[0] in "QqHh" else [])])
    # "in 2025 Q1" is notes/clocks.py's year 2025 ("in 2025"), read before: no preposition there
    prep = rng.choice(["", "for "] if expr[0].isdigit() else ["", "in ", "during ", "for "])
    got = [(r.start, r.end, r.granularity) for r in
           asked_ranges(f"What did we ship {prep}{expr}?", now)]
    first, last = by_hand(year, part, parts)
    assert got == ([(first, last, "season")] if last < now else [])
    assert by_calendar(f"{prep}{expr}")


@settings(max_examples=300, deadline=None)
@given(now=DAYS, which=PARTS, seed=st.integers(0, 2**16))
def test_one_without_a_year_is_the_latest_that_is_over(
        now: date, which: tuple[int, int], seed: int) -> None:
    rng = random.Random(seed)
    part, parts = which
    prep = rng.choice(["in", "during", "over", "for", "throughout"])
    query = f"What happened {prep} {names(part, parts, rng)}?"
    got = asked_ranges(query, now)
    over = [by_hand(y, part, parts) for y in (now.year, now.year - 1)
            if by_hand(y, part, parts)[1] < now]
    assert [(r.start, r.end) for r in got] == over[:1]
    assert topicless(query) and untimed_asked(query).split() == ["What", "happened", "?"]


@pytest.mark.parametrize("query", [
    "Did I answer Q1 of the quiz?", "Q1 was the hardest question", "What is Q3?",
    "Who scored in the first half of the game?", "in the second quarter of the match",
    "the first half of pregnancy", "Use H2 headings for sections", "in H2 headings",
    "What did I note in H1 titles?", "in Q12", "in Q5", "in H3", "in the fifth quarter",
    "the first half", "a first quarter moon",
])
def test_what_is_no_quarter(query: str) -> None:
    now = date(2026, 12, 7)
    assert [r for r in asked_ranges(query, now) if r.granularity == "season"] == []


def test_a_quarter_still_running_or_to_come_is_last_years() -> None:
    now = date(2026, 5, 20)  # in Q2 and H1
    assert [(r.start, r.end) for r in asked_ranges("what happened in Q2?", now)] == [
        (date(2025, 4, 1), date(2025, 6, 30))]
    assert [(r.start, r.end) for r in asked_ranges("what happened in Q1?", now)] == [
        (date(2026, 1, 1), date(2026, 3, 31))]
    assert [(r.start, r.end) for r in asked_ranges("plans for H2?", now)] == [
        (date(2025, 7, 1), date(2025, 12, 31))]
    assert asked_ranges("what happened in Q2 2026?", now) == ()  # running, its year named


@pytest.mark.parametrize("seed", range(4))
def test_a_quarter_the_notes_stop_before_is_the_latest_one_they_hold(seed: int) -> None:
    """QUERY41's anchoring for a month, now for a quarter: notes of one past year only, asked
    in December 2026; "in Q<n>" is the Q<n> of the notes' year, and through the search the
    notes of that quarter come first, the receipt saying so."""
    rng = random.Random(seed)
    now, year, part = date(2026, 12, 7), rng.randint(2019, 2024), rng.randint(1, 4)
    first, last = by_hand(year, part, 4)
    inside = date(year, rng.randint(first.month, last.month), rng.randint(1, 28))
    days = sorted({date(year, m, rng.randint(1, 28)) for m in range(1, 13)} | {inside})
    asked = asked_ranges(f"what did we ship in Q{part}?", now)
    got, moved = anchored(asked, np.array([d.toordinal() for d in days], dtype=np.int64),
                          now, SLACK)
    assert moved == (f"in Q{part}",) and [(r.start, r.end) for r in got] == [(first, last)]
    rows = [(f"release {i}", f"We shipped the {rng.choice(['exporter', 'importer'])} "
                             f"release with its changelog on {d.isoformat()}.")
            for i, d in enumerate(days)]
    corpus = replace(make_corpus(rows), frontmatter=tuple({"date": d.isoformat()} for d in days))
    result = SearchEngine.lexical().search(corpus, f"what did we ship in Q{part}?", len(days),
                                           now=now)
    held = {f"release {i}" for i, d in enumerate(days) if first <= d <= last}
    assert {h.title for h in result.hits[:len(held)]} == held, [h.title for h in result.hits]
    assert (f"'in Q{part}' = {first.isoformat()}..{last.isoformat()} (the latest the notes "
            "found hold)") in result.hits[0].receipt["stages"]["when"]
