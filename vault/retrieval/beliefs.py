"""Which notes are claims no longer believed (rejected or superseded facts, notes/trust.py),
kept per index generation for the search's eligibility mask.

A full pass reads every note's frontmatter (~0.6 s at 10^6 notes on a loaded 2-core machine),
so it runs once; a later generation whose `corpus.delta` reaches back to the last one
(storage/corpus.py) re-reads only the changed and added positions, after moving the stale
ones down past the removed notes, as the derived retrieval structures do
(retrieval/derived.py). The mask is None while no claim is stale, so a vault without
corrections searches exactly as before.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from ..notes.trust import not_current
from ..storage.columns import Decoded
from ..storage.corpus import Corpus
from ..storage.overlay import Column

_KEYS = (b'"trust"', b'"superseded_by"')  # what `_stale` needs, as a note's JSON spells them


def _stale(fm: object) -> bool:
    return (isinstance(fm, dict) and bool(fm) and ("trust" in fm or "superseded_by" in fm)
            and not_current(fm))


def _all_stale(fm: Sequence[object]) -> set[int]:
    """Every stale position; memory-mapped JSON is searched for the keys first, also under
    the rows an advanced corpus changed or added (storage/overlay.py `Column`)."""
    if isinstance(fm, Decoded):
        return {i for i in fm.containing(_KEYS) if _stale(fm[i])}
    if isinstance(fm, Column):
        base, patch, tail = fm.layers()
        if isinstance(base, Decoded):  # base rows dropped since: their positions move down
            hits = base.containing(_KEYS)
            at = fm.dropped.forward(hits).tolist()
            out = {q for p, q in zip(hits, at, strict=True)
                   if q >= 0 and q not in patch and _stale(base[p])}
            out.update(i for i, x in patch.items() if _stale(x))
            out.update(fm.dropped.kept + k for k, x in enumerate(tail) if _stale(x))
            return out
    return {i for i, x in enumerate(fm) if _stale(x)}


class StaleClaims:
    """The stale-claim positions of the latest corpus seen (module docstring)."""

    def __init__(self) -> None:
        self._generation = -1
        self._n = 0
        self._stale: set[int] = set()

    def mask(self, corpus: Corpus) -> npt.NDArray[np.bool_] | None:
        """Stale claims by position in `corpus`; None when there are none."""
        n = len(corpus)
        if corpus.generation != self._generation or n != self._n:
            since = (corpus.delta.changes_since(self._generation, self._n, n)
                     if corpus.delta is not None and self._generation >= 0 else None)
            if since is None:
                self._stale = _all_stale(corpus.frontmatter)
            else:
                if since.removed:  # the survivors move down (vault/shift.py)
                    self._stale = set(since.shift.forward_kept(sorted(self._stale)))
                for i in since.changed:
                    if _stale(corpus.frontmatter[i]):
                        self._stale.add(i)
                    else:
                        self._stale.discard(i)
            self._generation, self._n = corpus.generation, n
        if not self._stale:
            return None
        out = np.zeros(n, dtype=np.bool_)
        out[sorted(self._stale)] = True
        return out
