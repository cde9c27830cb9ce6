"""Seasons, holidays and numeric dates (notes/occasions.py) and their reading in a turn
(notes/clocks.py `resolve`): a table per form, negatives, and generated properties."""

from __future__ import annotations

import re
from datetime import date, timedelta

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from vault.notes.clocks import _PATTERN, PATTERN_BODY, absolute, resolve, untimed
from vault.notes.occasions import (
    easter,
    holiday,
    numeric_days,
    relative_holiday,
    relative_season,
    season_range,
    thanksgiving,
)

DAYS = st.dates(min_value=date(1950, 1, 1), max_value=date(2090, 12, 31))
YEARS = st.integers(min_value=1901, max_value=2099)
SEASONS = ("spring", "summer", "autumn", "fall", "winter")
HOLIDAYS = ("Christmas Eve", "Christmas", "Christmas Day", "Xmas", "New Year's Eve",
            "New Year's Day", "New Year", "Valentine's Day", "valentines", "Halloween",
            "Independence Day", "the 4th of July", "Fourth of July", "July 4th", "Easter",
            "Easter Sunday", "Thanksgiving", "Thanksgiving Day", "New Year\u2019s Eve")
THU_16_NOV_2023 = date(2023, 11, 16)


def refs(text: str, anchor: date = THU_16_NOV_2023) -> list[tuple[str, date, date, str]]:
    return [(r.expr, r.start, r.end, r.granularity) for r in resolve(text, anchor)]


def span(text: str, anchor: date = THU_16_NOV_2023) -> tuple[date, date]:
    (ref,) = resolve(text, anchor)
    return ref.start, ref.end


@pytest.mark.parametrize(("year", "want"), [
    (1961, date(1961, 4, 2)), (2000, date(2000, 4, 23)), (2008, date(2008, 3, 23)),
    (2011, date(2011, 4, 24)), (2019, date(2019, 4, 21)), (2024, date(2024, 3, 31)),
    (2025, date(2025, 4, 20)), (2038, date(2038, 4, 25)), (2285, date(2285, 3, 22)),
])
def test_easter_by_the_computus(year: int, want: date) -> None:
    assert easter(year) == want


@given(YEARS)
def test_easter_is_a_sunday_between_22_march_and_25_april(year: int) -> None:
    d = easter(year)
    assert d.weekday() == 6 and date(year, 3, 22) <= d <= date(year, 4, 25)


@given(YEARS)
def test_thanksgiving_is_the_fourth_thursday_of_november(year: int) -> None:
    d = thanksgiving(year)
    assert d.weekday() == 3 and d.month == 11 and 22 <= d.day <= 28


def test_seasons_are_meteorological_and_winter_crosses_the_year() -> None:
    assert season_range("spring", 2023) == (date(2023, 3, 1), date(2023, 5, 31))
    assert season_range("summer", 2023) == (date(2023, 6, 1), date(2023, 8, 31))
    assert season_range("fall", 2023) == season_range("autumn", 2023)
    assert season_range("autumn", 2023) == (date(2023, 9, 1), date(2023, 11, 30))
    assert season_range("winter", 2024) == (date(2023, 12, 1), date(2024, 2, 29))
    assert season_range("winter", 2023) == (date(2022, 12, 1), date(2023, 2, 28))


def test_seasons_in_a_turn_on_thursday_16_november_2023() -> None:
    assert span("last summer") == (date(2023, 6, 1), date(2023, 8, 31))
    assert span("this past summer") == span("last summer")
    assert span("this winter") == (date(2023, 12, 1), date(2024, 2, 29))
    assert span("last winter") == (date(2022, 12, 1), date(2023, 2, 28))
    assert span("this fall") == (date(2023, 9, 1), date(2023, 11, 30))  # holds the day
    assert span("last autumn") == (date(2022, 9, 1), date(2022, 11, 30))
    assert span("next autumn") == span("next fall") == (date(2024, 9, 1), date(2024, 11, 30))
    assert span("next spring") == (date(2024, 3, 1), date(2024, 5, 31))
    assert span("in the spring of 2023") == (date(2023, 3, 1), date(2023, 5, 31))
    assert span("Summer 2021") == (date(2021, 6, 1), date(2021, 8, 31))
    assert span("summer, 2021") == span("Summer 2021")
    assert span("winter 2023-24") == span("winter 2023/2024") == span("this winter")
    assert refs("summer 2023-24") == []  # only a winter spans two years
    assert refs("winter 2023-27") == []
    assert refs("the last summer of the decade") == []  # a part of something, as "last week of"
    assert resolve("last summer", THU_16_NOV_2023)[0].granularity == "season"


def test_this_season_outside_it_is_the_nearest_of_the_calendar_year() -> None:
    assert span("this summer", date(2024, 1, 10)) == (date(2024, 6, 1), date(2024, 8, 31))
    assert span("this summer", date(2024, 10, 10)) == (date(2024, 6, 1), date(2024, 8, 31))
    assert span("this winter", date(2024, 3, 5)) == (date(2023, 12, 1), date(2024, 2, 29))
    assert span("this winter", date(2024, 9, 20)) == (date(2024, 12, 1), date(2025, 2, 28))
    assert span("last summer", date(2023, 7, 1)) == (date(2022, 6, 1), date(2022, 8, 31))
    assert span("next summer", date(2023, 7, 1)) == (date(2024, 6, 1), date(2024, 8, 31))


def test_holidays_in_a_turn_on_thursday_16_november_2023() -> None:
    assert span("Christmas 2023") == (date(2023, 12, 25),) * 2
    assert span("Christmas Eve, 2022") == (date(2022, 12, 24),) * 2
    assert span("last Christmas") == (date(2022, 12, 25),) * 2
    assert span("this Christmas") == (date(2023, 12, 25),) * 2
    assert span("next Christmas") == (date(2023, 12, 25),) * 2
    assert span("last Thanksgiving") == (date(2022, 11, 24),) * 2
    assert span("next Thanksgiving") == (date(2023, 11, 23),) * 2
    assert span("Thanksgiving 2023") == (date(2023, 11, 23),) * 2
    assert span("last Easter") == (date(2023, 4, 9),) * 2
    assert span("next Easter") == (date(2024, 3, 31),) * 2
    assert span("this past Halloween") == (date(2023, 10, 31),) * 2
    assert span("New Year's Eve 2022") == (date(2022, 12, 31),) * 2
    assert span("New Year\u2019s Day 2024") == (date(2024, 1, 1),) * 2
    assert span("last New Year's") == (date(2023, 1, 1),) * 2
    assert span("Valentine's Day, 2021") == (date(2021, 2, 14),) * 2
    assert span("the 4th of July 2022") == (date(2022, 7, 4),) * 2
    assert span("last Fourth of July") == (date(2023, 7, 4),) * 2
    assert span("Independence Day 2020") == (date(2020, 7, 4),) * 2
    assert span("July 4th, 2020") == (date(2020, 7, 4),) * 2  # the month-day rule's


@pytest.mark.parametrize("text", [
    "I love Christmas", "Halloween costumes are fun", "we had a summer camp",
    "a spring in his step",
    "the fall was bad", "Merry Christmas!", "Happy Thanksgiving", "winter is coming",
])
def test_a_bare_season_or_holiday_is_no_time_in_a_turn(text: str) -> None:
    assert refs(text) == []


def test_numeric_dates() -> None:
    a = THU_16_NOV_2023
    assert [r[1] for r in refs("on 8/5/2024", a)] == [date(2024, 8, 5), date(2024, 5, 8)]
    assert [r[1] for r in refs("5/8/24", a)] == [date(2024, 5, 8), date(2024, 8, 5)]
    assert [r[1] for r in refs("13/5/2024", a)] == [date(2024, 5, 13)]
    assert [r[1] for r in refs("5/13/2024", a)] == [date(2024, 5, 13)]
    assert [r[1] for r in refs("5/5/2024", a)] == [date(2024, 5, 5)]
    assert [r[1] for r in refs("08.05.2024", a)] == [date(2024, 5, 8)]  # dotted: day first
    assert [r[1] for r in refs("2024/05/08", a)] == [date(2024, 5, 8)]
    assert [r[1] for r in refs("2024.5.8", a)] == [date(2024, 5, 8)]
    assert [r[1] for r in refs("1/2/99", a)] == [date(1999, 1, 2), date(1999, 2, 1)]
    assert [r[1] for r in refs("12/31/68", a)] == [date(2068, 12, 31)]
    assert refs("31/2/2024", a) == [] and refs("13/13/2024", a) == []
    assert all(g == "day" for *_, g in refs("8/5/2024 and 08.05.2024", a))


@pytest.mark.parametrize("text", [
    "4/5 of the votes", "24/7", "version 3.10.12", "python 3.12.1", "192.168.1.1",
    "1.2.3.2024", "10/20/30/40", "8/5/2024/1", "08.05.24", "3/4", "a 50/50 split",
    "2019 steps", "in 2019 dollars", "during 2019 prices", "2019", "the 2019 election",
    "page 12/3", "2024/13/45",
])
def test_what_is_no_date_in_a_turn(text: str) -> None:
    assert refs(text) == []


def test_years_with_a_preposition() -> None:
    for text in ("in 2019", "during 2019", "throughout 2019", "in early 2019", "in mid-2019"):
        assert span(text) == (date(2019, 1, 1), date(2019, 12, 31)), text
    assert span("May of 2023") == (date(2023, 5, 1), date(2023, 5, 31))


@pytest.mark.parametrize(("text", "want"), [
    ("in spring 2023-05-01 we met", date(2023, 5, 1)),
    ("summer 2023/06/12 trip", date(2023, 6, 12)),
    ("winter 2023-12-05", date(2023, 12, 5)),
    ("Easter 2024-04-01", date(2024, 4, 1)),
    ("during 2022-03-04", date(2022, 3, 4)),
    ("released in 2023-05-01", date(2023, 5, 1)),
    ("in 2023/05/01", date(2023, 5, 1)),
    ("May 2023-05-07", date(2023, 5, 7)),
])
def test_a_year_that_starts_a_full_date_is_read_as_that_date(text: str, want: date) -> None:
    # "spring 2023" or "in 2023" taking the year of the date written after it read the
    # season or the year, or nothing at all ("spring 2023-05" is no winter span)
    assert [(r[1], r[2]) for r in refs(text)] == [(want, want)]


def test_the_absolute_forms_are_absolute_and_untimed_keeps_the_names() -> None:
    got = [r.expr for r in absolute("summer 2021, Christmas 2023, 8/5/2024, last summer")]
    assert got == ["summer 2021", "Christmas 2023", "8/5/2024", "8/5/2024"]
    assert untimed("Last Christmas I sold my bike").split() == ["Christmas", "I", "sold", "my",
                                                                 "bike"]
    assert untimed("last summer on 8/5/2024").split() == ["summer", "on"]
    assert untimed("last summer on 8/5/2024", names=False).split() == ["on"]


@given(DAYS, st.sampled_from(SEASONS), st.sampled_from(("last", "this", "next", "this past")))
def test_a_relative_season_is_a_whole_season_placed_as_said(
        anchor: date, name: str, which: str) -> None:
    (ref,) = resolve(f"{which} {name}", anchor)
    assert ref.start <= ref.end and ref.start.day == 1 and (ref.end + timedelta(days=1)).day == 1
    assert 89 <= (ref.end - ref.start).days + 1 <= 92
    if which in ("last", "this past"):
        # a year back at most: 366 days from the last day of a season in a leap year
        assert anchor - timedelta(days=366) <= ref.end < anchor
    elif which == "next":
        assert anchor < ref.start <= anchor + timedelta(days=366)
    else:
        assert abs((ref.start - anchor).days) < 366


@given(YEARS, st.sampled_from(SEASONS), st.sampled_from(HOLIDAYS))
def test_a_year_with_a_season_or_holiday_lies_in_that_year(
        year: int, name: str, hol: str) -> None:
    (season,) = resolve(f"{name} {year}", date(2000, 1, 1))
    if name == "winter":
        assert (season.start, season.end) == (date(year - 1, 12, 1),
                                              date(year, 3, 1) - timedelta(days=1))
    else:
        assert season.start.year == season.end.year == year
    (day,) = resolve(f"{hol} {year}", date(2000, 1, 1))
    assert day.start == day.end == holiday(hol, year) and day.start.year == year


@given(DAYS, st.sampled_from(HOLIDAYS))
@example(date(2001, 11, 22), "Thanksgiving")
def test_last_and_next_holiday_lie_about_a_year_around_the_day(anchor: date, hol: str) -> None:
    last, nxt = relative_holiday(hol, -1, anchor), relative_holiday(hol, 1, anchor)
    # the occurrence of the anchor's year or the one before / after it: a weekday-anchored day
    # (Thanksgiving: 2001-11-22, then 2002-11-28) lies up to 371 days on, Easter 35 days more
    this = holiday(hol, anchor.year)
    assert last == (this if this < anchor else holiday(hol, anchor.year - 1))
    assert nxt == (this if this > anchor else holiday(hol, anchor.year + 1))
    (ref,) = resolve(f"last {hol}", anchor)
    assert ref.start == ref.end == last


@given(st.integers(1, 31), st.integers(1, 31), st.integers(0, 99), st.sampled_from("/."))
def test_numeric_days_are_the_days_the_fields_can_name(a: int, b: int, y: int, sep: str) -> None:
    days = numeric_days(str(a), str(b), f"{y:02d}", sep)
    assert len(days) <= 2 and len(set(days)) == len(days)
    for d in days:
        assert {d.day, d.month} <= {a, b} and d.year % 100 == y


@given(DAYS, st.sampled_from(SEASONS))
def test_relative_season_agrees_with_the_calendar(anchor: date, name: str) -> None:
    start, end = relative_season(name, 0, anchor)
    assert (start, end) in {season_range(name, y) for y in range(anchor.year - 1,
                                                                  anchor.year + 3)}


@given(st.text(max_size=80), st.dates())
def test_no_text_breaks_the_reading(text: str, anchor: date) -> None:
    for r in resolve(text, anchor):
        assert r.start <= r.end and r.expr in text
    untimed(text)


@given(st.lists(st.sampled_from([
    "last", "this", "next", "past", "summer", "winter", "fall", "Christmas", "Eve", "New",
    "Year's", "of", "the", "4th", "July", "2019", "in", "during", "8/5/2024", "12.31.2024",
    "1/1/00", "-", "24", "/", ".", "Easter", "Thanksgiving", "dollars", " ", ",",
]), max_size=12), DAYS)
def test_no_sequence_of_time_words_breaks_the_reading(words: list[str], anchor: date) -> None:
    text = " ".join(words)
    for r in resolve(text, anchor):
        assert r.start <= r.end and r.expr in text


_VOCAB = [
    "last", "this", "next", "past", "the", "summer", "winter", "fall", "spring", "autumn",
    "Christmas", "Eve", "Day", "New", "Year's", "Valentine's", "Halloween", "Independence",
    "of", "4th", "fourth", "July", "Easter", "Thanksgiving", "2019", "in", "during", "early",
    "throughout", "8/5/2024", "12.31.2024", "2024/05/08", "2023-05-08", "1/1/00", "-", "24",
    "/", ".", ",", "dollars", "May", "8", "8th", "ago", "two", "a", "couple", "few", "weeks",
    "days", "month", "year", "yesterday", "today", "tonight", "tomorrow", "night", "day",
    "before", "after", "Friday", "weekend", "an", "hour", "Sept", "sold", "bike", "I",
]
_PLAIN = re.compile(r"\b" + PATTERN_BODY, re.IGNORECASE)


@given(st.lists(st.sampled_from(_VOCAB), max_size=16), st.sampled_from([" ", "", "  ", "\n"]))
def test_the_start_filter_finds_what_the_plain_pattern_finds(words: list[str], sep: str) -> None:
    text = sep.join(words)
    fast = [(m.span(), m.groupdict()) for m in _PATTERN.finditer(text)]
    assert fast == [(m.span(), m.groupdict()) for m in _PLAIN.finditer(text)]
