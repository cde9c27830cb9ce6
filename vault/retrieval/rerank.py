"""Cross-encoder rerank stage: re-score the fused head with a local ONNX cross-encoder.

Model layout (ms-marco-MiniLM-L-6-v2 family, e.g. exported with Hugging Face optimum): a
folder holding `model.onnx`, whose inputs are `input_ids`, `attention_mask` and (optionally)
`token_type_ids` (int64, shape (batch, seq)) and whose first output holds one relevance logit
per pair (shape (batch, 1) or (batch,)), and `tokenizer.json` (a `tokenizers` file whose post
processor builds "[CLS] query [SEP] passage [SEP]" pairs with type ids 0/1). The score is
sigmoid(logit) in (0, 1). Pairs are truncated to `max_tokens` (longest first) and padded to the
longest pair in the batch.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from ..errors import ModelUnavailable
from ..storage.corpus import Corpus
from .encoders import cpu_session
from .interrupted import model_error

RERANK_CHARS = 4000  # passage text handed to the cross-encoder (its tokenizer truncates too)
MAX_TOKENS = 512
BATCH_SIZE = 16


class CrossEncoder(Protocol):
    """Scores (query, passage) pairs; higher is more relevant, each score in [0, 1]."""

    @property
    def fingerprint(self) -> str: ...

    def score(self, query: str, passages: Sequence[str]) -> npt.NDArray[np.float64]: ...


def sigmoid(x: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Numerically stable logistic function 1 / (1 + e^-x)."""
    e = np.exp(-np.abs(x))  # in (0, 1]: never overflows
    out: npt.NDArray[np.float64] = np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))
    return out


class OnnxCrossEncoder:
    """A cross-encoder loaded from `model.onnx` + `tokenizer.json` in one folder."""

    def __init__(self, session: Any, tokenizer: Any, fingerprint: str) -> None:
        self._session = session
        self._tokenizer = tokenizer
        self._inputs = {i.name for i in session.get_inputs()}
        self._fp = fingerprint

    @classmethod
    def load(
        cls, model_dir: str | Path, *, threads: int = 1, max_tokens: int = MAX_TOKENS
    ) -> OnnxCrossEncoder:
        """Load the folder's model and tokenizer; ModelUnavailable when either is unusable."""
        from tokenizers import Tokenizer

        folder = Path(model_dir)
        model_file, tok_file = folder / "model.onnx", folder / "tokenizer.json"
        for f in (model_file, tok_file):
            if not f.is_file():
                raise ModelUnavailable("cross-encoder", f"missing {f.name} in {folder}")
        try:
            model_bytes = model_file.read_bytes()
            tokenizer = Tokenizer.from_file(str(tok_file))
            tokenizer.no_padding()
            tokenizer.enable_truncation(max_length=max_tokens)
            tokenizer.enable_padding(pad_id=tokenizer.token_to_id("[PAD]") or 0)
            session = cpu_session(model_bytes, threads)
        except Exception as exc:  # tokenizers/onnxruntime raise untyped errors
            raise model_error("cross-encoder", exc) from exc
        names = {i.name for i in session.get_inputs()}
        if not {"input_ids", "attention_mask"} <= names:
            raise ModelUnavailable("cross-encoder", f"unexpected inputs {sorted(names)}")
        fp = hashlib.sha256(model_bytes).hexdigest()
        return cls(session, tokenizer, fp)

    @property
    def fingerprint(self) -> str:
        return self._fp

    def score(self, query: str, passages: Sequence[str]) -> npt.NDArray[np.float64]:
        """sigmoid(logit) for each (query, passage) pair, in input order."""
        out = np.zeros(len(passages), dtype=np.float64)
        for start in range(0, len(passages), BATCH_SIZE):
            batch = [(query, p) for p in passages[start : start + BATCH_SIZE]]
            encs = self._tokenizer.encode_batch(batch)
            ids = np.array([e.ids for e in encs], dtype=np.int64)
            feeds = {
                "input_ids": ids,
                "attention_mask": np.array([e.attention_mask for e in encs], dtype=np.int64),
            }
            if "token_type_ids" in self._inputs:
                feeds["token_type_ids"] = np.array([e.type_ids for e in encs], dtype=np.int64)
            logits = np.asarray(self._session.run(None, feeds)[0], dtype=np.float64)
            out[start : start + len(batch)] = sigmoid(logits.reshape(len(batch), -1)[:, 0])
        return out


def rerank_order(
    head: Sequence[int], rerank: npt.NDArray[np.float64], fused: npt.NDArray[np.float64]
) -> list[int]:
    """Head positions sorted by rerank score desc, then fused score desc, then their order
    in `head` (which broke ties by path: fusion.stable_order)."""
    keyed = sorted(range(len(head)), key=lambda j: (-rerank[j], -fused[head[j]], j))
    return [head[j] for j in keyed]


def cross_encode(reranker: CrossEncoder | None, corpus: Corpus, query: str, ranked: list[int],
                 final: npt.NDArray[np.float64], top_n: int, keep: int
                 ) -> tuple[list[int], dict[int, float], str]:
    """The pipeline's stage 7: the first `top_n` of `ranked` scored by `reranker`, its best
    `keep` first, the rest in the order before; the new order, the scores, the report."""
    if reranker is None:
        return ranked, {}, "skipped: no model"
    if not ranked:
        return ranked, {}, "skipped: no candidates"
    head = ranked[:top_n]
    passages = [f"{corpus.titles[i]}\n{corpus.bodies[i]}"[:RERANK_CHARS] for i in head]
    scores = reranker.score(query, passages)
    rer = {i: float(scores[j]) for j, i in enumerate(head)}
    kept = rerank_order(head, scores, final)[:keep]
    kept_set = set(kept)
    return (kept + [i for i in ranked if i not in kept_set], rer,
            f"ran (top {len(head)}, keep {len(kept)})")
