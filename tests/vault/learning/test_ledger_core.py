"""The ledger over a real learned.sqlite: durability, sessions, replay, forgetting, health."""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pytest

from vault import LEDGER_FILE, LearningParams, Ledger
from vault.learning import compact as compact_module
from vault.learning import ledger_sql as sql
from vault.learning import replay as replay_module
from vault.learning.evidence import passed_score
from vault.learning.formulas import SECONDS_PER_DAY, edge_weight
from vault.learning.ledger import fold
from vault.learning.state import Event, LearnedState
from vault.storage.linkgraph import undirected


class Clock:
    def __init__(self, t: float = 1_000_000.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / LEDGER_FILE


def shown(*ids: int) -> list[tuple[int, int, float]]:
    return [(n, r, 1.0 / np.log2(r + 2)) for r, n in enumerate(ids)]


def test_each_event_is_committed_before_the_call_returns(path: Path, clock: Clock) -> None:
    led = Ledger.open(path, clock=clock)
    led.on_search("s", "who owns billing", shown(1, 2))
    other = sqlite3.connect(path)  # a second connection sees it: it is committed
    assert other.execute("SELECT kind, session FROM events").fetchall() == [("search", "s")]
    assert other.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        other.execute("UPDATE events SET kind='x'")
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        other.execute("DELETE FROM events")
    other.close()
    led.close()


def test_citation_raises_q_and_passing_over_lowers_it(path: Path, clock: Clock) -> None:
    led = Ledger.open(path, clock=clock)
    led.start_session("s", clock.t)
    led.on_search("s", "q", shown(10, 11, 12))
    led.on_write("s", 99, True, [11])
    assert led.prior([11])[0] == 0.0  # nothing applied before session end
    assert led.end_session("s", clock.t + 5)
    q = {n: led.state.notes[n].q for n in (10, 11, 12)}
    assert q[11] == pytest.approx(1 / 3)  # issue 31: one cite, Beta(0.5 + 1, 1.5): m = 0.5
    assert q[10] < 0.0 and q[12] < 0.0 and q[10] < q[12]  # a rank-0 miss costs more
    assert led.prior([11, 10, 404]).tolist() == pytest.approx([1 / 3, q[10], 0.0])
    events = led.event_counts()
    assert not led.end_session("s", clock.t + 9)  # twice: nothing changes
    assert led.event_counts() == events and led.state.notes[11].q == q[11]
    assert not led.end_session("never-started", clock.t)
    led.close()


def test_dead_session_is_recovered_at_next_start(path: Path, clock: Clock) -> None:
    led = Ledger.open(path, clock=clock)
    led.start_session("dead", clock.t)
    led.on_search("dead", "q", shown(1, 2))
    led.on_read("dead", 2)
    led.close()  # the process "dies": no end event
    later = clock.t + 3600
    led = Ledger.open(path, clock=clock)
    assert led.state.open_events["dead"][-1].kind == "read"
    assert led.start_session("live", later) == ["dead"]
    assert led.state.sessions["dead"].recovered
    assert led.state.notes[1].q < 0.0  # passed over while 2 was read (issue 13: 0 neutral)
    assert led.state.notes[2].q > 0.0  # read after being shown
    assert led.health([1, 2], later)["sessions"] == {"open": 1, "ended": 0, "recovered": 1}
    assert led.start_session("other", later + 1) == []  # "live" is not stale yet
    led.close()


def workload(led: Ledger, clock: Clock, seed: int, sessions: int = 12) -> None:
    rng = random.Random(seed)
    graph = undirected([(rng.randrange(30), rng.randrange(30)) for _ in range(40)])
    for s in range(sessions):
        sid = f"s{s}"
        owner = {"pid": 4242, "pid_start": s, "lock": True} if rng.random() < 0.5 else None
        led.start_session(sid, clock.t, owner=owner)
        for _ in range(rng.randrange(1, 5)):
            clock.t += rng.uniform(1, 3 * SECONDS_PER_DAY)
            ids = rng.sample(range(30), 8)
            led.on_search(sid if rng.random() < 0.9 else None, "q", shown(*ids), graph)
            for n in ids[: rng.randrange(0, 3)]:
                led.on_read(sid, n, graph)
            if rng.random() < 0.5:
                led.on_write(sid, rng.randrange(30, 40), rng.random() < 0.5, ids[2:4], graph)
        if rng.random() < 0.2:
            led.on_delete(rng.randrange(30))
        if rng.random() < 0.2:
            led.archive(rng.randrange(30), clock.t)
        if rng.random() < 0.8:  # some sessions die and are recovered later
            answered = rng.sample(range(30), rng.randrange(0, 3))  # the answer used (issue 31)
            led.end_session(sid, clock.t, answered=answered)
        clock.t += 2 * 3600


def test_a_version_2_ledger_is_migrated_and_rebuilt_from_its_events(path: Path,
                                                                     clock: Clock) -> None:
    """A learned.sqlite written by LEARNING_VERSION 2 (schema 1, no evidence columns, its Q
    rows) opens migrated, with every derived row rebuilt from the events by the v3 model."""
    led = Ledger.open(path, clock=clock)
    workload(led, clock, 5, sessions=6)
    events = list(led.events())
    led.close()
    conn = sqlite3.connect(path)
    conn.executescript("CREATE TABLE note2 AS SELECT id, q, q_updates, activation, as_of, "
                       "accesses, sessions, shown, seen, recalled, archived_at FROM note; "
                       "DROP TABLE note; DROP TABLE qterm; DROP TABLE base; "
                       "ALTER TABLE note2 RENAME TO note; ALTER TABLE session DROP COLUMN end_seq; "
                       "UPDATE note SET q = 0.123; PRAGMA user_version = 1; "
                       "UPDATE meta SET value = '{\"version\": 2}' WHERE key = 'stamp';")
    conn.close()
    led = Ledger.open(path, clock=clock)
    assert list(led.events()) == events  # the log is untouched
    assert led.state == fold(events, led.params) == led.replay()
    assert any(ns.used > 0 for ns in led.state.notes.values())
    led.close()


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_replay_equals_live_state_exactly(path: Path, clock: Clock, seed: int) -> None:
    led = Ledger.open(path, clock=clock)
    workload(led, clock, seed)
    live = led.state
    assert led.replay() == live  # bit-identical floats, same keys
    assert fold(led.events(), led.params) == live
    led.close()
    reopened = Ledger.open(path, clock=clock)
    assert reopened.state == live  # the derived tables hold exactly the live state
    assert reopened.rebuild() == live
    assert reopened.health(range(40), clock.t)["missing_rows"] == 0
    reopened.close()


def test_params_change_rebuilds_state_from_events(path: Path, clock: Clock) -> None:
    led = Ledger.open(path, clock=clock)
    workload(led, clock, 7, sessions=4)
    led.close()
    params = LearningParams(use_mean=0.3)
    led = Ledger.open(path, clock=clock, params=params)
    assert led.state == fold(led.events(), params)
    led.close()


def test_two_connections_see_each_others_writes(path: Path, clock: Clock) -> None:
    a = Ledger.open(path, clock=clock)
    b = Ledger.open(path, clock=clock)
    a.start_session("s", clock.t)
    a.on_search("s", "q", shown(1, 2))
    a.on_read("s", 1)
    assert b.end_session("s", clock.t)  # b reloads the state a committed
    assert a.state.notes[2].q < 0.0  # and a sees b's end (issue 13: 0 is neutral)
    assert a.replay() == a.state == b.state
    a.close()
    b.close()


def test_delete_prune_and_missing_rows(path: Path, clock: Clock) -> None:
    led = Ledger.open(path, clock=clock)
    led.on_search(None, "q", shown(1, 2, 3))
    led.on_delete(2)
    assert 2 not in led.state.notes and all(2 not in k for k in led.state.pairs)
    assert led.health([1, 3], clock.t)["missing_rows"] == 0
    assert led.health([1], clock.t)["missing_rows"] > 0  # 3 vanished from the index
    assert led.prune_missing([1], clock.t) == [3]
    assert led.health([1], clock.t)["missing_rows"] == 0
    assert led.replay() == led.state
    led.close()


def test_archive_and_restore_are_reversible_flags(path: Path, clock: Clock) -> None:
    led = Ledger.open(path, clock=clock)
    assert not led.restore(5, clock.t)
    led.archive(5, clock.t, "rule")
    assert led.archived([4, 5]).tolist() == [False, True]
    assert led.restore(5, clock.t + 1)
    assert led.archived([4, 5]).tolist() == [False, False]
    assert led.event_counts() == {"archive": 1, "restore": 1}
    led.close()


def test_warmth_spreads_and_decays(path: Path, clock: Clock) -> None:
    led = Ledger.open(path, clock=clock)
    led.on_read(None, 1, undirected([(1, 2), (2, 3), (3, 4)]))
    w = led.warmth([1, 2, 3, 4])
    # issue 13: cap * 1, 0.6, 0.36 (was 0.05 at every hop: damping inert under the cap)
    assert w.tolist() == pytest.approx([0.05, 0.03, 0.018, 0.0])
    clock.t += 7 * SECONDS_PER_DAY
    later = led.warmth([1, 2, 3, 4])
    assert all(later[:3] < w[:3]) and later[3] == 0.0
    led.close()


def test_cooccurrence_positions_and_hubs(path: Path, clock: Clock) -> None:
    params = LearningParams(cooc_scale=1.0, hub_min_searches=3, hub_share=0.5)
    led = Ledger.open(path, clock=clock, params=params)
    led.on_search(None, "a", shown(1, 2))
    led.on_search(None, "b", shown(3, 4))
    edges = led.cooccurrence([4, 3, 2, 1]).triples()  # positions in the given id order
    assert [(a, b) for a, b, _ in edges] == [(0, 1), (2, 3)]  # undirected, oriented a < b
    assert [w for _, _, w in edges] == pytest.approx([1.0, 1.0])
    led.on_search(None, "c", shown(1, 5))
    led.on_search(None, "d", shown(1, 6))  # 1 is now in 3 of 4 searches: a hub
    assert all(0 not in (a, b) for a, b, _ in led.cooccurrence([1, 2, 3, 4, 5, 6]).triples())
    led.close()


def test_health_pearson_golden_and_newer_schema_refused(path: Path, clock: Clock) -> None:
    from vault import LedgerError
    from vault.learning.health import pearson

    assert pearson([1.0, 2.0, 3.0], [2.0, 4.0, 6.0]) == pytest.approx(1.0)
    assert pearson([1.0, 2.0, 3.0], [3.0, 2.0, 1.0]) == pytest.approx(-1.0)
    assert pearson([1.0, 1.0], [0.0, 5.0]) is None and pearson([1.0], [1.0]) is None
    Ledger.open(path, clock=clock).close()
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version=99")
    conn.close()
    with pytest.raises(LedgerError, match="newer"):
        Ledger.open(path, clock=clock)


def slow_edges(led: Ledger, now: float) -> list[tuple[int, int, float]]:
    """The co-occurrence edges weighed from scratch, one pair at a time (the obvious twin)."""
    st, p = led.state, led.params
    out = []
    for a, b in sorted(st.pairs):
        if a not in st.notes or b not in st.notes:
            continue
        if any(st.searches >= p.hub_min_searches and st.notes[x].seen > p.hub_share * st.searches
               for x in (a, b)):
            continue
        pair = st.pairs[(a, b)]
        w = edge_weight(pair.count, st.notes[a].seen, st.notes[b].seen, st.searches,
                        (now - pair.last_t) / SECONDS_PER_DAY, p)
        if w >= p.cooc_min_weight:
            out.append((a, b, w))
    return out


@pytest.mark.parametrize("seed", [4, 5])
def test_incremental_edges_equal_edges_weighed_from_scratch(
    path: Path, clock: Clock, seed: int
) -> None:
    led = Ledger.open(path, clock=clock)
    for round_ in range(4):  # the pair table is updated between rounds, rebuilt on reopen
        workload(led, clock, seed * 10 + round_, sessions=4)
        got, want = led.edges(clock.t).triples(), slow_edges(led, clock.t)
        assert [(a, b) for a, b, _ in got] == [(a, b) for a, b, _ in want]
        np.testing.assert_allclose([w for *_, w in got], [w for *_, w in want], rtol=1e-12)
        assert got
    led.close()
    again = Ledger.open(path, clock=clock)
    assert [(a, b) for a, b, _ in again.edges(clock.t).triples()] == [(a, b) for a, b, _ in want]
    again.close()


def test_pair_store_is_bounded_and_forgets_the_weakest_first(path: Path, clock: Clock) -> None:
    params = LearningParams(cooc_capacity=12)
    led = Ledger.open(path, clock=clock, params=params)
    for r in range(6):  # pairs of 1-2-3 recur; the others are seen once, older ones first
        clock.t += SECONDS_PER_DAY
        led.on_search(None, "q", shown(1, 2, 3, 10 + 2 * r, 11 + 2 * r))
        assert len(led.state.pairs) <= 12 + 12 // 4
        got, want = led.edges(clock.t).triples(), slow_edges(led, clock.t)
        assert [(a, b) for a, b, _ in got] == [(a, b) for a, b, _ in want]
    assert {(1, 2), (1, 3), (2, 3)} <= set(led.state.pairs)  # strongest kept
    assert (10, 11) not in led.state.pairs  # oldest once-seen pair forgotten
    assert led.replay() == led.state
    led.close()
    reopened = Ledger.open(path, clock=clock, params=params)
    assert reopened.state == fold(reopened.events(), params)
    assert set(reopened.state.pairs) == set(fold(reopened.events(), params).pairs)
    reopened.close()


def test_pair_strength_is_the_weight_bound() -> None:
    from vault.learning.formulas import edge_weight, pair_strength

    p = LearningParams()
    for count, days in ((1, 0.0), (5, 10.0), (300, 90.0)):
        bound = float(pair_strength(np.array([float(count)]), np.array([days]), p)[0])
        # the best case for the weight: both notes seen only in these searches (npmi = 1)
        assert edge_weight(count, count, count, count * 10, days, p) <= bound + 1e-12


def test_per_note_vectors_over_a_large_ascending_corpus_match_the_dense_loop(
    path: Path, clock: Clock
) -> None:
    """The sparse lookup (few learned notes, ascending ids) gives the dense loop's vectors."""
    led = Ledger.open(path, clock=clock)
    led.start_session("s", clock.t)
    led.on_search("s", "q", shown(30, 7, 500, 41))
    led.on_read("s", 7)
    led.archive(41, clock.t)
    assert led.end_session("s", clock.t + 5)
    ids = tuple(i for i in range(1, 700) if i != 30)  # ascending; 30 is learned, not in it
    scrambled = ids[::-1]  # not ascending: the dense loop
    assert len(led.state.notes) * 4 < len(ids)
    for name in ("warmth", "prior", "archived"):
        sparse = getattr(led, name)(ids)
        dense = getattr(led, name)(scrambled)[::-1]
        assert sparse.tolist() == dense.tolist(), name
    assert np.flatnonzero(led.archived(ids)).tolist() == [ids.index(41)]
    assert np.count_nonzero(led.prior(ids)) >= 2 and np.count_nonzero(led.warmth(ids)) >= 2
    led.close()


@pytest.mark.parametrize("neg_scale", [0.25, 0.5])
def test_a_note_passed_over_in_many_sessions_is_surely_passed_over_live_and_replayed(
        path: Path, clock: Clock, neg_scale: float) -> None:
    led = Ledger.open(path, clock=clock, params=LearningParams(neg_scale=neg_scale))
    for k in range(20):  # note 10 first in every list, note 11 cited from it: 10 passed over
        led.start_session(f"s{k}", clock.t)
        led.on_search(f"s{k}", f"question {k}", shown(10, 11))
        led.on_write(f"s{k}", 100 + k, True, [11])
        led.end_session(f"s{k}", clock.t + 1)
        clock.t += 10
        if k == 2:  # three misses: the mean is below the prior rate, not surely
            assert led.state.notes[10].q < 0.0
            early = led.learned([10, 11], query="anything at all").free
            assert early is not None and early[0] == 0.0
    ns = led.state.notes[10]
    sure = passed_score(ns.used, ns.skipped, led.params)
    # 20 misses at rank 0 (evidence.py), in proportion to the ledger's neg_scale
    assert sure == pytest.approx(-0.176 * neg_scale / 0.25, abs=4e-3)
    live = led.learned([10, 11, 404], query="a question about something else")
    assert live.free is not None and live.free[0] == sure and live.free[2] == 0.0
    assert live.free[1] > 0.0  # the cited note keeps its positive topic-free part
    replayed = led.learned([10, 11, 404], as_of=clock.t, query="a question about something else")
    assert replayed.free is not None and replayed.free.tolist() == live.free.tolist()
    assert led.note_history(10)["passed"] == sure and led.note_history(11)["passed"] == 0.0
    led.close()


def test_a_ledger_another_process_rebuilt_meanwhile_is_not_rebuilt_again(
        path: Path, clock: Clock, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every process that opens a ledger of an older LEARNING_VERSION sees the old stamp; the
    first rebuilds under the write lock, the others wait for it and must not fold the whole
    log again (each would hold the lock as long, and the last ones run past their busy
    timeout: n processes opening an upgraded vault at once waited n rebuilds)."""
    led = Ledger.open(path, clock=clock)
    workload(led, clock, 4, sessions=3)
    stamp = sql.get_meta(led._conn, "stamp")
    assert stamp is not None
    led.close()
    conn = sqlite3.connect(path)
    conn.execute("UPDATE meta SET value = '{\"version\": 8}' WHERE key = 'stamp'")
    conn.commit()
    conn.close()
    late = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
    sql.migrate(late)
    other = Ledger(late, clock, LearningParams())  # it read the old stamp, then waited
    first = Ledger.open(path, clock=clock)  # rebuilds and records the current stamp
    folds: list[int] = []
    real = replay_module.fold

    def counted(events: Iterable[Event], params: LearningParams,
                start: LearnedState | None = None) -> LearnedState:
        folds.append(1)
        return real(events, params, start)

    monkeypatch.setattr(compact_module, "fold", counted)
    assert other.rebuild(stamp) == first.state  # the other process's turn: nothing to do
    assert folds == []
    other.rebuild()  # `rmh replay` still rewrites every row
    assert folds == [1] and other.state == first.replay()
    first.close()
    other.close()
