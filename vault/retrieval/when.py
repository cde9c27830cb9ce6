"""The time a query asks about: notes dated in it are lifted (a query-dependent document prior).

"What did I buy four weeks ago?" names a time as well as a topic, and a memory of
conversations or journal notes has a date on every note. LongMemEval's time-aware query
expansion (Wu et al. 2024, "LongMemEval: benchmarking chat assistants on long-term
interactive memory", section 5.4) narrows retrieval to the range a query names and lifts
temporal-reasoning recall; it extracts the range with an LLM. Here the range comes from the
same rules that anchor a turn's own expressions (notes/clocks.py `resolve`: "N days/weeks
ago" is that day, "N months ago" that month, "last week" the previous ISO week, "last
Friday", "yesterday", absolute dates, "last summer", "Christmas 2023", "8/5/2024"),
resolved against `now`, the date the query is asked
on (a parameter: the caller's clock, pinned for replay), plus "in the last/past N units" =
[now - N units, now]. Relevance still decides: the range only scales notes that the other
stages found, as a bounded multiplicative prior (Kraaij, Westerveld & Hiemstra 2002):

    when(d) = final(d) * (1 + w * m(d)),   m(d) = max over the query's ranges R of
              max(0, 1 - dist(d, R) / M_g)  (1 inside R),

for the first HEAD notes of the final order only (the query's first MAX_ASKED distinct ranges,
a note's first MAX_OWN in its first SCAN characters: bounded work whatever the text).
dist(d, R) is the days between R and the note's date (frontmatter `date`, else `updated`,
else `created`: a YAML date, ISO text, "YYYY/MM/DD ..." or any text `resolve` reads as one
day, such as "8 May, 2023"; without one, a YYYY-MM-DD in its file name, as daily notes are
named), or between R and a range one of the note's own expressions
names, resolved against the note's date (the two clocks of NDM: "Last month I sold my bike"
said on 9 May is about April) and no longer than R (a note saying "this year" is no evidence
of a day asked about). M_g, the slack of R's granularity (a day 3, a week 3, a month
or a season 7, a year 30 days), takes people's loose counting ("a week ago" for six days);
outside a range named by the calendar (times_asked.py `by_calendar`: "March 2026", "in March")
m is at most EDGE (a half), so every note inside it goes above every note outside it (a note
of 1 April was lifted x1.86 for "March 2026", as much as the March notes' x2). When no head
note is lifted, a time named without a year moves to the latest such time a head note's day
lies in (anchored.py: "on Monday" asked of notes that stop in March). A note
without a date, a query without a time, or no
`now` leaves every score as it was. w = `weights.when`.
"""

from __future__ import annotations

import hashlib
import re
import threading
import weakref
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from datetime import UTC, date, datetime
from typing import Any

import numpy as np
import numpy.typing as npt

from ..notes.clocks import TimeRef, absolute, resolve
from ..notes.times_asked import asked_ranges, by_calendar, distinct
from ..storage.corpus import Corpus
from .anchored import anchored
from .fusion import top

F64 = npt.NDArray[np.float64]
HEAD = 100
MAX_OWN = 64  # ranges read from a note (`distinct`)
SCAN = 1 << 16  # characters of a note's body read for its own expressions
SLACK = {"day": 3, "week": 3, "month": 7, "season": 7, "year": 30}  # M_g, days
EDGE = 0.5  # E: m's most outside a range named by the calendar (untuned: any E < 1 orders
# the notes inside it first; a half keeps a next-morning note above an undated one)
DATE_KEYS = ("date", "updated", "created")
NO_DAY = -1  # `closeness_days`: a note without a day
_NAME_DAY = re.compile(r"(?<!\d)(\d{4})-(\d{2})-(\d{2})(?!\d)")
_YMD = re.compile(r"^\s*(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})")



def clock_day(seconds: float) -> date | None:
    """The UTC day of a clock reading (Unix seconds); None for no reading (<= 0 or NaN) or one
    no calendar date holds (past 31 December 9999: a replay `as_of` may be any number)."""
    if not seconds > 0:
        return None
    try:
        return datetime.fromtimestamp(seconds, UTC).date()
    except (OverflowError, ValueError, OSError):
        return None


def name_day(path: str) -> date | None:
    """The day a note's file name gives, as daily notes are named ("2023-05-20.md",
    "Journal/2023-05-20 Saturday.md": Obsidian's daily-notes default, YYYY-MM-DD, in the
    name, not its folders): the first that is a calendar day ("2023-03-04 to 2023-03-10":
    4 March); None when the name holds none."""
    for m in _NAME_DAY.finditer(path.rsplit("/", 1)[-1]):
        try:
            return date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
        except ValueError:
            continue
    return None


def note_day(frontmatter: Mapping[str, Any]) -> date | None:
    """The note's date (module docstring), None when it has none that reads as one day."""
    for key in DATE_KEYS:
        day = value_day(frontmatter.get(key))
        if day is not None:
            return day
    return None


def value_day(value: Any) -> date | None:
    """The day one frontmatter value names (a YAML date or datetime, ISO or "YYYY/MM/DD ..."
    text, or any text `absolute` reads as one day), None when it names none, or when its
    first expression is a numeric date that reads as two days ("8/5/2024": notes/occasions.py;
    no day rather than a wrong one)."""
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    if not isinstance(value, str) or not value.strip():
        return None
    m = _YMD.match(value)
    if m:
        try:
            return date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
        except ValueError:
            return None
    days = [r for r in absolute(value) if r.granularity == "day"]
    if len(days) > 1 and days[1].expr == days[0].expr and days[1].start != days[0].start:
        return None
    return days[0].start if days else None


_OWN: OrderedDict[tuple[bytes, date], tuple[TimeRef, ...]] = OrderedDict()
OWN_CACHE = 8192  # notes whose own ranges are kept (keyed by a digest: no body is held)
_LOCK = threading.Lock()


def own_ranges(body: str, day: date) -> tuple[TimeRef, ...]:
    """The first MAX_OWN distinct ranges the note's first SCAN characters name, read against
    its date; memoised by (BLAKE2b of that text, date), least recently used out first, since
    `resolve` costs ~0.6 ms on a 10 KB note and the same notes come back query after query.
    A pure function's cache: the answer never depends on it."""
    text = body[:SCAN]
    key = (hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest(), day)
    with _LOCK:
        got = _OWN.get(key)
        if got is not None:
            _OWN.move_to_end(key)
            return got
    got = distinct(resolve(text, day), MAX_OWN)
    with _LOCK:
        _OWN[key] = got
        while len(_OWN) > OWN_CACHE:
            _OWN.popitem(last=False)
    return got


def _gap(a: tuple[date, date], b: tuple[date, date]) -> int:
    """Days between two inclusive ranges (0 when they overlap)."""
    return max(0, (b[0] - a[1]).days, (a[0] - b[1]).days)


def closeness(asked: Sequence[TimeRef], day: date | None, own: Sequence[TimeRef]) -> float:
    """m(d) of the module docstring for a note dated `day` whose text names `own` (an own
    range longer than the asked one is not evidence of it: "next year" said in December
    contains every day of the year, and was lifting a note x2 for "four weeks ago")."""
    best = 0.0
    for r in asked:
        slack, width = SLACK[r.granularity], (r.end - r.start).days
        spans = ([(day, day)] if day is not None else []) + [
            (o.start, o.end) for o in own if (o.end - o.start).days <= width]
        edge = EDGE if by_calendar(r.expr) else 1.0
        for s in spans:
            gap = _gap((r.start, r.end), s)
            best = max(best, 1.0 if gap == 0 else edge * (1.0 - gap / slack))
    return max(0.0, best)


def closeness_days(asked: Sequence[TimeRef], days: npt.NDArray[np.int64]) -> F64:
    """`closeness(asked, day, ())` for many notes at once: `days` are their days as
    proleptic ordinals (`date.toordinal`), NO_DAY for a note without one (m = 0)."""
    best = np.zeros(days.shape[0], dtype=np.float64)
    for r in asked:
        gap = np.maximum(0, np.maximum(r.start.toordinal() - days, days - r.end.toordinal()))
        edge = EDGE if by_calendar(r.expr) else 1.0
        best = np.maximum(best, np.where(gap == 0, 1.0, edge * (1.0 - gap / SLACK[r.granularity])))
    return np.where(days == NO_DAY, 0.0, np.maximum(best, 0.0))


_DAYS: tuple[weakref.ref[Corpus], npt.NDArray[np.int64]] | None = None
_LOCK = threading.Lock()


def note_days(corpus: Corpus) -> npt.NDArray[np.int64]:
    """Each note's day (when.py `note_day`, else `name_day`) as a proleptic ordinal, NO_DAY
    without one. Reading every note's frontmatter costs ~15 µs a note (1.5 s at 10^5), so the
    last corpus's days are kept (by a weak reference: no corpus is kept alive by them) until
    the next generation. A pure function's cache: the answer never depends on it."""
    global _DAYS
    with _LOCK:
        got = _DAYS
    if got is not None and got[0]() is corpus:
        return got[1]
    days = np.fromiter((day.toordinal() if (day := note_day(fm) or name_day(path)) else NO_DAY
                        for fm, path in zip(corpus.frontmatter, corpus.paths, strict=True)),
                       dtype=np.int64, count=len(corpus))
    days.flags.writeable = False
    with _LOCK:
        _DAYS = (weakref.ref(corpus), days)
    return days


def when_stage(corpus: Corpus, query: str, now: date | None, final: F64,
               eligible: npt.NDArray[np.bool_], weight: float) -> tuple[F64, F64 | None, str]:
    """(final scores with the time prior, the factor per note or None, the receipt line)."""
    if weight <= 0:
        return final, None, "skipped: weight 0"
    if now is None:
        return final, None, "skipped: no date the query is asked on"
    if isinstance(now, datetime):  # a date by type, but one minus a date is a TypeError
        now = now.date()
    asked = asked_ranges(query, now)
    if not asked:
        return final, None, "skipped: the query names no time"
    head = top(final, HEAD, eligible, corpus.paths).tolist()
    days = [note_day(corpus.frontmatter[i]) or name_day(corpus.paths[i]) for i in head]
    factor = _factors(corpus, asked, head, days, final.shape[0], weight)
    moved: tuple[str, ...] = ()
    if not np.any(factor > 1.0):  # nothing found lies in it: the latest time that does
        ordinals = np.array([d.toordinal() for d in days if d is not None], dtype=np.int64)
        asked, moved = anchored(asked, ordinals, now, SLACK)
        if moved:
            factor = _factors(corpus, asked, head, days, final.shape[0], weight)
    lifted = int(np.count_nonzero(factor > 1.0))
    named = "; ".join(f"{r.expr!r} = {r.start.isoformat()}..{r.end.isoformat()}"
                      + (" (the latest the notes found hold)" if r.expr in moved else "")
                      for r in asked)
    return (final * factor, factor,
            f"ran (now {now.isoformat()}: {named}; {lifted} of the first {HEAD} notes lifted, "
            f"up to x{1.0 + weight:g})")


def _factors(corpus: Corpus, asked: Sequence[TimeRef], head: Sequence[int],
             days: Sequence[date | None], n: int, weight: float) -> F64:
    """1 + weight * m(d) for the `head` notes (their `days`), 1 elsewhere."""
    factor = np.ones(n, dtype=np.float64)
    for i, day in zip(head, days, strict=True):
        m = closeness(asked, day, ())
        if day is not None and m < 1.0:  # its own expressions can only bring it nearer
            m = closeness(asked, day, own_ranges(corpus.bodies[i], day))
        factor[i] = 1.0 + weight * m
    return factor
