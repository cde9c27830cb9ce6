"""The entity-by-event incidence matrix B and what NDM computes from it.

NDM (seed 000, steps 1-3 and 7):
- B[e, t] = 1 when event t mentions entity e (rows: entities, sorted by key; columns: events in
  tick order).
- Collisions: C = B_nᵀ B_n, where B_n keeps the non-speaker rows only ("speakers are hubs, and
  hubs carry no signal"); events i < j collide when C[i, j] > 0.
- Entity ties (Adamic–Adar, Adamic & Adar 2003): tie(a, b) = Σ_{t ∋ a, b} 1 / ln |t|, where |t|
  is the number of non-speaker entities in event t (a shared event has |t| >= 2, so ln |t| > 0).
  A similarity, not a distance.
- Stability of two extractions: J(A, B) = |A ∩ B| / |A ∪ B| over their collision-pair sets
  (J = 1 when both are empty).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .entities import Entity

if TYPE_CHECKING:  # scipy is imported where a matrix is built, not when the package loads
    import scipy.sparse as sp


@dataclass(frozen=True)
class Incidence:
    """B with its row keys, row kinds and the number of event columns."""

    keys: tuple[str, ...]
    kinds: tuple[str, ...]
    n_events: int
    matrix: sp.csr_matrix  # shape (len(keys), n_events), float64 0/1

    @classmethod
    def build(cls, events: Sequence[Sequence[Entity]]) -> Incidence:
        """B from each event's entities (column t = events[t]); a key's kind is its first."""
        kinds: dict[str, str] = {}
        for ents in events:
            for e in ents:
                kinds.setdefault(e.key, e.kind)
        keys = tuple(sorted(kinds))
        row = {k: i for i, k in enumerate(keys)}
        pairs = sorted({(row[e.key], t) for t, ents in enumerate(events) for e in ents})
        r = np.fromiter((p[0] for p in pairs), dtype=np.int64, count=len(pairs))
        c = np.fromiter((p[1] for p in pairs), dtype=np.int64, count=len(pairs))
        data = np.ones(len(pairs), dtype=np.float64)
        import scipy.sparse as sp

        m = sp.csr_matrix((data, (r, c)), shape=(len(keys), len(events)))
        return cls(keys, tuple(kinds[k] for k in keys), len(events), m)

    def _non_speaker(self) -> sp.csr_matrix:
        keep = np.array([k != "speaker" for k in self.kinds], dtype=bool)
        return self.matrix[np.flatnonzero(keep)]

    def collision_matrix(self) -> sp.csr_matrix:
        """C = B_nᵀ B_n with a zero diagonal: C[i, j] = shared non-speaker entities."""
        bn = self._non_speaker()
        c = (bn.T @ bn).tocsr()
        c.setdiag(0)
        c.eliminate_zeros()
        return c

    def collisions(self) -> tuple[tuple[int, int, int], ...]:
        """(i, j, shared) for every colliding event pair i < j, sorted by (i, j)."""
        import scipy.sparse as sp

        c = sp.triu(self.collision_matrix(), k=1).tocoo()
        return tuple(
            sorted((int(i), int(j), int(v)) for i, j, v in zip(c.row, c.col, c.data, strict=True))
        )

    def components(self) -> tuple[tuple[int, ...], ...]:
        """Connected stories: events linked by collisions, each sorted, ordered by first event."""
        from scipy.sparse import csgraph

        _, labels = csgraph.connected_components(self.collision_matrix(), directed=False)
        groups: dict[int, list[int]] = {}
        for t, lab in enumerate(labels.tolist()):
            groups.setdefault(int(lab), []).append(t)
        return tuple(sorted((tuple(g) for g in groups.values()), key=lambda g: g[0]))

    def adamic_adar(self) -> sp.csr_matrix:
        """Entity-by-entity AA tie matrix over all rows (speaker rows are zero), zero diagonal."""
        import scipy.sparse as sp

        keep = np.array([k != "speaker" for k in self.kinds], dtype=np.float64)
        bn = sp.diags(keep) @ self.matrix
        size = np.asarray(bn.sum(axis=0)).ravel()
        weight = np.zeros_like(size)
        shared = size >= 2
        weight[shared] = 1.0 / np.log(size[shared])
        ties = (bn @ sp.diags(weight) @ bn.T).tocsr()
        ties.setdiag(0)
        ties.eliminate_zeros()
        return ties

    def ties(self, key: str, top: int = 10) -> tuple[tuple[str, float], ...]:
        """The entities most tied to `key`, best first (ties broken by key)."""
        if key not in self.keys:
            return ()
        row = self.adamic_adar().getrow(self.keys.index(key)).tocoo()
        pairs = [(self.keys[int(j)], float(v)) for j, v in zip(row.col, row.data, strict=True)]
        return tuple(sorted(pairs, key=lambda p: (-p[1], p[0]))[:top])

    def trajectory(self, key: str) -> tuple[int, ...]:
        """The events that mention `key`, in tick order (its row of B)."""
        if key not in self.keys:
            return ()
        return tuple(int(t) for t in sorted(self.matrix.getrow(self.keys.index(key)).indices))


def jaccard(a: Sequence[tuple[int, int]], b: Sequence[tuple[int, int]]) -> float:
    """|A ∩ B| / |A ∪ B| of two collision-pair sets; 1.0 when both are empty."""
    sa = {(min(i, j), max(i, j)) for i, j in a}
    sb = {(min(i, j), max(i, j)) for i, j in b}
    union = sa | sb
    return 1.0 if not union else len(sa & sb) / len(union)


def collision_pairs(inc: Incidence) -> tuple[tuple[int, int], ...]:
    """The (i, j) pairs of `inc.collisions()` (what `jaccard` compares)."""
    return tuple((i, j) for i, j, _ in inc.collisions())
