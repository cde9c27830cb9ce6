"""The cross-encoder path end to end with a tiny BERT-shaped ONNX model built here."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

from vault.errors import ModelUnavailable
from vault.retrieval.pipeline import SearchEngine, SearchParams
from vault.retrieval.rerank import OnnxCrossEncoder, sigmoid

from ..retrieval_fixtures import make_corpus

VOCAB = {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, "apple": 4, "banana": 5, "fruit": 6,
         "car": 7, "red": 8}
TOKEN_W = np.array([0, 0, 0, 0, 3.0, -1.0, 0.5, -2.0, 0.25], dtype=np.float32)
TYPE_W = np.array([0.0, 0.5], dtype=np.float32)
BIAS = -0.3


def build_model(folder: Path) -> None:
    """logit = mean over attended tokens of (w[token] + t[type]) + bias; inputs as ms-marco."""
    ids = helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["b", "s"])
    mask = helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["b", "s"])
    types = helper.make_tensor_value_info("token_type_ids", TensorProto.INT64, ["b", "s"])
    out = helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["b", 1])
    inits = [
        helper.make_tensor("W", TensorProto.FLOAT, [len(VOCAB), 1], TOKEN_W.tolist()),
        helper.make_tensor("T", TensorProto.FLOAT, [2, 1], TYPE_W.tolist()),
        helper.make_tensor("bias", TensorProto.FLOAT, [1], [BIAS]),
        helper.make_tensor("axis1", TensorProto.INT64, [1], [1]),
        helper.make_tensor("axis2", TensorProto.INT64, [1], [2]),
    ]
    nodes = [
        helper.make_node("Gather", ["W", "input_ids"], ["tok"]),  # (b, s, 1)
        helper.make_node("Gather", ["T", "token_type_ids"], ["typ"]),
        helper.make_node("Add", ["tok", "typ"], ["emb"]),
        helper.make_node("Cast", ["attention_mask"], ["m"], to=TensorProto.FLOAT),
        helper.make_node("Unsqueeze", ["m", "axis2"], ["m3"]),
        helper.make_node("Mul", ["emb", "m3"], ["masked"]),
        helper.make_node("ReduceSum", ["masked", "axis1"], ["total"], keepdims=0),  # (b, 1)
        helper.make_node("ReduceSum", ["m3", "axis1"], ["count"], keepdims=0),
        helper.make_node("Div", ["total", "count"], ["mean"]),
        helper.make_node("Add", ["mean", "bias"], ["logits"]),
    ]
    graph = helper.make_graph(nodes, "tiny-cross-encoder", [ids, mask, types], [out], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(folder / "model.onnx"))
    tok = Tokenizer(models.WordLevel(VOCAB, unk_token="[UNK]"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", 2), ("[SEP]", 3)])
    tok.save(str(folder / "tokenizer.json"))


def expected(query: str, passage: str) -> float:
    q = [VOCAB.get(w, 1) for w in query.lower().split()]
    p = [VOCAB.get(w, 1) for w in passage.lower().split()]
    ids = [2, *q, 3, *p, 3]
    types = [0] * (len(q) + 2) + [1] * (len(p) + 1)
    logit = np.mean([TOKEN_W[i] + TYPE_W[t] for i, t in zip(ids, types, strict=True)]) + BIAS
    return float(sigmoid(np.array([logit], dtype=np.float64))[0])


def test_load_and_score_match_the_formula(tmp_path: Path) -> None:
    build_model(tmp_path)
    ce = OnnxCrossEncoder.load(tmp_path)
    passages = ["red apple fruit", "car", "banana banana car car red", "apple"]
    got = ce.score("fruit", passages)
    want = [expected("fruit", p) for p in passages]
    assert np.allclose(got, want, atol=1e-6)  # padding to the longest pair changes nothing
    assert got[3] > got[0] > got[1]
    assert len(ce.fingerprint) == 64


def test_missing_files_raise_model_unavailable(tmp_path: Path) -> None:
    with pytest.raises(ModelUnavailable):
        OnnxCrossEncoder.load(tmp_path)
    (tmp_path / "model.onnx").write_bytes(b"not onnx")
    (tmp_path / "tokenizer.json").write_text("{}")
    with pytest.raises(ModelUnavailable):
        OnnxCrossEncoder.load(tmp_path)


def test_pipeline_reranks_head_and_reports_it(tmp_path: Path) -> None:
    build_model(tmp_path)
    corpus = make_corpus([("car", "fruit car car car"), ("apple", "fruit apple"),
                          ("misc", "fruit banana"), ("other", "nothing here")])
    plain = SearchEngine(SearchParams())
    res = plain.search(corpus, "fruit", k=3)
    assert res.stages["rerank"] == "skipped: no model"
    assert all(h.receipt["rerank"] is None for h in res.hits)
    engine = SearchEngine(SearchParams(rerank_top_n=3, rerank_keep=2),
                          reranker=OnnxCrossEncoder.load(tmp_path))
    res = engine.search(corpus, "fruit", k=4)
    assert res.stages["rerank"].startswith("ran")
    assert res.hits[0].title == "apple"  # the cross-encoder's favourite leads
    reranked = [h for h in res.hits if h.receipt["rerank"] is not None]
    assert len(reranked) == 3
    assert res.hits[0].receipt["rerank"] == pytest.approx(expected("fruit", "apple\nfruit apple"))
