"""The query log's document frequencies, `query_df` and `word_df`, kept bounded (learning v13).

`LearnedState.query_df` (the phrases of logged queries, topic.py) and `word_df` (their stems,
expansion.py) count, per key, the searches whose query held it. Every distinct query an agent
sends adds keys, so before v13 they grew with use forever (session 29, NOTES-GROW.md: 10^5
generated questions left ~0.5 M phrases and ~0.2 M words, the bulk of the file and of the
memory of every process that opens it).

The rule, applied by `apply` (state.py) inside the search event that crosses the bound, so a
replay makes the same cuts at the same events (`replay == live`), and a kill -9 leaves either
the event and its cut or neither (one SQLite transaction, ledger.py):

- Each table may hold `query_log_capacity` keys (LearningParams); once it holds more than
  1.25 x that, keys are forgotten down to the capacity, as the co-use pairs are (state.py
  `_evict_pairs`): the slack makes a cut's cost (a sort of the table, a read of every bag)
  amortised over a quarter of the capacity's new keys. When the held keys (below) alone
  pass the capacity, a cut keeps more than it; the next cut comes a quarter of the capacity
  of new keys past what it kept (`LearnedState.terms_kept`), not at every search.
- Kept whatever the count: a key some note's bag holds (a phrase of `use_terms` or
  `skip_terms`, a stem of `use_words`): what a note was used or passed over for is what the
  topic gate and the expansion channel match a new query against (replay.py), and a held
  key forgotten would turn a match into an unseen word; and a key of an open session's
  queries (its end counts them into the bags). Bags are capped per note (`terms_cap`) and an
  open session's events by `session_bytes`, so a table holds at most 1.25 x the capacity
  plus what was held at its last cut.
- Forgotten first: the smallest count, then the least recently logged (the seq of the last
  search that held the key: `query_last`, `word_last`), then by key. A frequency table
  with a fixed budget keeps the frequent keys (Metwally, Agrawal & El Abbadi 2005, "Efficient
  computation of frequent and top-k elements in data streams", ICDT; Manku & Motwani 2002,
  "Approximate frequency counts over data streams", VLDB), and among equals the recent ones,
  as a cache would.

What it costs: a forgotten key reads as never logged. Its idf was ln(1 + N/df); a key logged
once has idf ln(1 + N), the weight an unseen one gets (topic.py, expansion.py), so for the
keys that go first the query's total weight is unchanged; what changes is that an unseen
phrase is judged by its words (a new pairing) and an unseen word is no match, which no note's
bag can hold for a kept key alone. `LearnedState.terms_forgotten` counts the keys forgotten
(`rmh doctor`'s learning section, `query_log`). Pure and deterministic: sorted, no clock.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["forget_rare"]


def forget_rare(df: dict[str, int], last: dict[str, int], held: Iterable[str],
                capacity: int, floor: int = 0) -> tuple[list[str], int]:
    """Past `floor` + capacity // 4 keys (`floor`: the keys the table's last cut kept, at
    least `capacity`), forget the rarest unheld keys from `df` and `last` (in place) down to
    `capacity` (module docstring). The keys forgotten, sorted, and the new floor: the keys
    the cut kept (more than `capacity` when more are held), else `floor` unchanged."""
    if len(df) <= max(capacity, floor) + capacity // 4:
        return [], floor
    kept = set(held)
    free = sorted((df[k], last.get(k, 0), k) for k in df if k not in kept)
    gone = sorted(k for _, _, k in free[: max(0, len(df) - capacity)])
    for k in gone:
        del df[k]
        last.pop(k, None)
    return gone, len(df)
