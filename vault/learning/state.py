"""Learned state as a fold over the event log: `apply(state, event, params)` is the only writer.

The state is an accumulator: `apply` updates it in place and returns the keys it touched, so
the ledger can write exactly those rows in the event's own transaction. It reads no clock (the
event carries its time) and depends on no dict or set order (every loop runs over sorted keys),
so folding the same events always yields bit-identical numbers: `replay == live`.

Event kinds and payloads (`Event.data`):
    start   {"pid": int, "pid_start": int, "pid_ns": str, "lock": bool}  (optional) its process
    end     {"recovered": bool, "answered": [ids]}         evidence applied (once), closed
    search  {"shown": [[id, rank, p]...], "spread": [[id, boost]...]}
    read    {"spread": [...]}                   note = the note read
    write   {"created": bool, "linked": [ids], "spread": [...]}   note = the note written
    delete  {}                                  note = the deleted note: its rows are removed
    prune   {"notes": [ids]}                    notes missing from the index: rows removed
    archive {"reason": str} / restore {}        reversible forgetting flags
`spread` is the spreading-activation boost computed from the link graph at the time of the
event (vault/learning/activation.py); logging it makes replay independent of later graph changes.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np

from .asked import add_queries
from .ended import forget_ended, shown_by_open
from .evidence import score, skip_weight, use_weight
from .expansion import asking_queries, query_words
from .formulas import SECONDS_PER_DAY, LearningParams, accumulate, decayed, pair_strength
from .query_log import forget_rare
from .rewards import SOURCES, Event, session_rewards
from .topic import add_terms, query_terms

__all__ = [
    "SOURCES",
    "Event",
    "LearnedState",
    "NoteState",
    "Pair",
    "SessionState",
    "Touched",
    "apply",
]


@dataclass(slots=True)
class NoteState:
    """Everything learned about one note."""

    q: float  # the learned score in [-neg_scale, 1] (evidence.py); 0 = neutral
    q_updates: int = 0  # ended sessions that changed q
    activation: float = 0.0
    as_of: float = 0.0
    accesses: int = 0
    sessions: int = 0
    shown: int = 0  # impressions (exposure)
    seen: int = 0  # searches with the note among the co-occurrence top
    recalled: int = 0  # ended sessions that used the note after retrieving it
    archived_at: float | None = None
    used: float = 0.0  # S: summed success weight (evidence.py)
    skipped: float = 0.0  # F: summed examined-and-not-used weight
    use_terms: dict[str, int] = field(default_factory=dict)  # topic.py: what it was used for
    skip_terms: dict[str, int] = field(default_factory=dict)  # ...and passed over for
    use_words: dict[str, int] = field(default_factory=dict)  # expansion.py: their stems
    use_queries: dict[str, int] = field(default_factory=dict)  # asked.py: text -> last seq


@dataclass(slots=True)
class Pair:
    """Co-occurrence of notes a < b: searches showing both among the top, and the last time."""

    count: int
    last_t: float


@dataclass
class SessionState:
    started: float
    last_t: float
    ended: float | None = None
    recovered: bool = False
    end_seq: int = 0  # the seq of its end event (ended.py: the oldest-ended go first)


@dataclass
class LearnedState:
    notes: dict[int, NoteState] = field(default_factory=dict)
    pairs: dict[tuple[int, int], Pair] = field(default_factory=dict)
    note_sessions: set[tuple[int, str]] = field(default_factory=set)
    sessions: dict[str, SessionState] = field(default_factory=dict)
    open_events: dict[str, list[Event]] = field(default_factory=dict)
    rewards: dict[str, tuple[int, float]] = field(default_factory=dict)  # source -> (n, sum)
    gone: set[int] = field(default_factory=set)  # deleted notes open sessions were shown
    searches: int = 0
    last_seq: int = 0
    query_df: dict[str, int] = field(default_factory=dict)  # term -> searches holding it
    word_df: dict[str, int] = field(default_factory=dict)  # stem -> searches holding it
    query_last: dict[str, int] = field(default_factory=dict)  # term -> seq of its last search
    word_last: dict[str, int] = field(default_factory=dict)  # stem -> seq of its last search
    terms_forgotten: int = 0  # query_df and word_df keys forgotten (query_log.py)
    terms_kept: tuple[int, int] = (0, 0)  # keys of query_df, word_df kept at their last cut
    sessions_forgotten: tuple[int, int] = (0, 0)  # ended rows forgotten, of them recovered


@dataclass
class Touched:
    """Keys whose rows changed; a key absent from the state afterwards means delete its row."""

    notes: set[int] = field(default_factory=set)
    pairs: set[tuple[int, int]] = field(default_factory=set)
    note_sessions: set[tuple[int, str]] = field(default_factory=set)
    sessions: set[str] = field(default_factory=set)
    sources: set[str] = field(default_factory=set)
    gone: set[int] = field(default_factory=set)
    terms: set[str] = field(default_factory=set)  # query_df keys
    words: set[str] = field(default_factory=set)  # word_df keys
    rewarded: dict[int, dict[str, float]] = field(default_factory=dict)  # end: note -> rewards


def _note(state: LearnedState, note: int, params: LearningParams, touched: Touched) -> NoteState:
    if note in state.gone:  # an id seen again is a live note again (ids may be reused)
        state.gone.discard(note)
        touched.gone.add(note)
    touched.notes.add(note)
    ns = state.notes.get(note)
    if ns is None:
        ns = state.notes[note] = NoteState(q=0.0)
    return ns


def _counting(state: LearnedState, session: str | None) -> bool:
    """Whether an activation in `session` may count one more session for its note: only
    while the session is open. Its (note, session) rows dedupe the count; they go when the
    session ends (`_end`), so the rows held are the open sessions' alone, not one per note
    per session ever (LEARNING_VERSION 12)."""
    info = state.sessions.get(session) if session is not None else None
    return info is not None and info.ended is None


def _activate(
    state: LearnedState, ev: Event, params: LearningParams, touched: Touched, seeds: list[int]
) -> None:
    session = ev.session if _counting(state, ev.session) else None
    for note in sorted(set(seeds)):
        ns = _note(state, note, params, touched)
        _decay_to(ns, ev.t, params)
        ns.accesses += 1
        if session is not None and (note, session) not in state.note_sessions:
            state.note_sessions.add((note, session))
            touched.note_sessions.add((note, session))
            ns.sessions += 1
    for note, boost in ev.data.get("spread", []):
        ns = _note(state, int(note), params, touched)
        _decay_to(ns, ev.t, params)
        ns.activation = accumulate(ns.activation, float(boost))


def _decay_to(ns: NoteState, t: float, params: LearningParams) -> None:
    """Decay the stored activation to time t (never backwards) and stamp it as of then. With
    nothing to decay the stamp is t itself: a note first warmed before 1970 (a clock pinned
    there) was stamped 0.0, the default, and its warmth did not decay until 1970."""
    if ns.activation == 0.0:
        ns.as_of = t
        return
    ns.activation = decayed(ns.activation, t - ns.as_of, ns.accesses, ns.sessions, params)
    ns.as_of = max(ns.as_of, t)


def _search(state: LearnedState, ev: Event, params: LearningParams, touched: Touched) -> None:
    shown = sorted((rank, note) for note, rank, _ in ev.shown())
    for _, note in shown:
        _note(state, note, params, touched).shown += 1
    top = sorted({note for rank, note in shown if rank < params.cooc_top})
    state.searches += 1
    for term in query_terms(str(ev.data.get("query", ""))):
        state.query_df[term] = state.query_df.get(term, 0) + 1
        state.query_last[term] = ev.seq
        touched.terms.add(term)
    for word in query_words(str(ev.data.get("query", ""))):
        state.word_df[word] = state.word_df.get(word, 0) + 1
        state.word_last[word] = ev.seq
        touched.words.add(word)
    _forget_terms(state, params, touched)
    for note in top:
        state.notes[note].seen += 1
    for i, a in enumerate(top):
        for b in top[i + 1 :]:
            key = (a, b)  # one tuple shared by the state, `touched` and the pair table
            pair = state.pairs.get(key)
            if pair is None:
                state.pairs[key] = Pair(1, ev.t)
            else:
                pair.count += 1
                pair.last_t = max(pair.last_t, ev.t)
            touched.pairs.add(key)
    _evict_pairs(state, ev.t, params, touched)
    _activate(
        state, ev, params, touched, [note for rank, note in shown if rank < params.activation_top]
    )


def _evict_pairs(
    state: LearnedState, t: float, params: LearningParams, touched: Touched
) -> None:
    """Past 1.25 x capacity, forget the weakest pairs down to capacity (formulas.py)."""
    cap = params.cooc_capacity
    if len(state.pairs) <= cap + cap // 4:
        return
    keys = sorted(state.pairs)
    count = np.array([state.pairs[k].count for k in keys], dtype=np.float64)
    last = np.array([state.pairs[k].last_t for k in keys], dtype=np.float64)
    strength = pair_strength(count, (t - last) / SECONDS_PER_DAY, params)
    weakest = np.argsort(strength, kind="stable")[: len(keys) - cap]  # keys sorted: ties (a, b)
    for i in sorted(weakest.tolist()):
        del state.pairs[keys[i]]
        touched.pairs.add(keys[i])


def _forget_terms(state: LearnedState, params: LearningParams, touched: Touched) -> None:
    """Keep the query log's df tables bounded (query_log.py), keeping the keys the notes' bags
    hold and those of the open sessions' queries (their end counts them into bags). What is
    held is read only when a table is past its bound (generators, read as sets)."""
    notes, cap = state.notes.values(), params.query_log_capacity
    opened = state.open_events.values()
    terms, kept_terms = forget_rare(state.query_df, state.query_last, itertools.chain(
        (t for ns in notes for bag in (ns.use_terms, ns.skip_terms) for t in bag),
        (t for evs in opened for e in evs if e.kind == "search"
         for t in query_terms(str(e.data.get("query", ""))))), cap, state.terms_kept[0])
    words, kept_words = forget_rare(state.word_df, state.word_last, itertools.chain(
        (w for ns in notes for w in ns.use_words),
        (w for evs in opened for e in evs if e.kind == "search"
         for w in query_words(str(e.data.get("query", ""))))), cap, state.terms_kept[1])
    state.terms_kept = (kept_terms, kept_words)
    touched.terms.update(terms)
    touched.words.update(words)
    state.terms_forgotten += len(terms) + len(words)


def _forget(state: LearnedState, notes: list[int], touched: Touched) -> None:
    """A deleted note's rows go; a tombstone only where an open session was shown it
    (ended.py)."""
    drop = set(notes)
    shown = shown_by_open(state.open_events) if drop else set()
    for note in sorted(drop):
        state.notes.pop(note, None)
        touched.notes.add(note)
        if note in shown:
            state.gone.add(note)
            touched.gone.add(note)
    for key in sorted(k for k in state.pairs if k[0] in drop or k[1] in drop):
        del state.pairs[key]
        touched.pairs.add(key)
    for ns_key in sorted(k for k in state.note_sessions if k[0] in drop):
        state.note_sessions.discard(ns_key)
        touched.note_sessions.add(ns_key)


def _end(state: LearnedState, ev: Event, params: LearningParams, touched: Touched) -> None:
    session = ev.session
    if session is None or session not in state.sessions or state.sessions[session].ended:
        return  # unknown or already ended: applying twice changes nothing
    events = state.open_events.pop(session, [])
    outcome = session_rewards(
        events, lambda n: state.notes[n].recalled if n in state.notes else 0, params,
        answered=[int(n) for n in ev.data.get("answered", [])],
    )
    asked: dict[int, list[str]] = {}  # note -> the queries of the searches that showed it
    for e in events:
        for note, _, _ in e.shown() if e.kind == "search" else []:
            asked.setdefault(note, []).append(str(e.data.get("query", "")))
    asking = asking_queries(events)
    for note in sorted(set(outcome.signals) | set(outcome.passed)):
        if note in state.gone:
            continue
        ns = _note(state, note, params, touched)
        by_source = dict(outcome.signals.get(note, {}))
        about = sorted({t for q in asked.get(note, []) for t in query_terms(q)})
        if note in outcome.passed:
            f = skip_weight(outcome.passed[note], ns.used, ns.skipped, params)
            by_source["skipped"] = -f
            ns.skipped += f
            add_terms(ns.skip_terms, about, params.terms_cap)
        else:
            ns.used += use_weight(sum(by_source[s] for s in sorted(by_source)), params)
            add_terms(ns.use_terms, about, params.terms_cap)
            words = {w for q in asking.get(note, []) for w in query_words(q)}
            add_terms(ns.use_words, sorted(words), params.terms_cap)
            add_queries(ns.use_queries, asking.get(note, []), ev.seq, params.queries_cap)
        touched.rewarded[note] = dict(sorted(by_source.items()))
        for source in sorted(by_source):
            n, total = state.rewards.get(source, (0, 0.0))
            state.rewards[source] = (n + 1, total + by_source[source])
            touched.sources.add(source)
        before = ns.q
        ns.q = score(ns.used, ns.skipped, params)
        ns.q_updates += int(ns.q != before)
    for note in sorted(outcome.used - state.gone):
        _note(state, note, params, touched).recalled += 1
    info = state.sessions[session]
    info.ended, info.end_seq = ev.t, ev.seq
    for ns_key in sorted(k for k in state.note_sessions if k[1] == session):
        state.note_sessions.discard(ns_key)
        touched.note_sessions.add(ns_key)
    info.recovered = bool(ev.data.get("recovered", False))
    _bound_ended(state, params, touched)


def _bound_ended(state: LearnedState, params: LearningParams, touched: Touched) -> None:
    """After an end: the tombstones no open session needs go, and the oldest-ended
    sessions' rows past the capacity (ended.py)."""
    if state.gone:
        unneeded = sorted(state.gone - shown_by_open(state.open_events))
        state.gone.difference_update(unneeded)
        touched.gone.update(unneeded)
    bound = params.session_capacity + params.session_capacity // 4
    if len(state.sessions) <= bound:  # no more ended than rows: no count needed
        return
    ended = [(info.end_seq, sid) for sid, info in state.sessions.items() if info.ended is not None]
    count = len(ended)
    forgotten, recovered = state.sessions_forgotten
    for sid in forget_ended(ended, count, params.session_capacity):
        recovered += int(state.sessions.pop(sid).recovered)
        forgotten += 1
        touched.sessions.add(sid)
    state.sessions_forgotten = (forgotten, recovered)


def apply(state: LearnedState, ev: Event, params: LearningParams) -> Touched:
    """Fold one event into the state (in place); returns the keys whose rows changed."""
    touched = Touched()
    state.last_seq = max(state.last_seq, ev.seq)
    s = ev.session
    if s is not None and ev.kind != "end":
        info = state.sessions.get(s)
        if info is None:
            state.sessions[s] = SessionState(started=ev.t, last_t=ev.t)
            state.open_events[s] = []
        else:
            info.last_t = max(info.last_t, ev.t)
        touched.sessions.add(s)
        if state.sessions[s].ended is None and ev.kind != "start":
            state.open_events[s].append(ev)
    if ev.kind == "end":
        if s is not None:
            touched.sessions.add(s)
        _end(state, ev, params, touched)
    elif ev.kind == "search":
        _search(state, ev, params, touched)
    elif ev.kind in ("read", "write") and ev.note is not None:
        _activate(state, ev, params, touched, [ev.note])
    elif ev.kind == "delete" and ev.note is not None:
        _forget(state, [ev.note], touched)
    elif ev.kind == "prune":
        _forget(state, [int(n) for n in ev.data.get("notes", [])], touched)
    elif ev.kind == "archive" and ev.note is not None:
        _note(state, ev.note, params, touched).archived_at = ev.t
    elif ev.kind == "restore" and ev.note is not None and ev.note in state.notes:
        _note(state, ev.note, params, touched).archived_at = None
    return touched
