"""An in-memory `Searchable` (harness/ask.py) over a Corpus and a SearchEngine, for benchmarks.

search -> the engine's top k (final scores), read -> title, body and frontmatter by path,
neighbors -> the eligible (not archived) link neighbours by path, sorted, document_frequency
-> the engine's n_t per token. What `rmh bench
knowledge` and `rmh bench locomo --ask` run the ask loop against, without a vault on disk.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from vault import Corpus, SearchEngine


class CorpusSearchable:
    """The four Searchable calls over one corpus (paths are the note names)."""

    def __init__(self, corpus: Corpus, engine: SearchEngine, now: date | None = None) -> None:
        self.corpus = corpus
        self.engine = engine
        self.now = now  # the day the question is asked on (the engine's time prior)
        self._pos = {p: i for i, p in enumerate(corpus.paths)}

    def search(self, query: Any, k: Any = 10) -> dict[str, Any]:
        res = self.engine.search(self.corpus, str(query), int(k), now=self.now)
        return {"hits": [{"note": h.note, "score": h.score} for h in res.hits]}

    def read(self, note: Any) -> dict[str, Any]:
        i = self._pos[str(note)]
        c = self.corpus
        return {"note": c.paths[i], "title": c.titles[i], "text": c.bodies[i],
                "frontmatter": dict(c.frontmatter[i]), "aliases": list(c.aliases[i])}

    def neighbors(self, note: Any, hops: Any = 1) -> list[str]:
        c = self.corpus
        nid = c.ids[self._pos[str(note)]]
        out = [c.position(j) for j in c.graph.get(nid, [])]
        return sorted(c.paths[j] for j in out if not c.archived[j])

    def document_frequency(self, tokens: Any) -> list[int]:
        return self.engine.document_frequency(self.corpus, [str(t) for t in tokens])

    def position(self, note: str) -> int:
        return self._pos[note]
