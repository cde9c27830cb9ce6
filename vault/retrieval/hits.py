"""The values a search returns: hits with receipts, and the result with its stage report."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from ..storage.corpus import Corpus
from .association import Association
from .fusion import Fusion
from .relevance import Relevance

F64 = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Hit:
    """One ranked note.

    `note` is the vault-relative path, `id` the stable note id. `receipt` explains the score:
    per-signal raw score and rank, fused score, rerank and Q contributions (JSON-safe).
    `snippet` is the passage that best matches the query and `facts` the note's "date" and
    "speaker" from its frontmatter (retrieval.snippets; filled in by the facade's search).
    `rerank` is the cross-encoder's score of a hit its order placed (the reranker's best
    `keep`, first), None for the others: the order of those hits is by it, not by `score`.
    """

    id: int
    note: str
    title: str
    score: float
    receipt: dict[str, Any] = field(default_factory=dict)
    snippet: str = ""
    facts: dict[str, str] = field(default_factory=dict)
    rerank: float | None = None

    def to_json(self, *, receipt: bool = False) -> dict[str, Any]:
        """JSON-safe form of every surface: compact (note, title, score, id, snippet and any
        date/speaker, and `rerank` for a hit the reranker placed) by default; the receipt only
        when asked (`explain`)."""
        out: dict[str, Any] = {
            "note": self.note,
            "title": self.title,
            "score": self.score,
            "id": self.id,
            "snippet": self.snippet,
        }
        out.update(sorted(self.facts.items()))
        if self.rerank is not None:
            out["rerank"] = self.rerank
        if receipt:
            out["receipt"] = self.receipt
        return out


@dataclass(frozen=True)
class SearchResult:
    """Hits best first, plus which stages ran or were skipped and why."""

    query: str
    hits: tuple[Hit, ...]
    stages: dict[str, str] = field(default_factory=dict)
    # what the ranking used: {"generation", "learned_seq", "clock"} (the facade fills it in)
    basis: dict[str, Any] = field(default_factory=dict)
    # whether anything relevant was found (retrieval/relevance.py); None: not judged
    relevance: Relevance | None = None
    # why learning did not record this search (a session's log budget spent); "" when it did
    unrecorded: str = ""

    @property
    def relevant(self) -> bool:
        """False when the search judged that nothing in the vault is about the query."""
        return self.relevance is None or self.relevance.relevant

    def to_json(self, *, receipt: bool = False) -> dict[str, Any]:
        """{"query", "hits"} (and "learning" when it did not record the search); with
        `receipt` each hit's receipt, the stage report and the basis (index generation,
        learned event seq, clock) that re-runs the search."""
        out: dict[str, Any] = {
            "query": self.query,
            "hits": [h.to_json(receipt=receipt) for h in self.hits],
        }
        if self.relevance is not None:
            out["relevant"] = self.relevance.relevant
        if self.unrecorded:
            out["learning"] = f"not recorded: {self.unrecorded}"
        if receipt:  # the explanation: stages, and the basis a re-run needs (receipts too)
            out["stages"] = dict(self.stages)
            if self.relevance is not None:
                out["relevance"] = self.relevance.to_json()
            if self.basis:
                out["basis"] = dict(self.basis)
        return out


def with_basis(result: SearchResult, basis: dict[str, Any]) -> SearchResult:
    """The result with its basis recorded on it and in every hit's receipt."""
    hits = tuple(replace(h, receipt={**h.receipt, "basis": dict(basis)}) for h in result.hits)
    return replace(result, hits=hits, basis=dict(basis))


@dataclass(frozen=True)
class Scored:
    """Everything one query computed: raw signals, fusion, final scores, eligibility, stages."""

    signals: Mapping[str, F64]
    fusion: Fusion
    context: F64
    named: F64  # the amount the named stage added: named(d) - ctx(d)
    warmth: F64  # a(d), the clipped activation that scaled named(d) (zeros when skipped)
    warm: F64  # named(d) * (1 + w_warmth * a(d)), before the Q prior
    final: F64
    eligible: npt.NDArray[np.bool_]
    stages: dict[str, str]
    association: Association | None = None  # association.py, when it added anything
    when: F64 | None = None  # the time prior's factor per note (when.py), when it ran


def hit_of(corpus: Corpus, s: Scored, i: int, rerank: float | None, *,
           placed: bool = False) -> Hit:
    """The hit at corpus position `i` with its receipt (pipeline docstring: the receipt);
    `placed`: the reranker's score set its place (Hit.rerank)."""
    signals: dict[str, Any] = {}
    for name in sorted(s.signals):
        raw = float(s.signals[name][i])
        rank, contribution = s.fusion.heads[name].at(i)
        signals[name] = {
            "raw": raw,
            "rank": rank if raw > 0 else None,
            "contribution": contribution,
        }
    fused = float(s.fusion.fused[i])
    context = float(s.context[i])
    named = float(s.named[i])
    warm = float(s.warm[i])
    factor = 1.0 if s.when is None else float(s.when[i])
    before = float(s.final[i]) / factor  # the score before the time prior
    receipt: dict[str, Any] = {
        "signals": signals,
        "fused": fused,
        "context": context,
        "named": named,
        "warmth_raw": float(s.warmth[i]),
        "warmth": warm - (fused + context + named),
        "prior": before - warm,
        "prior_factor": before / warm if warm else 1.0,  # (1 + prior_scale q g), held
        "when": float(s.final[i]) - before,
        "when_factor": factor,  # 1 + w m(d): the time the query names (when.py)
        "rerank": rerank,
        "stages": dict(s.stages),
    }
    if s.association is not None and any(v[i] > 0 for v in s.association.values.values()):
        receipt["association"] = s.association.receipt(i, corpus.ids)
    return Hit(
        id=corpus.ids[i],
        note=corpus.paths[i],
        title=corpus.titles[i],
        score=float(s.final[i]),
        receipt=receipt,
        rerank=rerank if placed else None,
    )


class ArchivedMask:
    """`corpus.archived` as an array, converted once per tuple (the tuple is immutable, so
    the same object holds the same flags): converting 10^6 Python bools cost ~50 ms a query
    at 10^6 notes."""

    def __init__(self) -> None:
        self._cached: tuple[tuple[bool, ...], npt.NDArray[np.bool_]] | None = None

    def of(self, corpus: Corpus) -> npt.NDArray[np.bool_]:
        flags, cached = corpus.archived, self._cached
        if cached is not None and cached[0] is flags:
            return cached[1]
        mask = np.asarray(flags, dtype=np.bool_).reshape(len(corpus))
        mask.flags.writeable = False
        self._cached = (flags, mask)
        return mask
