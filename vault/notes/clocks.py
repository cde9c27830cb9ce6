"""Two clocks per event: a tick (its order) and a date anchor (when it was said).

NDM (seed 000, step 4): "If Bob says on 9 May, 'Last month I sold my bike', the event gets the
newest tick but its date anchor is 9 May, so 'last month' means April." `resolve(text, anchor)`
turns the relative expressions of one turn into absolute, inclusive date ranges computed from
the turn's own date, never from the clock.

Conventions (fixed, so every answer is reproducible):
- weeks are ISO weeks (Monday..Sunday); "last week" is the whole previous ISO week, "this
  weekend" the Saturday and Sunday of the anchor's ISO week, "last weekend" those of the
  previous ISO week;
- "last Friday" is the latest Friday strictly before the anchor (1..7 days back); "next
  Friday" the first strictly after (1..7 days on); "this Friday" the one in the anchor's week;
- "N days/weeks ago" is one day (anchor − N·1 or N·7 days); "N months/years ago" is that whole
  month/year; "a couple of" = 2, "a few" = 3, "a"/"an" = 1;
- absolute dates ("8 May 2023", "May 8, 2023", "2023-05-08", "May 2023", "May of 2023", "in
  2022", "during 2022", "throughout early 2022"; not "in 2022 dollars") resolve to themselves;
- seasons ("last summer", "this winter", "the spring of 2023", "winter 2023-24"), holidays
  with a year or a "last"/"this"/"next" ("Christmas 2023", "last Thanksgiving", "next
  Easter") and numeric dates ("8/5/2024", "08.05.2024", "5/8/24") follow notes/occasions.py
  (meteorological northern seasons, winter across the year boundary; an ambiguous slashed
  date gives both days). A bare "Christmas" or "2019" is no time in a turn ("I love
  Christmas"); a question reads them (notes/times_asked.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta

from .occasions import (
    HOLIDAY_NAMES,
    SEASON_NAMES,
    full_year,
    holiday,
    numeric_days,
    relative_holiday,
    relative_season,
    season_range,
)

_NUMBER_WORDS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "a couple of": 2,
    "a few": 3,
    "couple of": 2,  # "in the past couple of weeks" (retrieval/when.py)
    "few": 3,
}
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
_NUM = (
    r"(?P<n>\d{1,3}|a couple of|a few|an|a|one|two|three|four|five|six|seven|eight|nine|ten|"
    r"eleven|twelve)"
)
MONTH_NAMES = "|".join(MONTHS) + "|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec"  # a regex
_MON = "(?P<mon>" + MONTH_NAMES + ")"
_YEARS = r"(?:19\d{2}|20\d{2}|2100)"
# A year that starts a full date is no year of its own: "in 2023-05-01" and "spring 2023/05/01"
# name that day, not the year or the season.
_FULL = r"(?![-/.]\d{1,2}[-/.]\d)"
_YEAR = _YEARS + _FULL
_SEASON_YEAR = (  # "summer 2023", "the spring of 2023", "winter 2023-24"
    r"(?:the\s+)?(?P<sn1>" + SEASON_NAMES + r")(?:\s+of)?,?\s+(?P<sy1>" + _YEAR + r")"
    r"(?:\s*[-/\u2013]\s*(?P<sy2>\d{4}|\d{2}))?")
_HOLIDAY_YEAR = r"(?P<hn1>" + HOLIDAY_NAMES + r")(?:\s+of)?,?\s+(?P<hy1>" + _YEAR + r")"
_WHICH = r"last|this\s+past|the\s+past|this|next"
_FIRST_WORDS = (  # the words an expression can start with (a word of 1-2 letters: whole)
    *MONTHS, *WEEKDAYS, *(w for w in _NUMBER_WORDS if " " not in w), "the", "yesterday",
    "today", "tonight", "tomorrow", "last", "this", "next", "in", "during", "throughout",
    "spring", "summer", "autumn", "fall", "winter", "christmas", "xmas", "new", "valentine",
    "halloween", "independence", "fourth", "easter", "thanksgiving")
# Where no expression can start, fail at once: one alternation of short literals is ~4x
# cheaper than trying each branch below (tests/vault/notes/test_occasions.py checks that the
# same expressions are found with and without it).
STARTS = r"(?=\d|" + "|".join(sorted({w[:3] if len(w) > 2 else w + r"\b"
                                        for w in _FIRST_WORDS})) + ")"
PATTERN_BODY = (
    r"(?:"
    r"(?P<iso>(?P<iy>\d{4})-(?P<im>\d{2})-(?P<id>\d{2}))"
    r"|(?<![\d/.])(?P<ymd>(?P<sy>" + _YEARS + r")(?P<ss>[/.])(?P<sm>\d{1,2})(?P=ss)(?P<sd>\d{1,2}))"
    r"(?![\d/]|\.\d)"
    r"|(?<![\d/.])(?P<num>(?P<na>\d{1,2})(?:(?P<sl>/)(?P<nb>\d{1,2})/(?P<ny>\d{4}|\d{2})"
    r"|(?P<dt>\.)(?P<nd>\d{1,2})\.(?P<nz>\d{4})))(?![\d/]|\.\d)"
    r"|(?P<dmy>(?P<d1>\d{1,2})(?:st|nd|rd|th)?\s+"
    + _MON.replace("mon>", "m1>")
    + r",?\s+(?P<y1>\d{4}))"
    r"|(?P<mdy>"
    + _MON.replace("mon>", "m2>")
    + r"\s+(?P<d2>\d{1,2})(?:st|nd|rd|th)?,?\s+(?P<y2>\d{4}))"
    r"|(?P<my>" + _MON.replace("mon>", "m3>") + r"(?:\s+of)?,?\s+(?P<y3>\d{4})" + _FULL + ")"
    r"|(?P<seay>" + _SEASON_YEAR + r")"
    r"|(?P<holy>" + _HOLIDAY_YEAR + r")"
    r"|(?P<dby>the\s+day\s+before\s+yesterday)"
    r"|(?P<dat>the\s+day\s+after\s+tomorrow)"
    r"|(?P<simple>yesterday|today|tonight|tomorrow|last\s+night)"
    r"|(?P<ago>" + _NUM + r"\s+(?P<unit>day|week|month|year)s?\s+ago)"
    r"|(?P<inn>in\s+" + _NUM.replace("<n>", "<n2>") + r"\s+(?P<unit2>day|week|month|year)s?"
    r"(?!\s+ago\b))"
    r"|(?P<sear>(?P<sw>" + _WHICH + r")\s+(?P<sn2>" + SEASON_NAMES + r")\b(?!\s+of\b))"
    r"|(?P<holr>(?P<hw>" + _WHICH + r")\s+(?P<hn2>" + HOLIDAY_NAMES + r"))"
    r"|(?P<rel>(?P<which>last|this\s+past|this|next)\s+(?P<span>weekend|week|month|year|"
    + "|".join(WEEKDAYS)
    + r")\b(?!\s+of\b))"  # "the last week of August" is a part of August, not last week
    r"|(?P<year>(?:in|during|throughout)\s+(?:(?:early|mid|late)[-\s]+)?(?P<y4>" + _YEAR + r"))"
    r"(?!\s+(?:dollars|euros|pounds|prices|terms|money|usd|eur|gbp)\b)"  # "in 2019 dollars"
    r")\b")
_PATTERN = re.compile(r"\b" + STARTS + PATTERN_BODY, re.IGNORECASE)


@dataclass(frozen=True)
class TimeRef:
    """One resolved expression: the text as written and the inclusive range it names."""

    expr: str
    start: date
    end: date
    granularity: str  # "day" | "week" | "month" | "season" | "year"

    @property
    def label(self) -> str:
        """ISO day, "YYYY-MM", "YYYY", or "start..end" for weeks and seasons."""
        if self.granularity == "day":
            return self.start.isoformat()
        if self.granularity == "month":
            return self.start.isoformat()[:7]
        if self.granularity == "year":
            return str(self.start.year)
        return f"{self.start.isoformat()}..{self.end.isoformat()}"


def month_range(year: int, month: int) -> tuple[date, date]:
    """First and last day of a month."""
    first = date(year, month, 1)
    nxt = date(year + (month == 12), month % 12 + 1, 1)
    return first, nxt - timedelta(days=1)


def shift_month(d: date, n: int) -> tuple[int, int]:
    """(year, month) of the month n months after d's month (n may be negative)."""
    index = d.year * 12 + (d.month - 1) + n
    return index // 12, index % 12 + 1


def _week_start(d: date) -> date:
    return d - timedelta(days=d.weekday())


def month_number(name: str) -> int:
    """1-12 for a month's name or its abbreviation (any case)."""
    name = name.lower()
    return next(i + 1 for i, m in enumerate(MONTHS) if m.startswith(name[:3]))


def count_of(word: str) -> int:
    """The number a count word says ("3", "three", "a few", "couple of"; any case)."""
    word = " ".join(word.lower().split())
    return int(word) if word.isdigit() else _NUMBER_WORDS[word]


def _offset(anchor: date, n: int, unit: str, expr: str) -> TimeRef:
    """anchor shifted by n units (n < 0: the past)."""
    if unit in ("day", "week"):
        d = anchor + timedelta(days=n * (7 if unit == "week" else 1))
        return TimeRef(expr, d, d, "day")
    if unit == "month":
        first, last = month_range(*shift_month(anchor, n))
        return TimeRef(expr, first, last, "month")
    y = anchor.year + n
    return TimeRef(expr, date(y, 1, 1), date(y, 12, 31), "year")


_STEP = {"last": -1, "this past": -1, "the past": -1, "this": 0, "next": 1}


def step_of(which: str) -> int:
    """-1, 0 or 1 for "last" / "this past" / "the past", "this", "next" (any case)."""
    return _STEP[" ".join(which.lower().split())]


def _season(expr: str, name: str, year: str, to_year: str | None) -> TimeRef:
    """ "summer 2023"; "winter 2023-24" is the winter from December 2023 (occasions.py)."""
    y = int(year)
    if to_year is not None:
        if name.lower() != "winter" or full_year(to_year) % 100 != (y + 1) % 100:
            raise ValueError(f"not one season: {expr!r}")
        y += 1
    start, end = season_range(name, y)
    return TimeRef(expr, start, end, "season")


def _relative(expr: str, which: str, span: str, anchor: date) -> TimeRef:
    step = step_of(which)
    span = span.lower()
    if span in WEEKDAYS:
        wd = WEEKDAYS.index(span)
        if step < 0:
            back = (anchor.weekday() - wd) % 7 or 7
            d = anchor - timedelta(days=back)
        elif step > 0:
            d = anchor + timedelta(days=(wd - anchor.weekday()) % 7 or 7)
        else:
            d = _week_start(anchor) + timedelta(days=wd)
        return TimeRef(expr, d, d, "day")
    if span in ("week", "weekend"):
        monday = _week_start(anchor) + timedelta(days=7 * step)
        if span == "weekend":
            return TimeRef(expr, monday + timedelta(days=5), monday + timedelta(days=6), "week")
        return TimeRef(expr, monday, monday + timedelta(days=6), "week")
    return _offset(anchor, step, span, expr)


def resolve(text: str, anchor: date) -> tuple[TimeRef, ...]:
    """Every date expression in `text`, resolved against `anchor`, in text order.

    Matches never overlap; unknown calendar dates (31 February) are skipped.
    """
    out: list[TimeRef] = []
    for m in _PATTERN.finditer(text):
        expr = m.group(0)
        g = m.groupdict()
        try:
            if g["iso"]:
                d = date(int(g["iy"]), int(g["im"]), int(g["id"]))
                out.append(TimeRef(expr, d, d, "day"))
            elif g["dmy"] or g["mdy"]:
                day = int(g["d1"] or g["d2"])
                d = date(int(g["y1"] or g["y2"]), month_number(g["m1"] or g["m2"]), day)
                out.append(TimeRef(expr, d, d, "day"))
            elif g["ymd"]:
                d = date(int(g["sy"]), int(g["sm"]), int(g["sd"]))
                out.append(TimeRef(expr, d, d, "day"))
            elif g["num"]:
                sep = g["sl"] or g["dt"]
                days = numeric_days(g["na"], g["nb"] or g["nd"], g["ny"] or g["nz"], sep)
                out.extend(TimeRef(expr, d, d, "day") for d in days)
            elif g["seay"]:
                out.append(_season(expr, g["sn1"], g["sy1"], g["sy2"]))
            elif g["holy"]:
                d = holiday(g["hn1"], int(g["hy1"]))
                out.append(TimeRef(expr, d, d, "day"))
            elif g["sear"]:
                start, end = relative_season(g["sn2"], step_of(g["sw"]), anchor)
                out.append(TimeRef(expr, start, end, "season"))
            elif g["holr"]:
                d = relative_holiday(g["hn2"], step_of(g["hw"]), anchor)
                out.append(TimeRef(expr, d, d, "day"))
            elif g["my"]:
                first, last = month_range(int(g["y3"]), month_number(g["m3"]))
                out.append(TimeRef(expr, first, last, "month"))
            elif g["dby"]:
                out.append(_offset(anchor, -2, "day", expr))
            elif g["dat"]:
                out.append(_offset(anchor, 2, "day", expr))
            elif g["simple"]:
                word = " ".join(g["simple"].lower().split())
                n = {"yesterday": -1, "last night": -1, "today": 0, "tonight": 0, "tomorrow": 1}
                out.append(_offset(anchor, n[word], "day", expr))
            elif g["ago"]:
                out.append(_offset(anchor, -count_of(g["n"]), g["unit"].lower(), expr))
            elif g["inn"]:
                out.append(_offset(anchor, count_of(g["n2"]), g["unit2"].lower(), expr))
            elif g["rel"]:
                out.append(_relative(expr, g["which"], g["span"], anchor))
            elif g["year"]:
                y = int(g["y4"])
                out.append(TimeRef(expr, date(y, 1, 1), date(y, 12, 31), "year"))
        except (ValueError, OverflowError):
            continue
    return tuple(out)


_FAR = date(9000, 1, 1)  # an anchor no relative expression of a real text can mean


def absolute(text: str) -> tuple[TimeRef, ...]:
    """The expressions of `text` that name a time by themselves ("8 May 2023", "May 2023",
    "in 2022"), not relative to an anchor: those `resolve` places the same against any
    anchor, found by resolving against a far one and keeping what did not move there."""
    return tuple(r for r in resolve(text, _FAR) if r.end.year < _FAR.year - 100)


def untimed(text: str, *, names: bool = True) -> str:
    """`text` with every date expression `resolve` recognises ("last week", "May 2024",
    "2024-05-08") blanked out. A time a question names is matched as a time, never as words
    ("last" in "Last month I sold my bike" is no answer to "what did Alice say about the vase
    last week?"; "two months ago" is no topic the vault lacks). The name of a season or a
    holiday stays ("last Christmas" leaves "Christmas", "summer 2021" "summer"): it is a
    topic as well as a time, and a turn about last summer's hike is evidence for a question
    about "the hike in summer 2021" even where the two disagree on the year (LoCoMo conv-42
    has such a question); `names=False` blanks it too, as a statement's clause is read
    without its dates (conversation/statements.py)."""
    return _PATTERN.sub(_blank if names else " ", text)


def _blank(m: re.Match[str]) -> str:
    name = m.group("hn1") or m.group("hn2") or m.group("sn1") or m.group("sn2")
    return f" {name} " if name else " "
