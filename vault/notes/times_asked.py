"""The times a query names, read against the day it is asked on, and whether it names
anything else; the standard library only (the prompt hook's own path imports it: no numpy).

`asked_ranges`: the ranges a query names (retrieval/when.py's docstring: the time prior) —
"in the last/past N units" = [now - N units, now], then the expressions of notes/clocks.py
`resolve` that are over by `now` (a count of weeks, "two weeks ago", widened to the week
around its day: `weeks_wide`), then the times a question names without a year or a "last"
(`_LOOSE`: "on 8 May", "May 8th", "in March", "on Monday", "at Christmas", "for
Thanksgiving", "on Valentine's Day", "in Q1", "for the first half": notes/quarters.py),
each the latest such time that is over by `now` (a
question asks about the past: "What did I buy in March?" asked in June is this March, asked
in February last year's, asked in March none, as a time still running is none; "on Monday"
asked on a Monday is the Monday before; "at Christmas" asked on 25 December is last year's).
A holiday needs a preposition before it and no noun after it ("the Christmas party",
"Halloween costumes" are things). A bare year ("What did I do 2019?") is read when it ends a
clause (punctuation or the end follows) and is over; one a word follows ("2019 steps", "the
2019 election") or a sign or a hyphen precedes ("$2019", "pre-1920") is not; "in/during
2019" is `resolve`'s. A season needs a "last"/"this"/"next" or a year ("summer camp", "plans
for the summer" are no time). Only a question is read so: a note saying "on Monday" may mean
the next one, "I love Christmas" names no day, so notes keep `resolve`'s rules.
The first MAX_ASKED distinct ranges count (`distinct`: a hostile query naming ten thousand
dates costs what MAX_ASKED of them do).

`topicless`: "What happened on 8 May 2024?", "What did we talk about last week?", "What was
I up to yesterday?" name a time and no topic. A query is topicless when its content terms
outside its date expressions (`untimed_asked`), compared by stem, are all FRAME words: verbs
and nouns that ask what happened ("happen", "talk", "discuss", "say", "mention", "work on",
"anything", "summary", "notes"). FRAME is a fixed English list, like the stop words
(notes/text.py): a language without one keeps the ordinary search. A query that names a time
and a topic ("the vase in May") is not topicless: its words decide, and the time lifts
(retrieval/when.py). `asked_alone`: the times a topicless query names that are over
(retrieval/topicless.py makes them the query's topic).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from datetime import date, timedelta

from .clocks import (
    MONTH_NAMES,
    WEEKDAYS,
    TimeRef,
    absolute,
    count_of,
    month_number,
    month_range,
    resolve,
    untimed,
)
from .occasions import HOLIDAY_NAMES, latest_holiday
from .quarters import PATTERN as QUARTERS
from .quarters import quarter_range
from .text import content_terms, stems, tokenize

MAX_ASKED = 8  # ranges read from a query (`distinct`)
_UNITS = {"day": 1, "week": 7, "month": 30, "year": 365}
_PAST = re.compile(r"\b(?:in|over|during|within)\s+the\s+(?:last|past)\s+(?:(?P<n>\d{1,3}|"
                   r"two|three|four|five|six|seven|eight|nine|ten|few|couple of)\s+)?"
                   r"(?P<unit>day|week|month|year)s?\b(?!\s+of\b)", re.IGNORECASE)
_MON = "(?:" + MONTH_NAMES + ")"
_WEEKS_AGO = re.compile(r"weeks?\s+ago$", re.IGNORECASE)
_PREP = "on|at|for|during|over|around|since|after|before|until|till|by|from|through"
_HOL_NOUN = (  # "the Christmas party" is a thing, not the day
    r"\s+(?:party|parties|tree|trees|dinner|dinners|lunch|gift|gifts|present|presents|card|"
    r"cards|movie|movies|film|films|song|songs|music|sweater|sweaters|decoration|decorations|"
    r"lights|market|markets|break|vacation|holidays?|costume|costumes|candy|egg|eggs|hunt|"
    r"bunny|special|episode|sale|sales|shopping|list|menu|tradition|traditions|spirit|season|"
    r"cookies?|parade|fireworks)\b")
_ORD = r"(?:st|nd|rd|th)?"
_LOOSE = re.compile(  # read on what `untimed` leaves: a full date was read already
    r"\b(?:(?P<d1>\d{1,2})" + _ORD + r"\s+(?:of\s+)?(?P<m1>" + _MON + r")"
    r"|(?P<m2>" + _MON.replace("|may|", "|(?-i:May)|") + r")\.?\s+(?P<d2>\d{1,2})" + _ORD
    + r"(?!\d)"  # "may 3" is as often the verb: the month before a day only as "May"
    r"|(?:in|during|through|throughout|early|late|mid)\s+(?:-\s*)?(?P<m3>" + _MON + r")"
    r"|on\s+(?P<wd>" + "|".join(WEEKDAYS) + r")(?!\s+(?:morning|afternoon|evening|night)s\b)"
    # "on Saturday mornings" is a habit, no day
    # the longest name, atomic: "Christmas Eve dinner" is a thing, not "Christmas" + "Eve dinner"
    r"|(?:" + _PREP + r")\s+(?:the\s+)?(?P<hol>(?>(?:" + HOLIDAY_NAMES + r")\b))"
    r"(?!" + _HOL_NOUN + r")"
    r"|(?P<qtr>" + QUARTERS + r")"  # before a bare year: "Q3 2025" is the quarter
    r"|(?<![$\u20ac\u00a3#/.,'-])(?P<yr>19\d{2}|20\d{2}|2100)(?=\s*(?:[?!;:)]|[.,](?!\d)|$))"
    r")\b(?!,?\s*\d)",
    re.IGNORECASE)


@functools.lru_cache(maxsize=256)  # when.py and topicless.py read it for one query
def asked_ranges(query: str, now: date) -> tuple[TimeRef, ...]:
    """The ranges `query` names, resolved against `now` (module docstring): "in the last N
    units" first (then its words are not read again as "last month"), then those of `resolve`
    that are over by `now` (end before it). A time still running or to come ("today", "this
    week", "tonight", "next Friday") is left out: in a prompt it is mostly an instruction
    ("finish the refactor today"), not a question about notes of that time, and would lift
    every note dated today."""
    out: list[TimeRef] = []
    rest, at = [], 0  # the text between the matches, so each character is read once
    for m in _PAST.finditer(query):
        n = m.group("n")
        count = 1 if n is None else count_of(n)
        back = min(count * _UNITS[m.group("unit").lower()], (now - date.min).days)
        start = now - timedelta(days=back)  # no earlier than 1 January of year 1
        out.append(TimeRef(m.group(0), start, now, "day"))
        rest.append(query[at:m.start()])
        at = m.end()
    rest.append(query[at:])
    text = " ".join(rest)
    over = (weeks_wide(r) for r in resolve(text, now) if r.end < now)
    return distinct((*out, *over, *loose(untimed(text, names=False), now)), MAX_ASKED)


@functools.lru_cache(maxsize=256)
def by_calendar(expr: str) -> bool:
    """Whether a time expression names its time by the calendar (a month, a day, a year, a
    holiday, a weekday: "March 2026", "2026-03-19", "in March", "on Monday", "at
    Christmas"), whose bounds are the calendar's, rather than counting from the day it is
    asked ("two weeks ago", "last week", "in the last 30 days"), which people count loosely
    (retrieval/when.py EDGE)."""
    return bool(absolute(expr)) or _LOOSE.search(expr) is not None


def weeks_wide(ref: TimeRef) -> TimeRef:
    """A count of weeks asked about ("two weeks ago") as the week around that day: `resolve`
    makes it one day, to place a turn's event, but a question counting in weeks is as loose
    as its unit, as "two months ago" is a whole month; so the day half a week either side."""
    if ref.granularity != "day" or not _WEEKS_AGO.search(ref.expr):
        return ref
    return TimeRef(ref.expr, ref.start - timedelta(days=3), ref.end + timedelta(days=3), "week")


def _latest_day(month: int, day: int, now: date) -> date | None:
    """The latest `day` of `month` before `now` (None when no year of the last eight has
    it: 30 February)."""
    for year in range(now.year, now.year - 9, -1):
        try:
            d = date(year, month, day)
        except ValueError:
            continue
        if d < now:
            return d
    return None


def loose(text: str, now: date) -> tuple[TimeRef, ...]:
    """The times of `text` named without a year or a "last" (`_LOOSE`, module docstring),
    each the latest that is over by `now`, in text order."""
    out: list[TimeRef] = []
    for m in _LOOSE.finditer(text):
        expr = m.group(0)
        if m.group("wd"):
            back = (now.weekday() - WEEKDAYS.index(m.group("wd").lower())) % 7 or 7
            d = now - timedelta(days=back)
            out.append(TimeRef(expr, d, d, "day"))
        elif m.group("hol"):
            try:
                d = latest_holiday(m.group("hol"), now)
            except ValueError:  # none before `now` in the calendar (asked in January of year 1)
                continue
            out.append(TimeRef(expr, d, d, "day"))
        elif m.group("qtr"):  # a quarter or a half: as wide as a season (its slack)
            period = quarter_range(m, now)
            if period is not None:
                out.append(TimeRef(expr, *period, "season"))
        elif m.group("yr"):
            year = int(m.group("yr"))
            if year < now.year:
                out.append(TimeRef(expr, date(year, 1, 1), date(year, 12, 31), "year"))
        elif m.group("m3"):  # this year's if over, last year's if to come, none if running
            first, last = month_range(now.year, month_number(m.group("m3")))
            if first > now:
                first, last = month_range(now.year - 1, month_number(m.group("m3")))
            if last < now:
                out.append(TimeRef(expr, first, last, "month"))
        else:
            day = _latest_day(month_number(m.group("m1") or m.group("m2")),
                              int(m.group("d1") or m.group("d2")), now)
            if day is not None:
                out.append(TimeRef(expr, day, day, "day"))
    return tuple(out)


def distinct(refs: Sequence[TimeRef], cap: int) -> tuple[TimeRef, ...]:
    """The first `cap` refs of distinct ranges, in text order (a hostile text naming ten
    thousand dates costs what `cap` of them do)."""
    seen: set[tuple[date, date, str]] = set()
    out = []
    for r in refs:
        key = (r.start, r.end, r.granularity)
        if key not in seen:
            seen.add(key)
            out.append(r)
            if len(out) == cap:
                break
    return tuple(out)


@functools.lru_cache(maxsize=256)  # a search reads it for several stages of one query
def untimed_asked(query: str) -> str:
    """`query` without the words of the times it may name: "in the last N units" and the
    loose times (read here) and the expressions of notes/clocks.py (`untimed`); what remains
    can name a topic (a holiday's or a season's name stays: "What did I get for Christmas?"
    is about Christmas as well as asked of a day)."""
    return _LOOSE.sub(_blank, untimed(_PAST.sub(" ", query)))


def _blank(m: re.Match[str]) -> str:
    """A loose time's words blanked, a holiday's name kept (notes/clocks.py `untimed`)."""
    return f" {m.group('hol')} " if m.group("hol") else " "


FRAME_WORDS = (
    "happen happened happening happens talk talked talking discuss discussed discussion say "
    "said tell told mention mentioned chat chatted speak spoke write wrote written work worked "
    "working anything everything something nothing summary summarize summarise recap note "
    "notes go going went new news thing things stuff event events remember recall show list "
    "find look"
)
FRAME: frozenset[str] = frozenset(stems(FRAME_WORDS.split()))


def topicless(query: str) -> bool:
    """Whether `query`'s content terms outside its date expressions are all FRAME words
    (module docstring); a query with no content term at all is topicless too."""
    return all(s in FRAME for s in stems(content_terms(tokenize(untimed_asked(query)))))


def asked_alone(query: str, now: date) -> tuple[TimeRef, ...]:
    """The times a topicless `query` asks about (`asked_ranges`), () for a query that names a
    topic: what the search's time channel (retrieval/topicless.py), `context` and the prompt hooks
    answer such a query by."""
    return asked_ranges(query, now) if topicless(query) else ()
