"""The retrieval pipeline: signals -> weighted RRF -> context -> named -> warmth, prior -> rerank.

Stages, in order (each reported in `SearchResult.stages` as "ran ..." or "skipped: why"):
1. first-stage signals over every note, the registry's (signals/registry.py), in its order:
   bm25, dense (needs an encoder), conjunctive;
2. graph (stages.graph_stage): personalized PageRank seeded by the notes named in the query
   and the top bm25/dense hits, over wiki-links plus the learned co-occurrence edges that
   touch a seed (scope.py);
3. fusion (fusion.py) of the query-dependent signals above:
   fused(d) = sum_s w_s(q) v_s(d) / (k + rank_s(d) + 1) (v_s: stage 1's by range, fusion.py),
   w_s(q) = w_s, or, with `redundancy_head` m > 0 (off by default), w_conj(q) =
   w_conj (1 - J(q)), J(q) the overlap of the conjunctive and BM25 heads of m notes for
   this query (fusion.gate: redundant lexical evidence counts once); `calibrate` (off) first
   sets w_bm25, w_dense, w_conj from the vault's own pseudo-queries (calibration.py);
   w_conj(q) = 0 for a query of more content terms than the typical note (fusion.long_query);
   with learning on, the learned expansion channel joins them (learning v6): each note adds
   w_learned x(d) / (k + rank + 1), x(d) = q g c in [0, 1] (vault/learning/expansion.py), held at
   stage 6 below the named notes that ranked above it without it (learned_stages.py); so
   does, with an encoder and w_asked > 0 (off), the query-log neighbours' (asked_channel.py);
   a query asking for a time alone has a time channel (topicless.py, on with w_when);
4. context: with N(x)(d) = max_{n linked to d, eligible} x(n) and g = w_context,
       ctx(d) = fused(d) + g N(fused)(d) + g^2 N(N(fused))(d)
   (best neighbour only, so a hub gains at most (g + g^2) times the best score near it;
   paths never run through ineligible notes); skipped with weight 0 or no links;
5. named: the notes the query names (a title or alias as a token run; generated_names.yielded)
   and the notes linked to or from them are lifted, named(d) = ctx(d) * (1 + w_named * [d named or
   linked to a named note]); multiplicative, so only notes another stage found can rise;
5b. protect (stages.protect_stage, ratio R = w_protect): no note rises past a named, eligible
   note whose own fused score is R times its own on the strength of its neighbourhood alone,
       out(d) = min(named(d), max(own(d), min{named(h) : h named, fused(h) >= R fused(d),
                                              fused(h) > fused(d)})),
   own(d) = fused(d) (1 + w_named [d named]); the receipt books the hold against "context"
   first, then "named";
6. warmth and prior, the query-independent learned inputs, as bounded multiplicative
   document priors (Kraaij, Westerveld & Hiemstra 2002):
       warm(d)  = named(d) * (1 + w_warmth * a(d)),          a(d) = clip(warmth(d), 0, 1)
       final(d) = warm(d) * (1 + PRIOR_SCALE * clip(Q(d), -1, 1))
   warmth acts only near the query's top `scope` hits (scope.py); a note no query-dependent
   stage found stays at 0; each is skipped when its vector is all zero or its weight/scale is
   0; off by default, association.py adds learned co-use and spreading activation from the
   query's own top hits. Then the topic-free part of the prior (scope.free_prior_stage, v5):
       final(d) *= 1 + PRIOR_SCALE * free(d),  free(d) = q (1 - gate) c for q > 0 (c: the
       share of the query's words the note was used for, v8),
   except that no note passes an eligible named note (learned score >= 0) that ranked above
   it before this part. Then the hold of stage 5b again (scope.hold_learned): no learned
   factor lifts a note past a named note R times stronger on its own evidence (own(d) x its
   factor counts in full) whose learned score is not negative; then (v24) no note whose lift
   is not wholly about the query (`whole`, learning's strict topic gate 1) passes a note with a
   learned score >= 0 ranked above it without learning (scope.hold_unlicensed); then (v26) a
   note used for the query goes just above a thin note restating it that links to it
   (cited.above_pointers: the pointer's words describe its target); given `now`
   the query is asked on, the notes dated in the time it names are lifted (when.py);
6b. with `second_pass` (on), the top 30 re-ordered by RRF of their final, dense and best
   passage BM25 ranks (second_pass.py; not for a query longer than a passage, nor one that
   names only a time: topicless.py); 7. rerank:
   the top `rerank_top_n` re-ordered by the cross-encoder, its best `rerank_keep` first;
8. whole name (stages.whole_name_stage): the notes whose title or alias is the whole query,
   token for token, first (a query that is a note's name asks for it).
Archived notes (corpus.archived or the caller's mask) are excluded unless `include_archived`;
notes whose final score is 0 (no signal found them) are never hits. Receipt: score = fused +
context + named + warmth + prior: "named" = named(d) - ctx(d), "warmth" = named(d) w_warmth
a(d) (+ association), "prior" = final(d) - warm(d) (and the hold after it); "warmth_raw" =
a(d). Derived structures: derived.py. Defaults: BENCHMARKS.md."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import date
from typing import Any

import numpy as np
import numpy.typing as npt

from ..learning.edges import WeightedEdges
from ..learning.usage import Asked
from ..notes.generated_names import yielded
from ..notes.text import tokenize
from ..storage.corpus import Corpus
from ..storage.embeddings import EmbeddingCache
from .asked_channel import asked_channel
from .association import CHANNELS, association_stage
from .calibration import Calibration, Calibrator, described
from .cloze import Dense, cloze_calibration, never_calibrated
from .dense_health import dense_health
from .derived import Derived, build_derived, from_base, prepared, retrained, update_derived
from .encoders import Encoder, Progress
from .fusion import by_fused, fuse, gate, long_query, top
from .hits import ArchivedMask, Scored, SearchResult, hit_of
from .learned_stages import Pointers, learned_stage
from .relevance import NOTHING, TOP, Relevance, judge_head
from .rerank import CrossEncoder, cross_encode
from .scope import expansion_channel, warmth_stage
from .search_params import DEFAULT_WEIGHTS as DEFAULT_WEIGHTS
from .search_params import PRIOR_SCALE as PRIOR_SCALE
from .search_params import SIGNALS as SIGNALS
from .search_params import SearchParams as SearchParams
from .second_pass import HEAD, second_pass
from .signals.registry import DENSE, REGISTRY, STAGE1, BuildEnv, Query
from .signals.unit_codes import term_count
from .stages import context_stage, graph_stage, named_stage, protect_stage, whole_name_stage
from .topicless import time_channel
from .when import when_stage

F64 = npt.NDArray[np.float64]


class SearchEngine:
    """Hybrid search over a Corpus (see module docstring)."""

    def __init__(
        self,
        params: SearchParams | None = None,
        *,
        encoder: Encoder | None = None,
        reranker: CrossEncoder | None = None,
        cache: EmbeddingCache | None = None,
        scratch: str | None = None,
    ) -> None:
        """`scratch`: a folder on disk where the dense IVF keeps its int8 codes (an unlinked
        file, storage/row_file.py) instead of memory, and where the exact dense layout's
        rows persist between processes (dense_store.py); None keeps everything in memory."""
        self.params = params or SearchParams()
        self.encoder = encoder
        self.reranker = reranker
        self.cache = cache
        self.scratch = scratch
        self.count_op: Callable[[], None] | None = None  # the store's fault seam (parts.py)
        self._derived: Derived | None = None
        self._archived = ArchivedMask()
        self.calibrator = Calibrator(scratch)

    @classmethod
    def lexical(cls, params: SearchParams | None = None) -> SearchEngine:
        """An engine with no models (bm25, conjunctive, graph; warmth and prior re-rank)."""
        return cls(params)

    def with_params(self, params: SearchParams) -> SearchEngine:
        """A sibling engine with other params sharing this one's models and derived structures
        (ablations; valid because the derived structures do not depend on the params except
        `max_tokens` and `max_note_units`, which must be equal)."""
        if (params.max_tokens, params.max_note_units) != (
            self.params.max_tokens, self.params.max_note_units
        ):
            raise ValueError("with_params cannot change max_tokens or max_note_units")
        other = SearchEngine(params, encoder=self.encoder, reranker=self.reranker, cache=self.cache,
                             scratch=self.scratch)
        other._derived = self._derived
        return other

    # -- derived structures ---------------------------------------------------------------------

    def forget(self) -> None:
        """Drop the derived structures; the next search builds them for its corpus. Called
        when the snapshot is rebuilt (a removal, another writer): holding them while it is
        built put a removal at 10^6 notes over 4.5 GB (BENCHMARKS.md)."""
        self._derived = None
        self._archived = ArchivedMask()

    def prepare(self, corpus: Corpus, progress: Progress | None = None,
                retrain: bool = False) -> dict[str, Any]:
        """Build (or reuse) every derived structure for `corpus` now, embedding what is not
        cached; `progress(done, total, what)` reports embedding; with `retrain` a dense IVF
        that rows changed since its training is trained again. Returns counts (JSON-safe)."""
        view = retrained(self._view(corpus, progress), corpus, retrain)
        return prepared(view, corpus, described(self.calibration(corpus)))

    def dense_health(self, corpus: Corpus, chunks: int | None = None,
                     build: bool = False) -> dict[str, Any]:
        """How far the dense index is from a fresh build (retrieval/dense_health.py): the one
        held; with `build`, when none is held for `corpus` and `chunks` (its chunk rows) is
        over `retrain_max_rows`, the one a search prepares now (never trained again here)."""
        p, d = self.params.dense, self._derived
        held = None if d is None else d.dense
        if (build and (held is None or held.generation != corpus.generation)
                and chunks is not None and 0 < p.approx_above < chunks
                and chunks > p.retrain_max_rows):
            held = self._view(corpus).dense
        return dense_health(held, chunks, p, self.encoder is not None)

    def document_frequency(self, corpus: Corpus, tokens: Sequence[str]) -> list[int]:
        """How many notes of `corpus` hold each token (`vault.tokenize` tokens; the BM25
        index's n_t, every note counted, archived ones too)."""
        return self._view(corpus).bm25.frequency(tokens)

    def holders(self, corpus: Corpus, tokens: Sequence[str]) -> list[frozenset[int]]:
        """The ids of the notes of `corpus` holding each token (`document_frequency`'s notes:
        the BM25 index's postings), for the learned prior's gate (vault/learning/topic.py)."""
        return self._view(corpus).bm25.holders(tokens, corpus.ids)

    def _view(self, corpus: Corpus, progress: Progress | None = None) -> Derived:
        d, p, enc = self._derived, self.params, self.encoder
        env = None if enc is None else BuildEnv(enc, self.cache, p.max_tokens, p.max_note_units,
                                                p.dense, self.scratch, progress, self.count_op)
        if d is None or d.generation != corpus.generation or d.n != len(corpus):
            updated = (update_derived(d, corpus) if d is not None
                       else from_base(corpus, self.scratch, env, self.count_op))
            if updated is None:
                # A rebuild (compaction, another writer; a new engine first tries the saved
                # state its corpus was advanced from; removals are followed, derived.py): the
                # old structures and their corpus go first, so the peak is one set of them,
                # not two (at 10^6 notes 5.7 GB with both alive; BENCHMARKS.md).
                dense = None if d is None else d.dense  # it catches up by itself
                d = self._derived = None
                updated = build_derived(corpus, self.scratch)
                updated.dense = dense
            d = self._derived = updated
        if env is not None and enc is not None:
            if d.dense is None or d.dense.fingerprint != enc.fingerprint:
                d.dense = DENSE.build(corpus, env)
            elif d.dense.generation != corpus.generation:
                d.dense = DENSE.follow(d.dense, corpus, env)
        return d

    # -- scoring --------------------------------------------------------------------------------

    def score(
        self,
        corpus: Corpus,
        query: str,
        *,
        warmth: npt.ArrayLike | None = None,
        prior: npt.ArrayLike | None = None,
        cooccurrence: WeightedEdges | None = None,
        archived: npt.ArrayLike | None = None,
        free_prior: npt.ArrayLike | None = None,
        expansion: npt.ArrayLike | None = None,
        asked: Asked = (),
        now: date | None = None,
        whole: npt.ArrayLike | None = None,
        parsed: Query | None = None,
    ) -> Scored:
        """Compute every stage but the cross-encoder for all notes of `corpus` (`parsed`: the
        query as a search already parsed and embedded it, for its run without the channel)."""
        p = self.params
        n, paths = len(corpus), corpus.paths  # paths break every tie (fusion.stable_order)
        view = self._view(corpus)
        tokens = tokenize(query)
        named = view.names.named_in_tokens(tokens, lambda run: yielded(run, corpus.paths))
        stages: dict[str, str] = {}
        sig: dict[str, F64] = {}

        def wanted(name: str) -> bool:
            if p.weight(name) == 0:
                stages[name] = "skipped: weight 0"
                return False
            return True

        q = Query(query, tokens, self.encoder) if parsed is None else parsed
        for signal in REGISTRY:
            if wanted(signal.name):
                index = getattr(view, signal.slot)
                raw = None if index is None else signal.score(index, q)
                if raw is None:
                    stages[signal.name] = f"skipped: {signal.unavailable}"
                else:
                    sig[signal.name], stages[signal.name] = raw, signal.ran(index)
        # the first-stage heads fusion ranks, taken once: PageRank's seeds are their first
        # `top_seeds` (a sort of 10^6 scores fewer per signal)
        heads: dict[str, npt.NDArray[np.int64]] = (
            {s: top(sig[s], p.rrf_depth, paths=paths) for s in ("bm25", "dense") if s in sig}
            if p.rrf_depth >= p.top_seeds else {})
        if wanted("graph"):
            stages["graph"], graph = graph_stage(view.links, view.walk, named, sig, heads,
                                                 cooccurrence, p.alpha, p.beta, p.top_seeds,
                                                 p.push_above, p.scope, paths)
            if graph is not None:
                sig["graph"] = graph
        cal = self.calibration(corpus)
        base = {s: cal.weights.get(s, p.weight(s)) if cal else p.weight(s) for s in sig}
        weights, gated = gate(base, sig, p.redundancy_head, heads, paths)
        if "conjunctive" in sig:  # a query longer than the typical note (fusion.long_query)
            weights, long = long_query(weights, term_count(tokens), view.conj.occurrence_median)
            gated += long
        stages["time"] = time_channel(sig, weights, corpus, query, now, p.weight("when"))
        if expansion is not None and np.any(expansion) and wanted("learned"):  # words shared
            stages["learned"] = expansion_channel(sig, weights, expansion, p.weight("learned"), n)
        if asked and wanted("asked"):  # query-log neighbours (asked_channel.py)
            stages["asked"] = asked_channel(
                sig, weights, self.encoder, self.cache, query, asked, p.weight("asked"),
                p.weight("asked_floor"), n, p.weight("asked_walk") > 0,
                None if self.encoder is None else q.vector)
        fusion = fuse(sig, weights, p.rrf_k, p.normalize, p.rrf_depth, heads, paths, STAGE1)
        stages["fusion"] = (f"ran (k={p.rrf_k}, normalize={p.normalize}, depth={p.rrf_depth}"
                            f"{gated}{'' if cal is None else '; ' + cal.describe()})")
        eligible = np.ones(n, dtype=np.bool_)
        if not p.include_archived:
            eligible &= ~self._archived.of(corpus)
            if archived is not None:
                eligible &= ~np.asarray(archived, dtype=np.bool_).reshape(n)
        stages["context"], context = context_stage(view.links, fusion.fused, eligible,
                                                   p.weight("context"), fusion.support)
        ctx = fusion.fused + context
        stages["named"], lifted = named_stage(view.links, named, ctx, eligible, p.weight("named"))
        own = fusion.fused.copy()
        if named and p.weight("named") > 0:
            own[named] *= 1.0 + p.weight("named")
        protectors = np.zeros(n, dtype=np.bool_)
        protectors[named] = True
        stages["protect"], held = protect_stage(fusion.fused, own, lifted,
                                                protectors & eligible, p.weight("protect"),
                                                by_fused(fusion))
        # the receipt books a hold against the lent context first, then the named lift
        context = context - np.minimum(lifted - held, context)
        ctx, lifted = fusion.fused + context, held
        a, warm = np.zeros(n, dtype=np.float64), lifted
        if wanted("warmth"):
            stages["warmth"], a, warm = warmth_stage(warmth, p.weight("warmth"), view.links,
                                                     cooccurrence, lifted, eligible, p.scope, paths)
        assoc, on = None, {c: p.weight(c) for c in CHANNELS if p.weight(c)}  # association.py
        if on:
            stages["association"], warm, assoc = association_stage(
                warm, eligible, protectors & eligible, on, p.scope, p.rrf_k, cooccurrence,
                view.links, prior, free_prior, warmth, paths)
        without = None if not {"learned", "asked"} & sig.keys() else (lambda: self.score(
            corpus, query, warmth=warmth, prior=prior, cooccurrence=cooccurrence,
            archived=archived, free_prior=free_prior, whole=whole, parsed=q))
        final = learned_stage(warm, prior, free_prior, p.prior_scale, p.weight("protect"),
                              fusion.fused, own, lifted, by_fused(fusion), protectors & eligible,
                              stages, without, p.weight("passed"), whole, eligible, Pointers(
                                  view.links, corpus.edges, view.conj.terms, corpus.bodies, tokens))
        final, when, stages["when"] = when_stage(corpus, query, now, final, eligible,
                                                 p.weight("when"))
        return Scored(sig, fusion, context, lifted - ctx, a, warm, final, eligible, stages, assoc,
                      when)

    def never_calibrated(self) -> str | None:
        """Why this engine's searches make no fusion calibration (cloze.never_calibrated)."""
        return never_calibrated(self.params, self.encoder is not None)

    def calibration(self, corpus: Corpus) -> Calibration | None:
        """The fusion calibration for `corpus`: calibration.py's with `calibrate` on, else
        cloze.py's with `cloze` on and the dense and conjunctive channels both weighted,
        else None."""
        p, enc = self.params, self.encoder
        if p.calibrate or not p.cloze:
            return self.calibrator.of(self, corpus)
        if enc is None or len(corpus) == 0 or self.never_calibrated() is not None:
            return None
        view = self._view(corpus)
        if view.dense is None:
            return None
        conf = {s: p.weight(s) for s in STAGE1}
        dense = Dense(view.dense, enc, self.cache, p.max_tokens, p.max_note_units)
        return self.calibrator.get(corpus, enc.fingerprint, conf, lambda: cloze_calibration(
            corpus, view.bm25, dense, conf, encoder=enc.fingerprint), "cloze")

    # -- the full pipeline ----------------------------------------------------------------------

    def search(
        self,
        corpus: Corpus,
        query: str,
        k: int = 10,
        *,
        warmth: npt.ArrayLike | None = None,
        prior: npt.ArrayLike | None = None,
        cooccurrence: WeightedEdges | None = None,
        archived: npt.ArrayLike | None = None,
        free_prior: npt.ArrayLike | None = None,
        expansion: npt.ArrayLike | None = None,
        asked: Asked = (),
        now: date | None = None,
        whole: npt.ArrayLike | None = None,
    ) -> SearchResult:
        """Top `k` eligible notes with receipts (module docstring for the stages)."""
        if len(corpus) == 0 or k <= 0:
            return SearchResult(query, (), {"search": "skipped: empty corpus" if k > 0 else "k=0"},
                                relevance=NOTHING if k > 0 else None)
        s = self.score(corpus, query, warmth=warmth, prior=prior, cooccurrence=cooccurrence,
                       archived=archived, free_prior=free_prior, expansion=expansion, asked=asked,
                       now=now, whole=whole)
        p = self.params
        # A note no signal found (final score 0) is not a hit, however few hits there are.
        # Only the head can be shown or reranked, so only it is materialised.
        idx = top(s.final, max(k, p.rerank_top_n if self.reranker else 0,
                               HEAD if p.second_pass else 0), s.eligible, corpus.paths)
        ranked = [int(i) for i in idx]
        if p.second_pass and "time" in s.signals:  # topicless.py: its words are frame words
            s.stages["second_pass"] = ("skipped: the query names a time and no topic (its "
                                       "passages hold only its frame words)")
        elif p.second_pass:
            base = s.fusion.fused + s.context + s.named  # named(d), before anything learned
            learned = np.divide(s.final, base, out=np.ones_like(s.final), where=base > 0)
            ranked, s.stages["second_pass"] = second_pass(
                corpus, query, ranked, s.signals.get("dense"), self._view(corpus).bm25, learned)
        ranked, rer, placed, s.stages["rerank"] = cross_encode(
            self.reranker, corpus, query, ranked, s.final, p.rerank_top_n, p.rerank_keep)
        by_reranker = frozenset(ranked[:placed])  # the reranker's order, before whole_name
        named = yielded(self._view(corpus).names.named_whole(tokenize(query)), corpus.paths)
        ranked, s.stages["whole_name"] = whole_name_stage(ranked, named, s.final, s.eligible)
        hits = tuple(hit_of(corpus, s, i, rer.get(i), placed=i in by_reranker)
                     for i in ranked[:k])
        return SearchResult(query, hits, dict(s.stages),
                            relevance=self._relevance(corpus, query, s, ranked[:TOP]))

    def _relevance(self, corpus: Corpus, query: str, s: Scored, head: list[int]) -> Relevance:
        """Whether anything relevant was found (retrieval/relevance.py `judge_head`)."""
        return judge_head(corpus, query, s.signals.get("dense"), s.eligible, head,
                          lambda terms: self.document_frequency(corpus, terms),
                          s.signals.get("time"))
