"""Date resolution against the turn's own date: golden cases and properties."""

from __future__ import annotations

from datetime import date, timedelta

from hypothesis import given
from hypothesis import strategies as st

from vault.notes.clocks import absolute, count_of, month_range, resolve, shift_month

DAYS = st.dates(min_value=date(1990, 1, 1), max_value=date(2090, 12, 31))
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


def one(text: str, anchor: date) -> tuple[date, date, str]:
    (ref,) = resolve(text, anchor)
    return ref.start, ref.end, ref.granularity


def test_golden_expressions_on_thursday_9_may_2024() -> None:
    a = date(2024, 5, 9)
    assert one("yesterday", a) == (date(2024, 5, 8),) * 2 + ("day",)
    assert one("Last month I sold my bike", a) == (date(2024, 4, 1), date(2024, 4, 30), "month")
    assert one("two weeks ago", a)[0] == date(2024, 4, 25)
    assert one("last Friday", a)[0] == date(2024, 5, 3)
    assert one("next year", a) == (date(2025, 1, 1), date(2025, 12, 31), "year")
    assert one("this past weekend", a)[:2] == (date(2024, 5, 4), date(2024, 5, 5))
    assert one("next week", a)[:2] == (date(2024, 5, 13), date(2024, 5, 19))
    assert one("a couple of months ago", a)[:2] == (date(2024, 3, 1), date(2024, 3, 31))
    assert one("on 8 May, 2023", a)[0] == date(2023, 5, 8)
    assert one("since May 8, 2023", a)[0] == date(2023, 5, 8)
    assert one("in 2022", a)[:2] == (date(2022, 1, 1), date(2022, 12, 31))
    assert one("the day before yesterday", a)[0] == date(2024, 5, 7)


def test_january_last_month_is_previous_december() -> None:
    assert one("last month", date(2024, 1, 15))[:2] == (date(2023, 12, 1), date(2023, 12, 31))


def test_invalid_calendar_dates_and_plain_text_give_nothing() -> None:
    assert resolve("2024-02-30 is not a day", date(2024, 1, 1)) == ()
    assert resolve("I like pottery", date(2024, 1, 1)) == ()


@given(DAYS)
def test_yesterday_today_tomorrow(anchor: date) -> None:
    got = [r.start for r in resolve("yesterday, today and tomorrow", anchor)]
    assert got == [anchor - timedelta(days=1), anchor, anchor + timedelta(days=1)]


@given(DAYS)
def test_last_month_is_the_whole_previous_month(anchor: date) -> None:
    start, end, _ = one("last month", anchor)
    assert start.day == 1 and end + timedelta(days=1) == anchor.replace(day=1)


@given(DAYS, st.integers(min_value=1, max_value=99))
def test_n_days_and_weeks_ago(anchor: date, n: int) -> None:
    assert one(f"{n} days ago", anchor)[0] == anchor - timedelta(days=n)
    assert one(f"{n} weeks ago", anchor)[0] == anchor - timedelta(days=7 * n)


@given(DAYS, st.integers(min_value=1, max_value=60))
def test_n_months_ago_contains_the_shifted_month(anchor: date, n: int) -> None:
    start, end, gran = one(f"{n} months ago", anchor)
    assert gran == "month" and (start, end) == month_range(*shift_month(anchor, -n))
    assert end < anchor.replace(day=1)


@given(DAYS, st.sampled_from(WEEKDAYS))
def test_last_and_next_weekday(anchor: date, day: str) -> None:
    last = one(f"last {day.capitalize()}", anchor)[0]
    nxt = one(f"next {day}", anchor)[0]
    assert last.weekday() == WEEKDAYS.index(day) == nxt.weekday()
    assert 1 <= (anchor - last).days <= 7 and 1 <= (nxt - anchor).days <= 7


@given(DAYS)
def test_years_and_weeks(anchor: date) -> None:
    assert one("next year", anchor)[0].year == anchor.year + 1
    assert one("last year", anchor)[1] == date(anchor.year - 1, 12, 31)
    start, end, _ = one("last week", anchor)
    assert start.weekday() == 0 and (end - start).days == 6 and end < anchor <= end + timedelta(7)


@given(DAYS, st.text(alphabet="abc xyz.,", max_size=20))
def test_resolution_ignores_surrounding_text(anchor: date, noise: str) -> None:
    assert [r.start for r in resolve(f"{noise} yesterday {noise}", anchor)] == [
        anchor - timedelta(days=1)
    ]


def test_in_before_a_past_count_is_not_a_future_one() -> None:
    """"I took part in a week ago" is a week back, not "in a week" (a week on)."""
    anchor = date(2023, 4, 1)
    got = [(r.expr, r.start) for r in resolve("the event I took part in a week ago", anchor)]
    assert got == [("a week ago", date(2023, 3, 25))]
    assert [(r.expr, r.start) for r in resolve("see you in two weeks", anchor)] == [
        ("in two weeks", date(2023, 4, 15))]


def test_absolute_keeps_what_names_a_time_by_itself_and_counts_read_any_case() -> None:
    got = absolute("last month, on 8 May 2023, yesterday, in May 2023 and in 2022")
    assert [(r.expr, r.start, r.end) for r in got] == [
        ("8 May 2023", date(2023, 5, 8), date(2023, 5, 8)),
        ("May 2023", date(2023, 5, 1), date(2023, 5, 31)),
        ("in 2022", date(2022, 1, 1), date(2022, 12, 31))]
    assert [count_of(w) for w in ("3", "Three", "a  Few", "few", "couple of", "an")] == [
        3, 3, 3, 3, 2, 1]
