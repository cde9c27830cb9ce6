"""Seasons, holidays, numeric dates and bare years in a question (notes/times_asked.py):
each read against the day it is asked on, only when over; negatives; generated properties."""

from __future__ import annotations

from dataclasses import replace
from datetime import date, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vault.notes.occasions import holiday
from vault.notes.times_asked import asked_ranges, topicless, untimed_asked
from vault.retrieval.pipeline import SearchEngine

from ..retrieval_fixtures import make_corpus

MON_10_JUNE_2024 = date(2024, 6, 10)
DAYS = st.dates(min_value=date(1950, 1, 1), max_value=date(2090, 12, 31))
HOLIDAYS = ("Christmas", "Christmas Eve", "New Year's Eve", "New Year's Day", "Valentine's Day",
            "Halloween", "Independence Day", "the 4th of July", "Easter", "Thanksgiving")


def asked(query: str, now: date = MON_10_JUNE_2024) -> list[tuple[date, date]]:
    return [(r.start, r.end) for r in asked_ranges(query, now)]


def test_seasons_asked() -> None:
    assert asked("What did I do last summer?") == [(date(2023, 6, 1), date(2023, 8, 31))]
    assert asked("What did I do this winter?") == [(date(2023, 12, 1), date(2024, 2, 29))]
    assert asked("Where was I in the spring of 2023?") == [(date(2023, 3, 1), date(2023, 5, 31))]
    assert asked("What state did Joanna visit in summer 2021?") == [
        (date(2021, 6, 1), date(2021, 8, 31))]
    assert asked("What did I do this summer?") == []  # still running
    assert asked("What will I do next autumn?") == []  # to come
    assert asked("What are my plans for the summer?") == []  # no time word: no time
    assert asked("Did the kids like summer camp?") == []


@pytest.mark.parametrize(("query", "want"), [
    ("What did I get for Christmas?", date(2023, 12, 25)),
    ("What did I do on Christmas Eve?", date(2023, 12, 24)),
    ("What did we eat at Thanksgiving?", date(2023, 11, 23)),
    ("What airline did I fly with on Valentine's day?", date(2024, 2, 14)),
    ("Where was I over Easter?", date(2024, 3, 31)),
    ("What did I do on the 4th of July?", date(2023, 7, 4)),
    ("What did I do on Independence Day?", date(2023, 7, 4)),
    ("What happened on New Year's Eve?", date(2023, 12, 31)),
    ("What happened on Christmas 2022?", date(2022, 12, 25)),
    ("What happened last Halloween?", date(2023, 10, 31)),
])
def test_holidays_asked(query: str, want: date) -> None:
    assert asked(query) == [(want, want)]


@pytest.mark.parametrize("query", [
    "What did I buy for the Christmas party?", "Which Halloween costumes did I like?",
    "Do I like Christmas?", "What is my favourite Thanksgiving tradition?",
    "Where did I put the Easter eggs?", "What did we cook for Christmas Eve dinner?",
    "Who was at the New Year's Eve party?",
])
def test_a_holiday_as_a_thing_is_no_time(query: str) -> None:
    assert asked(query) == []


def test_a_holiday_followed_by_a_word_that_is_no_thing_is_the_day() -> None:
    assert asked("What did we do on Christmas evening?") == [
        (date(2023, 12, 25), date(2023, 12, 25))]
    assert asked("What did we eat for Christmas Eve?") == [
        (date(2023, 12, 24), date(2023, 12, 24))]


def test_asked_on_the_holiday_itself_is_last_years() -> None:
    assert asked("What did I get for Christmas?", date(2024, 12, 25)) == [
        (date(2023, 12, 25), date(2023, 12, 25))]


def test_numeric_dates_asked_keep_the_readings_that_are_over() -> None:
    assert asked("What happened on 8/5/2024?") == [(date(2024, 5, 8), date(2024, 5, 8))]
    assert asked("What happened on 8/5/2024?", date(2024, 9, 1)) == [
        (date(2024, 8, 5), date(2024, 8, 5)), (date(2024, 5, 8), date(2024, 5, 8))]
    assert asked("What happened on 08.05.2024?") == [(date(2024, 5, 8), date(2024, 5, 8))]
    assert asked("What happened on 5/30/23?") == [(date(2023, 5, 30), date(2023, 5, 30))]
    assert asked("Did 4/5 of the votes go to Bob?") == []


def test_bare_years_asked() -> None:
    y2019 = [(date(2019, 1, 1), date(2019, 12, 31))]
    assert asked("What did I do in 2019?") == y2019
    assert asked("What did I do during 2019?") == y2019
    assert asked("What did I do 2019?") == y2019
    y2020 = (date(2020, 1, 1), date(2020, 12, 31))
    assert asked("Which trips did I take, 2019, or 2020?") == [*y2019, y2020]
    assert asked("What did I do in 2024?") == []  # still running
    for query in ("Did I walk 2019 steps?", "How many pre-1920 coins do I have?",
                  "What did it cost in 2019 dollars?", "Was it $2019?",
                  "Who won the 2019 election?", "Is the code 2019.5?", "What was 2019+5?"):
        assert asked(query) == [], query


def test_a_holiday_or_season_name_stays_a_topic_word() -> None:
    assert untimed_asked("What did I get for Christmas?").split() == [
        "What", "did", "I", "get", "Christmas", "?"]
    assert untimed_asked("What happened on Christmas 2022?").split() == [
        "What", "happened", "Christmas", "?"]
    assert untimed_asked("What state did Joanna visit in summer 2021?").split() == [
        "What", "state", "did", "Joanna", "visit", "in", "summer", "?"]
    assert not topicless("What happened at Christmas?")
    assert not topicless("What happened last summer?")  # "summer" is searched as a word too
    assert topicless("What happened in 2019?")
    assert topicless("What did we talk about on 8/5/2024?")


@given(DAYS, st.sampled_from(HOLIDAYS), st.sampled_from(("on", "at", "for", "during", "over")))
def test_a_bare_holiday_asked_is_the_latest_one_over(now: date, hol: str, prep: str) -> None:
    (got,) = asked(f"What did I do {prep} {hol}?", now)
    assert got[0] == got[1] < now
    assert got[0] in {holiday(hol, now.year), holiday(hol, now.year - 1)}


@given(DAYS, st.sampled_from(("last summer", "last winter", "this past fall", "last spring",
                              "last Christmas", "last Easter", "in 2019", "2019", "Easter",
                              "on 3/4/2020", "on 30.12.2019", "summer 2019", "winter 2020")))
def test_every_time_asked_is_over(now: date, expr: str) -> None:
    for start, end in asked(f"What did I do {expr}?", now):
        assert start <= end < now


@given(st.text(max_size=80), DAYS)
def test_no_question_breaks_the_reading(query: str, now: date) -> None:
    for start, end in asked(query, now):
        assert start <= end < now
    untimed_asked(query)


@given(st.sampled_from(["What did I get for Christmas?", "What did I do last summer?",
                        "What happened next Easter, 1/2/03 or in 2019?", "this winter 2019?"]),
       st.dates())
def test_any_calendar_day_as_now(query: str, now: date) -> None:
    for start, end in asked(query, now):
        assert start <= end < now
    untimed_asked(query)


def test_the_search_lifts_the_note_of_the_season_or_holiday_asked() -> None:
    bodies = ["I bought a lamp for the study.", "I bought a lamp for the study.",
              "I bought a lamp for the study.", "Last summer I bought a lamp for the study."]
    days = ["2023-12-25", "2023-07-15", "2024-05-08", "2023-11-02"]
    corpus = make_corpus([(f"n{i}", b) for i, b in enumerate(bodies)])
    corpus = replace(corpus, frontmatter=tuple({"date": d} for d in days))
    engine = SearchEngine.lexical()

    def factors(query: str) -> dict[str, float]:
        got = engine.search(corpus, query, 4, now=MON_10_JUNE_2024)
        return {h.note: h.receipt["when_factor"] for h in got.hits}

    assert factors("Which lamp did I buy at Christmas?") == {
        "n0.md": 2.0, "n1.md": 1.0, "n2.md": 1.0, "n3.md": 1.0}
    # n3 is dated in November but says it bought the lamp last summer (June-August 2023)
    assert factors("Which lamp did I buy last summer?") == {
        "n0.md": 1.0, "n1.md": 2.0, "n2.md": 1.0, "n3.md": 2.0}
    assert factors("Which lamp did I buy on 8/5/2024?") == {
        "n0.md": 1.0, "n1.md": 1.0, "n2.md": 2.0, "n3.md": 1.0}


COUNTS = {"a": 1, "one": 1, "two": 2, "three": 3, "a couple of": 2, "a few": 3, "four": 4,
          "5": 5, "12": 12}


@given(DAYS, st.sampled_from(sorted(COUNTS)), st.sampled_from(["weeks", "week", "WEEKS"]))
def test_a_count_of_weeks_asked_is_the_week_around_that_day(now: date, count: str,
                                                             unit: str) -> None:
    """ "two weeks ago" is the seven days centred on 14 days back (as loose as its unit, as
    "two months ago" is a month); "N days ago" stays the day; either is over by `now`."""
    back = 7 * COUNTS[count]
    (got,) = asked_ranges(f"What did I buy {count} {unit} ago?", now)
    assert (got.start, got.end, got.granularity) == (
        now - timedelta(days=back + 3), now - timedelta(days=back - 3), "week")
    assert got.end < now
    (day,) = asked_ranges(f"What did I buy {back} days ago?", now)
    assert (day.start, day.end, day.granularity) == (
        now - timedelta(days=back), now - timedelta(days=back), "day")
