"""A query that asks for a time and nothing else: the time is its topic.

"What happened on 8 May 2024?", "What did we talk about last week?", "What was I up to
yesterday?" name a time and no topic. The topic channels match their frame words
("happened", "talk") against whatever notes use them, and the time prior (when.py) only
lifts notes those channels found, so the notes of that day were not found and the search
declined. For such a query the time becomes a channel of its own, fused like the others
(weighted RRF, Cormack et al. 2009), so that the notes dated in the named time are
candidates whatever their words:

    t(d) = m(d) over every eligible note (when.py `closeness` of the note's date, its
           frontmatter date or a YYYY-MM-DD in its file name), weight W_t = Σ of the weights
           of the channels that ran (so the time has as much say as all words together);

and whether anything relevant was found is whether a note of the head lies in the named time
(relevance.py). Its own expressions ("Last month I sold my bike") still count for the head
through the time prior, not for this scan (reading every note's text would cost what the
vault costs, per query).

Which queries are topicless: times_asked.py `topicless`.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date, datetime

import numpy as np
import numpy.typing as npt

from ..notes.times_asked import asked_alone
from ..plural import counted
from ..storage.corpus import Corpus
from .anchored import anchored
from .when import SLACK, closeness_days, note_days

F64 = npt.NDArray[np.float64]


def time_scores(corpus: Corpus, query: str, now: date) -> F64 | None:
    """t(d) of the module docstring for every note (eligibility is the pipeline's later
    mask), or None when the query is not topicless or names no time that is over by
    `now`."""
    asked = asked_alone(query, now)
    if not asked:
        return None
    days = note_days(corpus)
    return closeness_days(anchored(asked, days, now, SLACK)[0], days)


def time_channel(sig: dict[str, F64], weights: dict[str, float], corpus: Corpus, query: str,
                 now: date | None, weight: float) -> str:
    """Add the time channel `t` to `sig` and `weights` (as "time") for a topicless query
    that names a time; the receipt line. `weight` is the time prior's (`weights.when`):
    0 turns both off."""
    if weight <= 0 or now is None:
        return "skipped: weight 0" if weight <= 0 else "skipped: no date the query is asked on"
    if isinstance(now, datetime):  # a date by type, but one minus a date is a TypeError
        now = now.date()
    t = time_scores(corpus, query, now)
    if t is None:
        return "skipped: the query names a topic or no time"
    held = int(np.count_nonzero(t))
    sig["time"] = t  # all zeros too: then nothing is relevant (relevance.py), not the words
    weights["time"] = channel_weight(weights, sig)
    return f"ran ({counted(held, 'note')} dated near the time named, weight {weights['time']:g})"


def channel_weight(weights: Mapping[str, float], sig: Mapping[str, F64]) -> float:
    """W_t: the sum of the weights of the channels that ran (1.0 each without a weight, as
    fusion.py `fuse` counts them), 1.0 when none ran."""
    total = sum(weights.get(name, 1.0) for name in sig if name != "time")
    return total if total > 0 else 1.0
