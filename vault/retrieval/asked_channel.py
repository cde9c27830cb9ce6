"""The query-log neighbours channel (learning v7, vault/learning/asked.py): a used note is
lifted for a question whose embedding is close to one of the questions it was used for.

    x(d, Q) = q(d) * g(max_k cos(e(Q), e(Q_dk)))        (asked.py: q, g, the kept Q_dk)

e() is the dense channel's encoder (signals/dense.py embeds the query the same way; MiniLM by
default). The kept queries are embedded through the embedding cache under the encoder's
fingerprint, each distinct text once per search, so a new process pays each text once. The
values are fused like the word channel (scope.py `expansion_channel`: each note adds
w_asked x(d) / (k + rank + 1)) and held below the notes the query names (learned_stages.py).
Without an encoder the channel is skipped.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ..learning.asked import gate
from ..learning.usage import Asked
from ..storage.embeddings import EmbeddingCache
from .encoders import Encoder, encode_cached
from .scope import expansion_channel

F64 = npt.NDArray[np.float64]


def asked_values(encoder: Encoder, cache: EmbeddingCache | None, query: str, asked: Asked,
                 n: int, floor: float, walk: bool = False,
                 qvec: npt.ArrayLike | None = None) -> F64:
    """x(d, Q) per corpus position (module docstring); 0 for a note without kept queries.
    `walk`: each kept query's gate g_t is shared, g_t * g_t / sum_t' g_t' (one step of the
    click graph's walk from Q to the logged queries, Craswell & Szummer 2007), and a note
    takes its best kept query's share. `qvec`: the query's embedding when the caller has it
    (the pipeline's `Query.vector`, which the dense signal read), else it is embedded here."""
    x = np.zeros(n, dtype=np.float64)
    texts = sorted({t for _, _, kept in asked for t in kept})
    if not texts:
        return x
    qvec = np.asarray(encoder.encode([query])[0] if qvec is None else qvec, dtype=np.float64)
    vecs = np.asarray(encode_cached(encoder, texts, cache), dtype=np.float64)
    g = gate(vecs @ qvec, floor)
    total = float(g.sum())
    if walk and total > 0:
        g = g * g / total
    got = dict(zip(texts, g.tolist(), strict=True))
    for pos, q, kept in asked:
        if not 0 <= pos < n:
            raise ValueError(f"a kept query's note is at position {pos} of {n}")
        x[pos] = max(0.0, q) * max(got[t] for t in kept)
    return x


def asked_channel(sig: dict[str, F64], weights: dict[str, float], encoder: Encoder | None,
                  cache: EmbeddingCache | None, query: str, asked: Asked, weight: float,
                  floor: float, n: int, walk: bool = False,
                  qvec: npt.ArrayLike | None = None) -> str:
    """Stage 3's second learned channel: adds `asked` to `sig`/`weights` when a kept query is
    at least `floor` similar to `query`; returns the stage report."""
    if encoder is None:
        return "skipped: no encoder"
    x = asked_values(encoder, cache, query, asked, n, floor, walk, qvec)
    report = expansion_channel(sig, weights, x, weight, n, name="asked")
    if report.startswith("skipped"):
        return f"skipped: no kept query within similarity {floor}"
    return report[:-1] + f", floor {floor})"
