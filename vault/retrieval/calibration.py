"""Fusion weights calibrated on the vault itself, without labels, from known-item pseudo-queries.

Fusion (fusion.py) sums each first-stage channel's reciprocal ranks with a weight w_s
(Cormack, Clarke & Buettcher 2009, "Reciprocal rank fusion outperforms Condorcet and
individual rank learning methods"). The defaults were chosen on conversations; a vault of
another kind (long abstracts, code notes) may want another balance. Here the vault supplies
its own judgements, as in simulated known-item evaluation (Azzopardi, de Rijke & Balog 2007,
"Building simulated queries for known-item topics") and the Inverse Cloze Task (Lee, Chang &
Toutanova 2019, "Latent retrieval for weakly supervised open domain question answering"): a
text taken from a note is a query whose one relevant note is known.

1. Sample: the notes with at least MIN_TOKENS body tokens, ordered by
   BLAKE2b(SALT, note key) (the key: the note's content hash, else its title and body), the
   first SAMPLE of them. No randomness, no clock: the same notes give the same sample.
2. One pseudo-query per sampled note, its kind chosen by the same hash: `sentence` (one of
   its sentences of 5..40 tokens), `phrase` (its PHRASE_TERMS most distinctive words by
   tf x idf, in text order: a keyword query) or `title` (its title, when it has at least two
   words and is not the note's file name); a kind the note cannot give falls back to
   `sentence`, then `phrase`.
3. Each pseudo-query is scored by every channel (the engine's own first stage). A channel's
   reliability is the mean reciprocal rank of the source note under that channel alone; the
   fusion of the three channels is evaluated for each weight vector of GRID (multipliers of
   the configured weights) by the same mean reciprocal rank.
4. The weights: the configured ones, unless a grid point beats them by more than MARGIN in
   that mean; then the best grid point (ties: grid order, the configured point first).
   Without enough notes (fewer than MIN_QUERIES pseudo-queries) the configured weights stand.

Recalibration ("the vault changed enough"): a calibration stays valid while the vault's note
count is within DRIFT (10 %) of the count it was made on and at least KEEP (80 %) of its
sampled notes are still there unchanged (checked by note id and key: O(SAMPLE), not O(n)),
and the encoder is the same. It is persisted as `.rmh/fusion-calibration.json` (written to a
temporary name and renamed, as lexical_store.py does), so a new process reuses it.
"""

from __future__ import annotations

import hashlib
import heapq
import json
import math
import os
import re
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from ..notes.text import tokenize
from ..plural import counted
from ..storage.corpus import Corpus
from ..storage.fileops import create_temp, drop_temps, open_regular
from .fusion import fuse, top
from .signals.registry import STAGE1

F64 = npt.NDArray[np.float64]
Channels = Callable[[str], Mapping[str, F64]]  # a text -> the first-stage scores per channel
Frequency = Callable[[Sequence[str]], list[int]]  # tokens -> notes holding each

VERSION = 8  # 2: scripts without spaces tokenised as bigrams (notes/text.py), so scores moved;
# 3: combining marks kept in their word (notes/text.py); 4: an enclosing mark ends its word,
# Arabic and Hindi stems, a frontmatter title searched (session 32); 5: fusion by range
# (fusion.py; a store written at 4 by either change alone is rebuilt); 6: a soft hyphen or
# zero-width joiner inside a word keeps it one word (notes/text.py, session 33); 7: a method
# ("grid", or "cloze": cloze.py) and its line; 8: a query's stop words count as one BM25 term
# together (signals/bm25.py `query_weights`, session 37), so the pseudo-queries' scores moved
FILE = "fusion-calibration.json"
SALT = b"rmh-calibration/1"
CHANNELS = STAGE1  # ("bm25", "dense", "conjunctive"): the channels fused by their range
SAMPLE = 64  # pseudo-queries per calibration
MIN_QUERIES = 16  # fewer: the configured weights stand
MIN_TOKENS = 8  # body tokens a note needs to be sampled
PHRASE_TERMS = 5
KINDS = ("sentence", "phrase", "title")
# multipliers of the configured (bm25, dense, conjunctive) weights; the first is "as configured"
GRID: tuple[tuple[float, float, float], ...] = tuple(
    (b, d, c) for b in (1.0, 2.0) for d in (1.0, 2.0) for c in (1.0, 0.5, 0.0))
MARGIN = 0.01  # mean reciprocal rank a grid point must gain over the configured weights
DRIFT = 0.10
KEEP = 0.80
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


@dataclass(frozen=True)
class PseudoQuery:
    source: int  # corpus position of the note it was made from
    kind: str
    text: str


@dataclass(frozen=True)
class Calibration:
    """The calibrated fusion weights and the evidence for them (module docstring)."""

    weights: Mapping[str, float]  # absolute weights of CHANNELS to fuse with
    multipliers: tuple[float, float, float]  # the chosen grid point
    reliability: Mapping[str, float]  # per channel: MRR of the source note alone
    mrr: float  # fused MRR with `weights`
    configured_mrr: float  # fused MRR with the configured weights
    queries: int
    notes: int  # the vault's note count when calibrated
    sample: tuple[tuple[int, str], ...]  # (note id, key) of the sampled notes
    encoder: str  # the encoder's fingerprint ("" without one)
    configured: tuple[float, float, float]  # the configured weights it was made for
    method: str = "grid"  # "grid" (this module) or "cloze" (cloze.py)
    line: str = ""  # what `describe` says, when the method wrote it

    def describe(self) -> str:
        """One line for receipts and status."""
        if self.line:
            return self.line
        if self.queries < MIN_QUERIES:  # step 4: not calibrated, the configured weights stand
            return (f"as configured: {counted(self.queries, 'pseudo-query', 'pseudo-queries')} "
                    f"of {counted(self.notes, 'note')}, fewer "
                    f"than {MIN_QUERIES} to calibrate on")
        w = ", ".join(f"{s} {self.weights[s]:g}" for s in CHANNELS if s in self.weights)
        r = ", ".join(f"{s} {self.reliability[s]:.2f}" for s in CHANNELS
                      if s in self.reliability)
        return (f"calibrated on {counted(self.queries, 'pseudo-query', 'pseudo-queries')} of "
                f"{counted(self.notes, 'note')}: {w} "
                f"(MRR {self.mrr:.3f} vs {self.configured_mrr:.3f} configured; "
                f"per channel {r})")

    def to_json(self) -> dict[str, Any]:
        return {"version": VERSION, "weights": dict(sorted(self.weights.items())),
                "multipliers": list(self.multipliers),
                "reliability": dict(sorted(self.reliability.items())), "mrr": self.mrr,
                "configured_mrr": self.configured_mrr, "queries": self.queries,
                "notes": self.notes, "sample": [list(x) for x in self.sample],
                "encoder": self.encoder, "configured": list(self.configured),
                "method": self.method, "line": self.line}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Calibration:
        if not isinstance(d, Mapping) or d.get("version") != VERSION:
            raise ValueError("not a calibration of this version")
        return cls({str(k): float(v) for k, v in d["weights"].items()}, _triple(d["multipliers"]),
                   {str(k): float(v) for k, v in d["reliability"].items()}, float(d["mrr"]),
                   float(d["configured_mrr"]), int(d["queries"]), int(d["notes"]),
                   tuple((int(i), str(k)) for i, k in d["sample"]), str(d["encoder"]),
                   _triple(d["configured"]), str(d["method"]), str(d["line"]))


def _triple(x: Sequence[Any]) -> tuple[float, float, float]:
    a, b, c = (float(v) for v in x)
    return a, b, c


def described(cal: Calibration | None) -> str:
    """`cal.describe()`, or "off" (for prepare's report and status)."""
    return "off" if cal is None else cal.describe()


def note_key(corpus: Corpus, i: int) -> str:
    """What identifies a note's text: its content hash, else a hash of its title and body."""
    if corpus.content_hashes[i]:
        return corpus.content_hashes[i]
    text = f"{corpus.titles[i]}\x1f{corpus.bodies[i]}".encode("utf-8", "surrogatepass")
    return hashlib.blake2b(text, digest_size=16).hexdigest()


def _rank_key(key: str) -> bytes:
    return hashlib.blake2b(SALT + key.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def sample_notes(corpus: Corpus, size: int = SAMPLE) -> list[int]:
    """Positions of the sampled notes, in hash order (module docstring, step 1)."""
    keyed = [(_rank_key(note_key(corpus, i)), i) for i in range(len(corpus))]
    want = size
    while True:  # most notes qualify: look at the first `want`, widen when short
        cands = heapq.nsmallest(want, keyed)
        out = [i for _, i in cands if not corpus.archived[i]
               and len(tokenize(corpus.bodies[i])) >= MIN_TOKENS][:size]
        if len(out) >= size or want >= len(keyed):
            return out
        want *= 4


def _sentences(body: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(body) if 5 <= len(tokenize(s)) <= 40]


def _phrase(body: str, df: Frequency, n: int) -> str:
    toks = [t for t in tokenize(body) if len(t) > 2 and not t.isdigit()]
    if not toks:
        return ""
    distinct = sorted(set(toks))
    freq = dict(zip(distinct, df(distinct), strict=True))
    tf: dict[str, int] = {}
    for t in toks:
        tf[t] = tf.get(t, 0) + 1
    score = {t: tf[t] * math.log((n + 1) / (freq[t] + 0.5)) for t in distinct}
    best = set(sorted(distinct, key=lambda t: (-score[t], t))[:PHRASE_TERMS])
    seen: list[str] = []
    for t in toks:
        if t in best and t not in seen:
            seen.append(t)
    return " ".join(seen)


def _title_ok(corpus: Corpus, i: int) -> bool:
    title = corpus.titles[i]
    stem = Path(corpus.paths[i]).stem
    return len(tokenize(title)) >= 2 and title.strip().lower() != stem.lower()


def pseudo_queries(corpus: Corpus, positions: Sequence[int], df: Frequency
                   ) -> list[PseudoQuery]:
    """One pseudo-query per sampled note (module docstring, step 2)."""
    out: list[PseudoQuery] = []
    for i in positions:
        h = _rank_key("q" + note_key(corpus, i))
        kind = KINDS[h[0] % len(KINDS)]
        sentences = _sentences(corpus.bodies[i])
        text = ""
        if kind == "title" and _title_ok(corpus, i):
            text = corpus.titles[i]
        elif kind != "phrase" and sentences:
            kind, text = "sentence", sentences[h[1] % len(sentences)]
        if not text:
            kind, text = "phrase", _phrase(corpus.bodies[i], df, len(corpus))
        if text:
            out.append(PseudoQuery(i, kind, text))
    return out


def reciprocal_rank(scores: F64, source: int, paths: Sequence[str] | None = None) -> float:
    """1 / (1 + rank of `source`) in the total order of fusion.order (ties by path, then
    position); 0 if it scores <= 0."""
    s = float(scores[source])
    if not s > 0:
        return 0.0
    if paths is None:
        above = int((scores > s).sum()) + int((scores[:source] == s).sum())
    else:
        own = (paths[source], source)
        above = int((scores > s).sum()) + sum(
            1 for i in np.flatnonzero(scores == s).tolist() if (paths[i], i) < own)
    return 1.0 / (1 + above)


def calibrate(corpus: Corpus, channels: Channels, df: Frequency, configured: Mapping[str, float],
              *, k: int, depth: int, encoder: str = "", normalize: str = "range"
              ) -> Calibration:
    """Weights for CHANNELS from pseudo-queries over `corpus` (module docstring, steps 1-4).
    `channels(text)` returns the engine's first-stage scores; `configured` the weights the
    engine would fuse with otherwise; `normalize` its fusion's (fusion.NORMALIZE)."""
    positions = sample_notes(corpus)
    queries = pseudo_queries(corpus, positions, df)
    base = {s: float(configured.get(s, 1.0)) for s in CHANNELS}
    grid_rr = np.zeros((len(GRID), len(queries)), dtype=np.float64)
    alone: dict[str, list[float]] = {}
    for j, q in enumerate(queries):
        sig = {s: np.asarray(v, dtype=np.float64) for s, v in channels(q.text).items()
               if s in CHANNELS}
        for s, v in sorted(sig.items()):
            alone.setdefault(s, []).append(reciprocal_rank(v, q.source, corpus.paths))
        heads = ({s: top(v, depth, paths=corpus.paths) for s, v in sig.items()} if depth > 0
                 else None)
        for g, mult in enumerate(GRID):
            w = {s: base[s] * m for s, m in zip(CHANNELS, mult, strict=True) if s in sig}
            fused = fuse(sig, w, k, normalize, depth, heads, corpus.paths).fused
            grid_rr[g, j] = reciprocal_rank(fused, q.source, corpus.paths)
    means = grid_rr.mean(axis=1) if queries else np.zeros(len(GRID))
    pick = 0
    if len(queries) >= MIN_QUERIES:
        best = int(np.argmax(means))  # the first maximum: grid order
        if means[best] - means[0] > MARGIN:
            pick = best
    mult = GRID[pick]
    weights = {s: base[s] * m for s, m in zip(CHANNELS, mult, strict=True)}
    sample = tuple((corpus.ids[i], note_key(corpus, i)) for i in positions)
    return Calibration(weights, mult, {s: float(np.mean(v)) for s, v in alone.items()},
                       float(means[pick]), float(means[0]), len(queries), len(corpus), sample,
                       encoder, _triple([base[s] for s in CHANNELS]))


def stale(cal: Calibration, corpus: Corpus, encoder: str, configured: Mapping[str, float],
          method: str = "grid") -> str | None:
    """Why `cal` no longer fits `corpus` (module docstring, "recalibration"), or None."""
    if cal.method != method:
        return f"made by {cal.method}"
    if cal.encoder != encoder:
        return "another encoder"
    if cal.configured != tuple(float(configured.get(s, 1.0)) for s in CHANNELS):
        return "other weights configured"
    n = len(corpus)
    if abs(n - cal.notes) > DRIFT * max(cal.notes, 1):
        return f"{counted(n, 'note')}, calibrated on {cal.notes}"
    kept = 0
    for note_id, key in cal.sample:
        try:
            kept += note_key(corpus, corpus.position(note_id)) == key
        except KeyError:
            continue
    if cal.sample and kept < KEEP * len(cal.sample):
        return f"{kept} of {len(cal.sample)} sampled notes unchanged"
    return None


def save(folder: str | Path, cal: Calibration) -> bool:
    """Persist `cal` beside the index; False when the folder cannot be written."""
    folder = Path(folder)
    tmp = folder / f".{FILE}.{os.getpid()}.tmp"
    try:
        with create_temp(tmp) as fh:
            fh.write(json.dumps(cal.to_json(), sort_keys=True).encode("utf-8"))
        os.replace(tmp, folder / FILE)
    except OSError:
        drop_temps(tmp)
        return False
    return True


def load(folder: str | Path) -> Calibration | None:
    """The calibration persisted in `folder`, or None (none, unreadable, another version)."""
    try:
        with open_regular(Path(folder) / FILE) as fh:
            d = json.loads(fh.read().decode("utf-8"))
        return Calibration.from_json(d)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


class Engine(Protocol):
    """What calibration reads of the pipeline's SearchEngine (named here, not imported: the
    pipeline imports this module)."""

    @property
    def params(self) -> Any: ...

    @property
    def encoder(self) -> Any: ...

    def with_params(self, params: Any) -> Engine: ...

    def score(self, corpus: Corpus, query: str) -> Any: ...

    def document_frequency(self, corpus: Corpus, tokens: Sequence[str]) -> list[int]: ...


class Calibrator:
    """One engine's calibration: the current one while it fits the corpus (checked once per
    corpus snapshot), else the one persisted in `folder` when it fits, else a new one from
    `make` (saved there)."""

    def __init__(self, folder: str | None) -> None:
        self.folder = folder
        self.current: Calibration | None = None
        # the corpus `current` was last found to fit (weakly: an old snapshot is not kept)
        self._checked: weakref.ref[Corpus] | None = None

    def known(self) -> Calibration | None:
        """The current calibration, else the one persisted in `folder`; never makes one."""
        if self.current is not None or self.folder is None:
            return self.current
        return load(self.folder)

    def of(self, engine: Engine, corpus: Corpus) -> Calibration | None:
        """`engine`'s calibration for `corpus`, None with its `calibrate` off; pseudo-queries
        are scored by a sibling engine with `calibrate` off (the same derived structures)."""
        p = engine.params
        if not p.calibrate or len(corpus) == 0:
            return None
        plain = engine.with_params(replace(p, calibrate=False, cloze=False))
        fp = engine.encoder.fingerprint if engine.encoder is not None else ""
        conf = {s: p.weight(s) for s in CHANNELS}
        return self.get(corpus, fp, conf, lambda: calibrate(
            corpus, lambda text: plain.score(corpus, text).signals,
            lambda toks: engine.document_frequency(corpus, toks), conf, k=p.rrf_k,
            depth=p.rrf_depth, encoder=fp, normalize=p.normalize))

    def get(self, corpus: Corpus, encoder: str, configured: Mapping[str, float],
            make: Callable[[], Calibration], method: str = "grid") -> Calibration:
        c = self.current
        if c is not None and c.method == method and (
                (self._checked is not None and self._checked() is corpus)
                or stale(c, corpus, encoder, configured, method) is None):
            self._checked = weakref.ref(corpus)
            return c
        got = load(self.folder) if self.folder is not None else None
        if got is None or stale(got, corpus, encoder, configured, method) is not None:
            got = make()
            if self.folder is not None:
                save(self.folder, got)
        self.current, self._checked = got, weakref.ref(corpus)
        return got
