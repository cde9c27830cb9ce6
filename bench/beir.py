"""`rmh bench beir`: a BEIR collection (Thakur et al. 2021) as one vault, every query through
the `SearchEngine` the Vault uses.

Layout read (the standard BEIR one): `corpus.jsonl` (`_id`, `title`, `text`), `queries.jsonl`
(`_id`, `text`) and `qrels/SPLIT.tsv` (an optional header line, then `query-id  corpus-id
score`, tab- or space-separated; a repeated pair: the later line counts, as in BEIR's loader);
any of them may be gzip'd (`NAME.gz`, as the Hugging Face copies are), start with a BOM or end
lines in CRLF. A document becomes one note (title = its title, or its id when it has none;
body = its text), notes in file order, so tie-breaks by note id follow the corpus file. As in
BEIR's evaluation (pytrec_eval scores every query of the run that the qrels name), every query
judged in the split is asked, one whose judgements are all 0 scoring 0 (`no_relevant`
counts them); a judgement of a query queries.jsonl lacks is dropped and counted; one naming a
document the corpus lacks stays in the query's relevant set (its ideal DCG and Recall's
denominator), as pytrec_eval keeps it, and is counted (`unreachable_judgements`).

Metrics as BEIR reports them (pytrec_eval / trec_eval): nDCG@10 with graded gains,
DCG = sum_{i=1..10} rel_i / log2(i + 1) (Jarvelin & Kekalainen 2002), IDCG over the ideal
ordering of the query's judgements; Recall@100 = relevant in the top 100 / relevant. As
BEIR's `EvaluateRetrieval.evaluate` does by default (`ignore_identical_ids`), a document whose
`_id` equals the query's is taken out of every method's ranking before it is scored (ArguAna
and Quora hold each query in the corpus too), and the next one moves up. From one
`engine.score` per query come rmh's `full` ranking and its own baselines: `bm25`, `dense`
and plain `rrf` (sum over bm25 and dense of 1/(60 + rank + 1), unweighted), so every method
sees the same tokens and embeddings. Intervals: paired bootstrap (bench/metrics.py), with
per-query wins and losses.
"""

from __future__ import annotations

import csv
import gzip
import json
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import numpy as np
import numpy.typing as npt

from vault import Corpus, SearchEngine, order

from .baselines import Baselines
from .metrics import paired_bootstrap

SPLITS = ("test", "train", "dev")
METHODS = ("bm25", "dense", "rrf", "full")
NDCG_K = 10
RECALL_K = 100


class BeirError(ValueError):
    """The folder is not a readable BEIR collection (names the file and what is wrong)."""


@dataclass(frozen=True)
class BeirQuery:
    qid: str
    text: str
    gains: Mapping[int, float]  # corpus position -> judged relevance (> 0 only); a document
    # absent from the corpus has a position < 0 that no ranking holds


@dataclass(frozen=True)
class BeirSet:
    corpus: Corpus
    doc_ids: tuple[str, ...]
    queries: tuple[BeirQuery, ...]
    dropped_judgements: int  # judgements of a query queries.jsonl lacks
    unreachable_judgements: int = 0  # judged > 0, the document not in the corpus (kept)
    no_relevant: int = 0  # asked queries whose judgements are all <= 0 (each scores 0)


def _open(path: Path) -> TextIO:
    """`path`, or `path`.gz (the Hugging Face BeIR copies ship gzip'd files), as text; a
    byte-order mark is dropped; universal newlines (CRLF files read as LF ones)."""
    if path.is_file():
        return path.open(encoding="utf-8-sig")
    packed = path.with_name(path.name + ".gz")
    if packed.is_file():
        return gzip.open(packed, "rt", encoding="utf-8-sig")
    where = path.parent.parent if path.parent.name == "qrels" else path.parent
    raise BeirError(f"missing {path.relative_to(where)} in {where}{_hint(path)}")


def _hint(path: Path) -> str:
    """What the folder holds instead: the splits present, or sub-collections (CQADupStack)."""
    if path.parent.name == "qrels":
        have = sorted({p.name.split(".")[0] for p in path.parent.glob("*.tsv*")})
        return f" (splits present: {', '.join(have) if have else 'none'})"
    subs = sorted(p.parent.name for p in path.parent.glob("*/corpus.jsonl*"))
    return f" (sub-collections, give one as --data: {', '.join(subs)})" if subs else ""


def _jsonl(path: Path) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    with _open(path) as fh:
        for n, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as e:
                raise BeirError(f"{path.name} line {n}: not JSON ({e.msg})") from None
            if not isinstance(row, dict) or "_id" not in row:
                raise BeirError(f"{path.name} line {n}: an object with an _id is expected")
            out.append(row)
    return out


def corpus_of(docs: Sequence[Mapping[str, Any]], generation: int = 3_000_000) -> Corpus:
    """One note per document, in order (position i = the i-th document)."""
    n = len(docs)
    titles = tuple(str(d.get("title") or "").strip() or str(d["_id"]) for d in docs)
    return Corpus(
        generation=generation,
        ids=tuple(range(1, n + 1)),
        paths=tuple(f"docs/{d['_id']}.md" for d in docs),
        titles=titles,
        aliases=tuple(() for _ in range(n)),
        bodies=tuple(str(d.get("text") or "") for d in docs),
        frontmatter=tuple({} for _ in range(n)),
        content_hashes=tuple("" for _ in range(n)),
        edges=(),
        archived=tuple(False for _ in range(n)),
    )


def load_beir(folder: Path, split: str = "test") -> BeirSet:
    """The collection in `folder` with the judged queries of `split` (module docstring)."""
    if split not in SPLITS:
        raise BeirError(f"unknown split {split!r} (one of {', '.join(SPLITS)})")
    docs = _jsonl(folder / "corpus.jsonl")
    queries = {str(q["_id"]): str(q.get("text", "")) for q in _jsonl(folder / "queries.jsonl")}
    position: dict[str, int] = {}
    for i, d in enumerate(docs):
        if str(d["_id"]) in position:
            raise BeirError(f"corpus.jsonl: duplicate _id {d['_id']!r}")
        position[str(d["_id"])] = i
    judged = _qrels(folder / "qrels" / f"{split}.tsv")
    absent: dict[str, int] = {}  # judged relevant, not in the corpus -> a position < 0
    gains: dict[str, dict[int, float]] = {}
    for qid, row in judged.items():
        gains.setdefault(qid, {})  # judged, none relevant: asked, scores 0 (as in pytrec_eval)
        for did, score in row.items():
            if score > 0:
                at = position.get(did)
                if at is None:
                    at = absent.setdefault(did, -1 - len(absent))
                gains[qid][at] = score
    asked = tuple(BeirQuery(qid, queries[qid], gains[qid]) for qid in sorted(gains)
                  if qid in queries)
    dropped = sum(len(judged[qid]) for qid in gains if qid not in queries)
    if not any(q.gains for q in asked):
        raise BeirError(f"qrels/{split}.tsv in {folder}: no query has a judgement > 0 and a "
                        "text in queries.jsonl")
    unreachable = sum(1 for q in asked for at in q.gains if at < 0)
    return BeirSet(corpus_of(docs), tuple(str(d["_id"]) for d in docs), asked, dropped,
                   unreachable, sum(1 for q in asked if not q.gains))


def _qrels(path: Path) -> dict[str, dict[str, float]]:
    """query-id -> corpus-id -> score, a later line for the same pair replacing an earlier
    one (BEIR's loader); tab-separated, or whitespace-separated when a line has no tab; the
    first line is skipped when its score is not a number (the header)."""
    out: dict[str, dict[str, float]] = {}
    name = f"qrels/{path.name}"
    with _open(path) as fh:
        for n, row in enumerate(csv.reader(fh, delimiter="\t"), start=1):
            if len(row) == 1:
                row = row[0].split()
            if not row or (n == 1 and not _is_number(row[-1])):
                continue  # blank lines; the header
            if len(row) != 3 or not _is_number(row[2]):
                raise BeirError(f"{name} line {n}: want query-id, corpus-id, score "
                                f"(got {len(row)} fields)")
            out.setdefault(row[0].strip(), {})[row[1].strip()] = float(row[2])
    return out


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def ndcg_at(ranking: Sequence[int], gains: Mapping[int, float], k: int = NDCG_K) -> float:
    """trec_eval's nDCG@k: sum_{i=1..k} g_i / log2(i + 1) over the ideal ordering's."""
    dcg = sum(gains.get(d, 0.0) / np.log2(i + 2) for i, d in enumerate(ranking[:k]))
    ideal = sorted(gains.values(), reverse=True)[:k]
    idcg = sum(g / np.log2(i + 2) for i, g in enumerate(ideal))
    return float(dcg / idcg) if idcg > 0 else 0.0


def recall_at(ranking: Sequence[int], gains: Mapping[int, float], k: int = RECALL_K) -> float:
    """|relevant in the top k| / |relevant| (relevant = judged score > 0)."""
    if not gains:
        return 0.0
    return sum(1 for d in ranking[:k] if d in gains) / len(gains)


def head(scores: npt.NDArray[np.float64], eligible: npt.NDArray[np.bool_], depth: int
         ) -> list[int]:
    """The first `depth` eligible positions with a positive score, best first (ties by id)."""
    masked = np.where(eligible & (scores > 0), scores, -np.inf)
    return [int(i) for i in order(masked)[:depth] if np.isfinite(masked[i])]


def plain_rrf(signals: Sequence[npt.NDArray[np.float64]], eligible: npt.NDArray[np.bool_],
              k: int = 60) -> npt.NDArray[np.float64]:
    """sum_s 1 / (k + rank_s(d) + 1) over the notes each signal scores > 0 (Cormack et al.
    2009), rank from 0 among the eligible ones."""
    out = np.zeros(eligible.shape[0], dtype=np.float64)
    for s in signals:
        ranked = head(s, eligible, int(eligible.shape[0]))
        out[ranked] += 1.0 / (k + np.arange(len(ranked), dtype=np.float64) + 1.0)
    return out


def rankings(engine: SearchEngine, corpus: Corpus, query: str, depth: int = RECALL_K,
             skip: int | None = None, baselines: Baselines | None = None
             ) -> dict[str, list[int]]:
    """Each method's first `depth` notes for one query, from one `engine.score`, without the
    note at position `skip` (the query's own document, module docstring)."""
    s = engine.score(corpus, query)
    el = s.eligible
    base = (baselines or Baselines(engine)).signals(s.signals, corpus, query)
    bm25, dense = base["bm25"], base["dense"]
    more = depth + (skip is not None)
    out = {"bm25": head(bm25, el, more), "dense": head(dense, el, more),
           "rrf": head(plain_rrf([bm25, dense], el), el, more)}
    if engine.reranker is not None or engine.params.second_pass:  # stages after score
        res = engine.search(corpus, query, more)
        out["full"] = [corpus.position(h.id) for h in res.hits]
    else:
        out["full"] = head(s.final, el, more)
    return {m: [d for d in r if d != skip][:depth] for m, r in out.items()}


def run_beir(data: BeirSet, engine: SearchEngine, *, limit: int | None = None,
             progress: TextIO | None = sys.stderr) -> tuple[dict[str, list[dict[str, float]]],
                                                           dict[str, float]]:
    """Per-query metric rows by method (query order), and timings."""
    rows: dict[str, list[dict[str, float]]] = {m: [] for m in METHODS}
    t0 = time.perf_counter()
    lat: list[float] = []
    queries = data.queries if limit is None else data.queries[:limit]
    position = {d: i for i, d in enumerate(data.doc_ids)}
    baselines = Baselines(engine)
    for qi, q in enumerate(queries):
        t = time.perf_counter()
        ranked = rankings(engine, data.corpus, q.text, skip=position.get(q.qid),
                          baselines=baselines)
        if qi > 0:  # the first query also builds the index
            lat.append(time.perf_counter() - t)
        for m in METHODS:
            rows[m].append({f"ndcg@{NDCG_K}": ndcg_at(ranked[m], q.gains),
                            f"recall@{RECALL_K}": recall_at(ranked[m], q.gains)})
        if progress is not None and (qi % 50 == 49 or qi + 1 == len(queries)):
            nd = np.mean([r[f"ndcg@{NDCG_K}"] for r in rows["full"]])
            print(f"\r  {qi + 1}/{len(queries)} queries, full nDCG@10 {nd:.3f}, "
                  f"{time.perf_counter() - t0:.0f}s", end="", file=progress, flush=True)
    if progress is not None:
        print(file=progress)
    timing = {"seconds": time.perf_counter() - t0,
              "query_p50_ms": float(np.percentile(lat, 50) * 1000) if lat else 0.0,
              "query_p95_ms": float(np.percentile(lat, 95) * 1000) if lat else 0.0}
    return rows, timing


def compare(a: Sequence[float], b: Sequence[float]) -> dict[str, float]:
    """Mean of a - b with its paired bootstrap interval, and per-query wins and losses."""
    out = paired_bootstrap(a, b)
    d = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    return {**out, "wins": int((d > 0).sum()), "losses": int((d < 0).sum())}


def summarize_beir(rows: Mapping[str, Sequence[Mapping[str, float]]]) -> dict[str, Any]:
    """`methods` (mean of each metric) and `ci` (full - rrf, full - the best single channel)."""
    keys = (f"ndcg@{NDCG_K}", f"recall@{RECALL_K}")
    methods = {m: {k: float(np.mean([r[k] for r in rows[m]])) if rows[m] else 0.0
                   for k in keys} for m in rows}
    best = max(("bm25", "dense"), key=lambda m: (methods[m][keys[0]], m))
    ci: dict[str, Any] = {"metric": keys[0], "best_single": best}
    for base in ("rrf", best):
        ci[f"full-{base}"] = {k: compare([r[k] for r in rows["full"]], [r[k] for r in rows[base]])
                              for k in keys}
    return {"methods": methods, "ci": ci}


def render_beir(report: Mapping[str, Any]) -> str:
    """The human table."""
    lines = [report["title"], f"  {report['setup']}",
             f"  documents: {report['documents']}  queries: {report['questions']}  "
             f"dropped judgements: {report['dropped_judgements']}  judged documents not in "
             f"the corpus: {report.get('unreachable_judgements', 0)}  queries without a "
             f"relevant document: {report.get('no_relevant', 0)}", "",
             f"{'method':<8} {'nDCG@10':>9} {'Recall@100':>11}"]
    for m, v in report["methods"].items():
        lines.append(f"{m:<8} {v['ndcg@10']:>9.3f} {v['recall@100']:>11.3f}")
    for key, val in report["ci"].items():
        if key.startswith("full-"):
            for metric, d in val.items():
                lines.append(f"{key} {metric}: {d['mean']:+.3f} (95% paired bootstrap "
                             f"{d['lo']:+.3f} .. {d['hi']:+.3f}; {d['wins']} wins, "
                             f"{d['losses']} losses)")
    t = report["timing"]
    lines.append(f"time {t['seconds']:.0f}s; query p50 {t['query_p50_ms']:.1f} ms, "
                 f"p95 {t['query_p95_ms']:.1f} ms")
    return "\n".join(lines)
