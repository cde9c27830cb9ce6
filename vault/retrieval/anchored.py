"""A time named without a year, read against the memory's own days when the latest is empty.

"What broke on Monday?", "What did we decide in March?", "What happened at Christmas?" name
a time without a year: times_asked.py `loose` reads each as the latest such time that is over
by the day the query is asked on. In a memory that is written every day that is what the
asker means. In one whose notes stop before that time (the demo vault, an archive, a project
that ended, a vault copied from a colleague, a replay) the latest Monday holds no note, the
time prior lifts nothing, and the question's own words decide: "what broke on Monday" put a
note about the "Monday incident review" above the note of the outage that happened on a
Monday (session 40). The asker then means the latest such time the memory holds:

    anchored(R) = R                                   when a note is dated within R's slack,
                = the latest earlier R' of the same name holding a note's day
                                                       (at most MAX_BACK periods back),
                = R                                   when no such R' exists,

for each range R a query names *without a year* (a weekday, a month, a day of a month, a
holiday: those `loose` reads); a range with its year, a count ("two weeks ago", "last
week") or "in the last N days" is the asker's own and is never moved. R' is found by reading
R's own expression against the day before R (`loose(expr, start − 1)`: the same name one
period earlier), so it is the same rule that read R. Deterministic: a pure function of the
query, the day and the notes' days.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date, timedelta

import numpy as np
import numpy.typing as npt

from ..notes.clocks import TimeRef
from ..notes.times_asked import loose

MAX_BACK = 520  # periods stepped back at most (ten years of weeks)


def _holds(days: npt.NDArray[np.int64], first: int, last: int) -> bool:
    """Whether the sorted `days` hold a day in [first, last]."""
    at = int(np.searchsorted(days, first, side="left"))
    return at < days.shape[0] and int(days[at]) <= last


def _earlier(ref: TimeRef) -> TimeRef | None:
    """The same name one period before `ref` (`loose` read against the day before it), None
    when the expression does not read so (it is no loose time) or no earlier one exists."""
    if ref.start <= date.min:
        return None
    got = loose(ref.expr, ref.start - timedelta(days=1))
    return got[0] if len(got) == 1 and got[0].end < ref.start else None


def anchored(asked: Sequence[TimeRef], days: npt.NDArray[np.int64], now: date,
             slack: Mapping[str, int]) -> tuple[tuple[TimeRef, ...], tuple[str, ...]]:
    """`asked` with each loose range that holds no note's day (within its slack) moved to the
    latest earlier one of the same name that holds one (module docstring); and the
    expressions moved, for the receipt. `days`: the notes' days as proleptic ordinals
    (negative for a note without one), in any order."""
    known = np.unique(days[days >= 0])
    if known.shape[0] == 0:
        return tuple(asked), ()
    out: list[TimeRef] = []
    moved: list[str] = []
    for ref in asked:
        pad = slack[ref.granularity]
        own = loose(ref.expr, now)
        if (len(own) != 1 or (own[0].start, own[0].end) != (ref.start, ref.end)
                or _holds(known, ref.start.toordinal() - pad, ref.end.toordinal() + pad)):
            out.append(ref)
            continue
        cur: TimeRef | None = ref
        found = None
        for _ in range(MAX_BACK):
            cur = _earlier(cur) if cur is not None else None
            if cur is None or cur.end.toordinal() < int(known[0]):
                break
            if _holds(known, cur.start.toordinal(), cur.end.toordinal()):
                found = cur
                break
        out.append(found if found is not None else ref)
        if found is not None:
            moved.append(ref.expr)
    return tuple(out), tuple(moved)
