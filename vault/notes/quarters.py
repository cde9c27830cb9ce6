"""The quarters and halves of a year a question names: "in Q1", "Q3 2025", "2025-Q3", "the
first quarter of 2024", "during the third quarter", "H2", "in the second half of 2024".

Calendar quarters and halves (Q1 = January to March, ..., Q4 = October to December; H1 =
January to June, H2 = July to December; no fiscal year: whose year starts when is a
company's own). One named with its year is that period; one named without a year is read
as times_asked.py reads "in March": the latest such period that is over by the day asked
(this year's if over, last year's if still running or to come), so retrieval/anchored.py
moves it to an earlier one the notes hold as it moves a month. Without a year it needs a
preposition before it ("in Q1", "for the first half"; a bare "Q1" is as often question 1, a
bare "H2" a heading) and no "of" after it that names something else ("the first half of
the game", "the first quarter of the page"); "of 2024" names its year.

`PATTERN` is a regex fragment with named groups (`quarter_range` reads them), one
alternative of times_asked.py's `_LOOSE`.
"""

from __future__ import annotations

from datetime import date, timedelta
from re import Match

_YEAR = r"(?:19\d{2}|20\d{2}|2100)"
_ORDINALS = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4,
             "4th": 4}
_PREP = r"(?:(?:in|during|over|for|through|throughout|since|after|before|until|by|from)\s+)"


def _named(i: int) -> str:
    """A quarter or a half by its name, its groups numbered `i` ("Q3", "the third quarter")."""
    return (rf"(?:the\s+)?(?:q(?P<qd{i}>[1-4])|(?P<qw{i}>first|second|third|fourth|1st|2nd|3rd|"
            rf"4th)\s+quarter|h(?P<hd{i}>[12])|(?P<hw{i}>first|second|1st|2nd)\s+half)")


PATTERN = (  # with its year ("Q3 2025", "the first half of 2024", "2025-Q3"), then without
    _PREP + "?" + _named(1) + r"(?:\s+of\s+|\s*,\s*|\s+|\s*-\s*)(?P<qy1>" + _YEAR + ")"
    r"|" + _PREP + r"?(?P<qy2>" + _YEAR + r")(?:\s+|\s*-\s*)(?:q(?P<qd2>[1-4])|h(?P<hd2>[12]))"
    r"|" + _PREP + _named(3) + r"(?:\s+of\s+the\s+year)?(?!\s+of\b)"
    r"(?!\s+(?:heading|header|title|tag|element|level)s?\b)"
)


_GROUPS = {4: ("qd1", "qw1", "qd2", "qd3", "qw3"), 2: ("hd1", "hw1", "hd2", "hd3", "hw3")}


def period_range(year: int, part: int, parts: int) -> tuple[date, date]:
    """First and last day of part `part` (1-based) of `year` cut into `parts` equal runs of
    months (4: quarters, 2: halves)."""
    months = 12 // parts
    first = date(year, (part - 1) * months + 1, 1)
    last = (date(year + 1, 1, 1) if part == parts
            else date(year, part * months + 1, 1)) - timedelta(days=1)
    return first, last


def quarter_range(m: Match[str], now: date) -> tuple[date, date] | None:
    """The range a `PATTERN` match names, read against `now` (module docstring); None when it
    is not over by `now` or names no quarter or half (another alternative matched)."""
    g = m.groupdict()
    parts, part = 4, next((g[k] for k in _GROUPS[4] if g.get(k)), None)
    if part is None:
        parts, part = 2, next((g[k] for k in _GROUPS[2] if g.get(k)), None)
    if part is None:
        return None
    n = int(part) if part.isdigit() else _ORDINALS[part.lower()]
    year = g.get("qy1") or g.get("qy2")
    if year is not None:
        first, last = period_range(int(year), n, parts)
    else:  # this year's if over, last year's if running or to come
        first, last = period_range(now.year, n, parts)
        if last >= now and now.year > 1:
            first, last = period_range(now.year - 1, n, parts)
    return (first, last) if last < now else None
