"""The times a query names, read against the day it is asked on, and whether it names
anything else; the standard library only (the prompt hook's own path imports it: no numpy).

`asked_ranges`: the ranges a query names (when.py's module docstring: the time prior) —
"in the last/past N units" = [now - N units, now], then the expressions of notes/clocks.py
`resolve` that are over by `now`; the first MAX_ASKED distinct ones (`distinct`: a hostile
query naming ten thousand dates costs what MAX_ASKED of them do).

`topicless`: "What happened on 8 May 2024?", "What did we talk about last week?", "What was
I up to yesterday?" name a time and no topic. A query is topicless when its content terms
outside its date expressions (`untimed_asked`), compared by stem, are all FRAME words: verbs
and nouns that ask what happened ("happen", "talk", "discuss", "say", "mention", "work on",
"anything", "summary", "notes"). FRAME is a fixed English list, like the stop words
(notes/text.py): a language without one keeps the ordinary search. A query that names a time
and a topic ("the vase in May") is not topicless: its words decide, and the time lifts
(when.py). `asks_only_time`: topicless and naming a time that is over (topicless.py makes
that time the query's topic).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import date, timedelta

from ..notes.clocks import TimeRef, count_of, resolve, untimed
from ..notes.text import content_terms, stems, tokenize

MAX_ASKED = 8  # ranges read from a query (`distinct`)
_UNITS = {"day": 1, "week": 7, "month": 30, "year": 365}
_PAST = re.compile(r"\b(?:in|over|during|within)\s+the\s+(?:last|past)\s+(?:(?P<n>\d{1,3}|"
                   r"two|three|four|five|six|seven|eight|nine|ten|few|couple of)\s+)?"
                   r"(?P<unit>day|week|month|year)s?\b(?!\s+of\b)", re.IGNORECASE)


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
    over = (r for r in resolve(" ".join(rest), now) if r.end < now)
    return distinct((*out, *over), MAX_ASKED)


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


def untimed_asked(query: str) -> str:
    """`query` without the words of the times it may name: "in the last N units" (read here)
    and the expressions of notes/clocks.py (`untimed`); what remains can name a topic."""
    return untimed(_PAST.sub(" ", query))


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


def asks_only_time(query: str, now: date) -> bool:
    """Whether `query` is topicless and names a time that is over by `now`."""
    return topicless(query) and bool(asked_ranges(query, now))
