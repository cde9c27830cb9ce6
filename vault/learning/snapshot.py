"""The base of a compacted ledger: a `LearnedState` as one JSON text, and its erasure.

Retention (compact.py) folds the oldest events of the log into a stored base state and
deletes them; replay is then `fold(events after the base, start=base)`. The base must give
back bit for bit the state that was dumped (JSON floats are written by `repr`, which
round-trips every finite double), including the events of the sessions still open at the
cut (`open_events`: a session's end folds them).

`redact_state` is erasure's rewrite of a base (learning/redact.py does the log's): a base no
longer holds the events it came from, so it cannot be refolded without them; instead every
key and text naming what is erased is dropped from it:
- the rows of an erased note: its `NoteState`, its pairs, its note-session rows, its
  tombstone;
- a query-log term or word (`query_df`, `word_df`, their recency) and a term, word or query
  kept in a note's bags (topic.py, expansion.py, asked.py) that names a string of S, or any
  word of one (a base does not know which query a term came from: a term "launch" of the
  erased query "launch code is unicorn" goes with the whole query, where the log's rewrite
  blanked it);
- a session named by a string of S is renamed, as the log's rewrite renames it;
- the open events it keeps are redacted as the log's are (`redact_event`).
What stays are counts that name nothing (`searches`, the reward totals by source).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import asdict
from typing import Any

from ..storage.mentions import fold
from .expansion import query_words
from .state import Event, LearnedState, NoteState, Pair, SessionState
from .topic import query_terms

Names = Callable[[str], bool]


def _event_json(ev: Event) -> list[Any]:
    return [ev.seq, ev.t, ev.kind, ev.session, ev.note, ev.data]


def dump_state(st: LearnedState) -> tuple[str, str]:
    """The state as two canonical JSON texts (sorted keys and rows): everything but the open
    sessions' events, and those events (read on their own by every state load)."""
    doc = {
        "notes": {str(n): asdict(ns) for n, ns in sorted(st.notes.items())},
        "pairs": [[a, b, p.count, p.last_t] for (a, b), p in sorted(st.pairs.items())],
        "note_sessions": sorted([n, s] for n, s in st.note_sessions),
        "sessions": {s: [i.started, i.last_t, i.ended, i.recovered, i.end_seq]
                     for s, i in sorted(st.sessions.items())},
        "sessions_forgotten": list(st.sessions_forgotten),
        "rewards": {k: list(v) for k, v in sorted(st.rewards.items())},
        "gone": sorted(st.gone),
        "searches": st.searches,
        "last_seq": st.last_seq,
        "query_df": dict(sorted(st.query_df.items())),
        "word_df": dict(sorted(st.word_df.items())),
        "query_last": dict(sorted(st.query_last.items())),
        "word_last": dict(sorted(st.word_last.items())),
        "terms_forgotten": st.terms_forgotten,
        "terms_kept": list(st.terms_kept),
    }
    opened = {s: [_event_json(e) for e in evs] for s, evs in sorted(st.open_events.items())}
    return (json.dumps(doc, sort_keys=True, separators=(",", ":")),
            json.dumps(opened, sort_keys=True, separators=(",", ":")))


def load_open(text: str) -> dict[str, list[Event]]:
    """The open sessions' events `dump_state` wrote."""
    return {str(s): [Event(int(q), float(t), str(k), ss, None if n is None else int(n), dict(d))
                     for q, t, k, ss, n, d in evs] for s, evs in json.loads(text).items()}


def load_state(text: str, opened: str) -> LearnedState:
    """The state `dump_state` wrote (a fresh object every call)."""
    doc = json.loads(text)
    st = LearnedState()
    st.notes = {int(n): NoteState(**d) for n, d in doc["notes"].items()}
    st.pairs = {(int(a), int(b)): Pair(int(c), float(t)) for a, b, c, t in doc["pairs"]}
    # a base dumped before LEARNING_VERSION 14 holds no end seq: 0, as the migration's default
    st.sessions = {str(s): SessionState(float(a), float(b), None if e is None else float(e),
                                        bool(r), int(q[0]) if q else 0)
                   for s, (a, b, e, r, *q) in doc["sessions"].items()}
    forgotten = doc.get("sessions_forgotten", [0, 0])
    st.sessions_forgotten = (int(forgotten[0]), int(forgotten[1]))
    # A base dumped before LEARNING_VERSION 12 holds the rows of ended sessions too: drop them
    # as `_end` now does, so a state loaded from it equals one replayed by this version.
    st.note_sessions = {(int(n), str(s)) for n, s in doc["note_sessions"]
                        if str(s) not in st.sessions or st.sessions[str(s)].ended is None}
    st.open_events = load_open(opened)
    st.rewards = {str(k): (int(n), float(t)) for k, (n, t) in doc["rewards"].items()}
    st.gone = {int(n) for n in doc["gone"]}
    st.searches, st.last_seq = int(doc["searches"]), int(doc["last_seq"])
    st.query_df = {str(k): int(v) for k, v in doc["query_df"].items()}
    st.word_df = {str(k): int(v) for k, v in doc["word_df"].items()}
    # a base dumped before LEARNING_VERSION 13 holds no recency: 0, as the migration's default
    st.query_last = {k: int(doc.get("query_last", {}).get(k, 0)) for k in st.query_df}
    st.word_last = {k: int(doc.get("word_last", {}).get(k, 0)) for k in st.word_df}
    st.terms_forgotten = int(doc.get("terms_forgotten", 0))
    kept = doc.get("terms_kept", [0, 0])
    st.terms_kept = (int(kept[0]), int(kept[1]))
    return st


def _keep(bag: dict[str, int], named: Names) -> dict[str, int]:
    return {k: v for k, v in bag.items() if not named(k)}


def needle_words(needles: Sequence[str]) -> Names:
    """Whether a term, word or stem key holds a word of an erased string: its content tokens
    (topic.py), their stems (expansion.py) and its plain folded words."""
    words = {w for n in needles for t in query_terms(n) for w in t.split()}
    words |= {w for n in needles for w in query_words(n)}
    words |= {w for n in needles for w in fold(n).split()}
    return lambda key: any(w in words for w in key.split())


def redact_state(st: LearnedState, ids: frozenset[int], names: Names, dropped: Names,
                 words: Names, redact: Callable[[Event], Event | None],
                 sessions: dict[str, str]) -> None:
    """Erase in place what the module docstring lists: `names` tests a text against the
    erased strings (whole words), `dropped` whether a kept query goes (named, or cut in the
    beginning of one), `words` whether a key holds a word of one (`needle_words`), `redact`
    is the log's rewrite of one event; `sessions` maps renamed session ids (filled here in
    sorted order, then shared with the log's rewrite so both name a session alike)."""
    for s in sorted(st.sessions):
        if names(s):
            sessions.setdefault(s, f"redacted-base-{len(sessions) + 1}")

    def rename(s: str) -> str:
        return sessions.get(s, s)

    for note in sorted(ids):
        st.notes.pop(note, None)
        st.gone.discard(note)
    st.pairs = {k: p for k, p in st.pairs.items() if k[0] not in ids and k[1] not in ids}
    st.note_sessions = {(n, rename(s)) for n, s in st.note_sessions if n not in ids}
    st.sessions = {rename(s): info for s, info in sorted(st.sessions.items())}
    st.open_events = {rename(s): [e for e in map(redact, evs) if e is not None]
                      for s, evs in sorted(st.open_events.items())}
    st.query_df = _keep(st.query_df, words)
    st.word_df = _keep(st.word_df, words)
    st.query_last = _keep(st.query_last, words)
    st.word_last = _keep(st.word_last, words)
    for ns in st.notes.values():
        ns.use_terms = _keep(ns.use_terms, words)
        ns.skip_terms = _keep(ns.skip_terms, words)
        ns.use_words = _keep(ns.use_words, words)
        ns.use_queries = _keep(ns.use_queries, dropped)
