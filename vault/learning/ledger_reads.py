"""The learned state as ranking reads it: the part of `Ledger` (ledger.py) that answers the
facade's `UsageRecorder` reads (warmth, the gated prior, co-use edges, `learned`).

A mixin over `LedgerAudit`: `Ledger` provides the lock, the state loading, the per-note vector
cache and the co-use pair table (the attributes declared below; there is no instance of this
class alone). Every gated number goes through replay.py's functions with the note's id, so
live equals `learned_of` of the replayed state for the same query and `held` (topic.py v19).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from .edges import WeightedEdges
from .formulas import decayed
from .ledger_audit import LedgerAudit
from .pair_table import PairTable
from .replay import expansion_of, free_of, learned_of, prior_of, query_weights, whole_of, word_query
from .state import NoteState
from .topic import NO_HELD, Held
from .usage import Learned
from .vectors import NoteVectors


class LedgerReads(LedgerAudit):
    """Warmth, prior, archived flags, edges and `learned` of the ledger (module docstring)."""

    _vectors: NoteVectors
    _pairs: PairTable
    _edges: tuple[tuple[int, float], WeightedEdges] | None

    def _per_note(
        self, ids: Sequence[int], value: Callable[[NoteState], float], dtype: type[Any]
    ) -> npt.NDArray[Any]:
        """value(note state) per id; 0 (False) for an id with no learned state."""
        self._sync_state()
        return self._vectors.per_note(self._state.notes, ids, value, dtype)

    def warmth(self, ids: Sequence[int], now: float | None = None) -> npt.NDArray[np.float64]:
        """Decayed activation per id at `now` (default: the clock)."""
        t, p = self.clock() if now is None else now, self.params

        def warm(ns: NoteState) -> float:
            return decayed(ns.activation, t - ns.as_of, ns.accesses, ns.sessions, p)

        return self._per_note(ids, warm, np.float64)

    def prior(self, ids: Sequence[int], query: str | None = None,
              held: Held = NO_HELD) -> npt.NDArray[np.float64]:
        """The learned score per id, gated by `query` (topic.py; `held` as `learned`'s,
        v18-v19); ungated without one."""
        self._sync_state()  # the query log's weights and the notes from one state
        weighted = query_weights(self._state, query, held)
        return self._vectors.per_id(self._state.notes, ids,
                                    lambda note, ns: prior_of(ns, weighted, note), np.float64)

    def archived(self, ids: Sequence[int]) -> npt.NDArray[np.bool_]:
        return self._per_note(ids, lambda ns: ns.archived_at is not None, np.bool_)

    def edges(self, now: float) -> WeightedEdges:
        """Every co-occurrence edge (id a < id b, weight) above the minimum, hubs excluded."""
        self._sync_state()
        return self._edges_at(now)

    def _edges_at(self, now: float) -> WeightedEdges:
        """`edges` on the state as synced; cached per (state version, now), as the weights
        are a pure function of both."""
        key = (self._state.last_seq, now)
        if self._edges is not None and self._edges[0] == key:
            return self._edges[1]
        out = self._pairs.edges(self._state, now, self.params)
        self._edges = (key, out)
        return out

    def now(self) -> float:  # the injected clock (module docstring: Time)
        return float(self.clock())

    def learned(self, ids: Sequence[int], as_of: float | None = None,
                query: str | None = None, held: Held = NO_HELD) -> Learned:
        """Warmth, prior (gated by `query`, topic.py) and edges for `ids`, all at ONE time,
        with the basis they used. Live (`as_of` None): the current state at the clock read
        once. With `as_of`: the state replayed from the events before the first past as_of, at
        t = as_of, so the same log, `as_of`, query and `held` give bit-identical vectors
        (`held`: the query's words some note holds and the notes holding each, topic.py
        `held_words`, read from the vault as it is now)."""
        if as_of is not None:
            return learned_of(self.state_as_of(as_of), ids, float(as_of), self.params, query,
                              held)
        now = self.clock()
        with self._lock:
            self._sync_state()  # once: every vector below reads this one state
            st, p = self._state, self.params
            weighted, words = query_weights(st, query, held), word_query(st, query)

            def per(value: Callable[[int, NoteState], float]) -> npt.NDArray[np.float64]:
                return self._vectors.per_id(st.notes, ids, value, np.float64)

            warm = self._vectors.per_note(st.notes, ids, lambda n: decayed(
                n.activation, now - n.as_of, n.accesses, n.sessions, p), np.float64)
            return Learned(warm, per(lambda i, ns: prior_of(ns, weighted, i)),
                           self._cooc(ids, now),
                           free=per(lambda i, ns: free_of(ns, weighted, words, p, i)),
                           expansion=per(lambda i, ns: expansion_of(ns, words, weighted, i)),
                           seq=st.last_seq, clock=now, asked=self._vectors.asked(st.notes, ids),
                           whole=self._vectors.per_id(st.notes, ids,
                                                      lambda _, ns: whole_of(ns, weighted),
                                                      np.bool_))

    def cooccurrence(self, ids: Sequence[int], now: float | None = None) -> WeightedEdges:
        self._sync_state()
        return self._cooc(ids, self.clock() if now is None else now)

    def _cooc(self, ids: Sequence[int], now: float) -> WeightedEdges:
        archived = [n for n, ns in self._state.notes.items() if ns.archived_at is not None]
        return self._edges_at(now).to_positions(self._vectors.id_array(ids)[0], archived)
