"""Named times of the calendar: seasons, holidays and written-out numeric dates.

Pure functions of a year or an anchor day (never the clock), used by notes/clocks.py
(`resolve`: "last summer", "Christmas 2023", "8/5/2024" in a turn, read against the turn's
date) and notes/times_asked.py (a question's bare "at Christmas", read against the day it
is asked on). The conventions are fixed, so every answer is reproducible:

- Seasons are the northern hemisphere's meteorological ones (whole months: spring March-May,
  summer June-August, autumn ("fall") September-November, winter December-February). Winter
  spans the year boundary: "winter 2023" is December 2022 - February 2023 (the year of its
  January, as NOAA's seasonal reports name it), "winter 2023-24" (or "2023/2024") is December
  2023 - February 2024. "last summer" is the latest summer wholly over before the anchor (said
  in July 2023: summer 2022), "next summer" the first to start after it, "this summer" the one
  holding the anchor, else the one that overlaps the anchor's calendar year and lies nearest
  to it (ties to the later: "this winter" said in November is the coming one, said in March
  the one just over).
- Holidays (US calendar, one day each): New Year's Day 1 January, Valentine's Day 14 February,
  Easter Sunday (the anonymous Gregorian computus, "Meeus/Jones/Butcher": J. Meeus,
  *Astronomical Algorithms*, 2nd ed. 1998, ch. 8), Independence Day ("the 4th of July") 4 July,
  Halloween 31 October, Thanksgiving the fourth Thursday of November, Christmas Eve 24 and
  Christmas (Day) 25 December, New Year's Eve 31 December. "last Christmas" is the latest
  strictly before the anchor, "next Christmas" the first strictly after, "this Christmas" the
  one of the anchor's year.
- Numeric dates ("8/5/2024", "5/8/24", "08.05.2024", "2024/05/08"): a four-digit first field
  is a year (Y/M/D); otherwise a field above 12 is the day. Dotted dates are day first
  (DD.MM.YYYY, the convention of the locales that write them, e.g. DIN 5008); a slashed date
  whose first two fields are both 12 or below is ambiguous (8/5/2024 is 5 August in the US, 8 May
  in most other places) and gives both days, month-first first. No setting chooses one: the
  expressions of a turn are read at ingest, by the search, by `context` and by the prompt
  hooks, none of which share a configuration, and a setting would make the same conversation's
  date entities depend on it. A two-digit year is 2000-2068 for 00-68 and 1969-1999 for 69-99
  (POSIX strptime's %y). A dotted date needs a four-digit year ("3.10.12" is a version).
"""

from __future__ import annotations

from datetime import date, timedelta

SEASONS = ("spring", "summer", "autumn", "winter")
_SEASON_MONTH = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}
SEASON_NAMES = "spring|summer|autumn|fall|winter"  # a regex
_APOS = "(?:'|\u2019)?"
HOLIDAY_NAMES = (  # a regex; the longest spelling of each first
    r"christmas\s+eve|christmas(?:\s+day)?|xmas"
    r"|new\s+year" + _APOS + r"s?\s+eve|new\s+year" + _APOS + r"s?(?:\s+day)?"
    r"|valentine" + _APOS + r"s?(?:\s+day)?|halloween"
    r"|independence\s+day|(?:the\s+)?(?:4th|fourth)\s+of\s+july|july\s+(?:4th|fourth)"
    r"|easter(?:\s+sunday)?|thanksgiving(?:\s+day)?"
)


def season_range(name: str, year: int) -> tuple[date, date]:
    """First and last day of season `name` ("fall" = "autumn") of `year`; winter `year` is
    December of the year before through February of `year`."""
    first_month = _SEASON_MONTH[name.lower()]
    start = date(year - (first_month == 12), first_month, 1)
    last_month_first = date(year, 2 if first_month == 12 else first_month + 2, 1)
    nxt = date(last_month_first.year + (last_month_first.month == 12),
               last_month_first.month % 12 + 1, 1)
    return start, nxt - timedelta(days=1)


def relative_season(name: str, step: int, anchor: date) -> tuple[date, date]:
    """The season `name` that "last" (step -1), "this" (0) or "next" (1) names when said on
    `anchor` (module docstring)."""
    spans = [season_range(name, y) for y in range(anchor.year - 1, anchor.year + 3)]
    if step < 0:
        return max(s for s in spans if s[1] < anchor)
    if step > 0:
        return min(s for s in spans if s[0] > anchor)
    for s in spans:
        if s[0] <= anchor <= s[1]:
            return s
    year_spans = [s for s in spans if s[0].year <= anchor.year <= s[1].year]
    return min(year_spans, key=lambda s: (max((s[0] - anchor).days, (anchor - s[1]).days),
                                          -s[0].toordinal()))


def easter(year: int) -> date:
    """Easter Sunday of `year` (Gregorian), by the anonymous computus (Meeus 1998, ch. 8)."""
    a, b, c = year % 19, year // 100, year % 100
    d, e = b // 4, b % 4
    f = (b + 8) // 25
    g = (b - f + 1) // 3
    h = (19 * a + b - d - g + 15) % 30
    i, k = c // 4, c % 4
    lv = (32 + 2 * e + 2 * i - h - k) % 7
    m = (a + 11 * h + 22 * lv) // 451
    month, day = divmod(h + lv - 7 * m + 114, 31)
    return date(year, month, day + 1)


def thanksgiving(year: int) -> date:
    """The fourth Thursday of November of `year` (US Thanksgiving)."""
    first = date(year, 11, 1)
    return first + timedelta(days=(3 - first.weekday()) % 7 + 21)


def holiday(name: str, year: int) -> date:
    """The day holiday `name` (any spelling HOLIDAY_NAMES matches, any case) falls on in
    `year`."""
    key = " ".join(name.lower().replace("\u2019", "'").split())
    if key.startswith("christmas eve"):
        return date(year, 12, 24)
    if key.startswith(("christmas", "xmas")):
        return date(year, 12, 25)
    if key.startswith("new year"):
        return date(year, 12, 31) if key.endswith("eve") else date(year, 1, 1)
    if key.startswith("valentine"):
        return date(year, 2, 14)
    if key == "halloween":
        return date(year, 10, 31)
    if key.startswith("easter"):
        return easter(year)
    if key.startswith("thanksgiving"):
        return thanksgiving(year)
    return date(year, 7, 4)  # Independence Day, the 4th of July, July 4th


def relative_holiday(name: str, step: int, anchor: date) -> date:
    """The holiday `name` that "last" (step -1), "this" (0) or "next" (1) names on `anchor`."""
    if step == 0:
        return holiday(name, anchor.year)
    days = [holiday(name, y) for y in range(anchor.year - 1, anchor.year + 2)]
    return max(d for d in days if d < anchor) if step < 0 else min(d for d in days if d > anchor)


def latest_holiday(name: str, now: date) -> date:
    """The latest day of holiday `name` strictly before `now` (a question's bare "at
    Christmas")."""
    return relative_holiday(name, -1, now)


def full_year(text: str) -> int:
    """A year written with two or four digits (two: POSIX %y, module docstring)."""
    y = int(text)
    if len(text) == 2:
        return y + (2000 if y < 69 else 1900)
    return y


def numeric_days(first: str, second: str, year: str, sep: str) -> tuple[date, ...]:
    """The days "first<sep>second<sep>year" can name (module docstring), month-first reading
    first when both are possible; () when neither is a calendar day."""
    a, b, y = int(first), int(second), full_year(year)
    if sep == "." or a > 12:
        orders = [(b, a)]
    elif b > 12:
        orders = [(a, b)]
    else:
        orders = [(a, b), (b, a)] if a != b else [(a, b)]
    out = []
    for month, day in orders:
        try:
            out.append(date(y, month, day))
        except ValueError:
            continue
    return tuple(out)
