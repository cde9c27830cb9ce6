"""Tiny ONNX cross-encoders in every shape a real export takes (optimum/transformers: BERT with
`token_type_ids`, XLM-R/bge without; int64 or int32 ids; `logits` (n, 1), (n, 2) or (n,);
dynamic or fixed batch and sequence axes) and a few broken ones, for the rerank tests.

Each model scores a pair as logit = mean over attended tokens of (W[token] + T[type]) + BIAS;
a (n, 2) head puts -logit in column 0 and +logit in column 1 (column 1 is "relevant")."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

VOCAB = {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, "apple": 4, "banana": 5, "fruit": 6,
         "car": 7, "red": 8}
TOKEN_W = np.array([0, 0, 0, 0, 3.0, -1.0, 0.5, -2.0, 0.25], dtype=np.float32)
TYPE_W = np.array([0.0, 0.5], dtype=np.float32)
BIAS = -0.3


@dataclass(frozen=True)
class Export:
    """One export's shape: its inputs, their type and axes, its head."""

    types: bool = True             # a token_type_ids input (BERT) or not (XLM-R, bge)
    int32: bool = False            # int32 ids instead of int64
    batch: int | str = "batch"     # a fixed batch size, or a dynamic axis name
    seq: int | str = "seq"         # a fixed sequence length, or a dynamic axis name
    head: str = "n1"               # "n1": (n, 1); "n2": (n, 2); "n": (n,); "n3": (n, 3)
    ids_name: str = "input_ids"
    extra_input: str = ""          # one more required input of that name
    extra_output: str = ""         # one more output (first), of that name
    poison: float = 0.0            # W["car"] set to this (nan, inf) when not 0
    vocab: int = len(VOCAB)        # rows of W (fewer than the tokenizer's: a mismatch)
    positions: int = 0             # a position table of this many rows (0: none)


def build(folder: Path, ex: Export = Export(), *, tokenizer: bool = True) -> Path:
    """Write `model.onnx` (and `tokenizer.json`) for `ex` into `folder`; the folder."""
    itype = TensorProto.INT32 if ex.int32 else TensorProto.INT64
    axes = [ex.batch, ex.seq]
    inputs = [helper.make_tensor_value_info(ex.ids_name, itype, axes),
              helper.make_tensor_value_info("attention_mask", itype, axes)]
    w = TOKEN_W.copy()
    if ex.poison:
        w[VOCAB["car"]] = ex.poison
    w = w[: ex.vocab]
    inits = [helper.make_tensor("W", TensorProto.FLOAT, [len(w), 1], w.tolist()),
             helper.make_tensor("T", TensorProto.FLOAT, [2, 1], TYPE_W.tolist()),
             helper.make_tensor("bias", TensorProto.FLOAT, [1], [BIAS]),
             helper.make_tensor("axis1", TensorProto.INT64, [1], [1]),
             helper.make_tensor("axis2", TensorProto.INT64, [1], [2]),
             helper.make_tensor("two", TensorProto.FLOAT, [1, 2], [-1.0, 1.0]),
             helper.make_tensor("three", TensorProto.FLOAT, [1, 3], [-1.0, 0.0, 1.0])]
    nodes = [helper.make_node("Gather", ["W", ex.ids_name], ["emb"])]
    if ex.types:
        inputs.append(helper.make_tensor_value_info("token_type_ids", itype, axes))
        nodes += [helper.make_node("Gather", ["T", "token_type_ids"], ["typ"]),
                  helper.make_node("Add", ["emb", "typ"], ["emb_t"])]
    last = "emb_t" if ex.types else "emb"
    if ex.extra_input:
        inputs.append(helper.make_tensor_value_info(ex.extra_input, itype, axes))
        nodes.append(helper.make_node("Cast", [ex.extra_input], ["extra_f"],
                                      to=TensorProto.FLOAT))
        nodes.append(helper.make_node("Unsqueeze", ["extra_f", "axis2"], ["extra3"]))
        nodes.append(helper.make_node("Mul", [last, "extra3"], ["emb_x"]))
        nodes.append(helper.make_node("Div", ["emb_x", "extra3"], ["emb_y"]))
        last = "emb_y"
    if ex.positions:  # emb += P[arange(seq)] (zeros), as BERT: fails past P's rows
        inits += [helper.make_tensor("P", TensorProto.FLOAT, [ex.positions, 1],
                                     [0.0] * ex.positions),
                  helper.make_tensor("one", TensorProto.INT64, [], [1]),
                  helper.make_tensor("zero", TensorProto.INT64, [], [0])]
        nodes += [helper.make_node("Shape", [ex.ids_name], ["shape"]),
                  helper.make_node("Gather", ["shape", "one"], ["length"]),
                  helper.make_node("Range", ["zero", "length", "one"], ["pos"]),
                  helper.make_node("Gather", ["P", "pos"], ["pos_emb"]),  # (seq, 1)
                  helper.make_node("Add", [last, "pos_emb"], ["emb_p"])]
        last = "emb_p"
    nodes += [
        helper.make_node("Cast", ["attention_mask"], ["m"], to=TensorProto.FLOAT),
        helper.make_node("Unsqueeze", ["m", "axis2"], ["m3"]),
        helper.make_node("Mul", [last, "m3"], ["masked"]),
        helper.make_node("ReduceSum", ["masked", "axis1"], ["total"], keepdims=0),  # (b, 1)
        helper.make_node("ReduceSum", ["m3", "axis1"], ["count"], keepdims=0),
        helper.make_node("Div", ["total", "count"], ["mean"]),
    ]
    head = {"n1": ("logit1", [ex.batch, 1]), "n2": ("logit2", [ex.batch, 2]),
            "n": ("logit0", [ex.batch]), "n3": ("logit3", [ex.batch, 3])}[ex.head]
    nodes += [helper.make_node("Add", ["mean", "bias"], ["logit1"]),
              helper.make_node("Squeeze", ["logit1", "axis1"], ["logit0"]),
              helper.make_node("Mul", ["logit1", "two"], ["logit2"]),
              helper.make_node("Mul", ["logit1", "three"], ["logit3"])]
    nodes.append(helper.make_node("Identity", [head[0]], ["logits"]))
    outputs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, head[1])]
    if ex.extra_output:
        nodes.append(helper.make_node("Identity", ["masked"], [ex.extra_output]))
        outputs.insert(0, helper.make_tensor_value_info(
            ex.extra_output, TensorProto.FLOAT, [ex.batch, ex.seq, 1]))
    graph = helper.make_graph(nodes, "tiny-cross-encoder", inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(folder / "model.onnx"))
    if tokenizer:
        save_tokenizer(folder)
    return folder


def save_tokenizer(folder: Path, *, pair_template: bool = True) -> None:
    """The BERT-style WordLevel tokenizer of VOCAB ("[CLS] q [SEP] p [SEP]", types 0/1)."""
    tok = Tokenizer(models.WordLevel(VOCAB, unk_token="[UNK]"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    if pair_template:
        tok.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
            special_tokens=[("[CLS]", 2), ("[SEP]", 3)])
    tok.save(str(folder / "tokenizer.json"))


def logit(query: str, passage: str, *, types: bool = True) -> float:
    """The model's logit for one pair, computed by hand (`types`: the export has a
    token_type_ids input)."""
    q = [VOCAB.get(w, 1) for w in query.lower().split()]
    p = [VOCAB.get(w, 1) for w in passage.lower().split()]
    ids = [2, *q, 3, *p, 3]
    kinds = [0] * (len(q) + 2) + [1] * (len(p) + 1)
    return float(np.mean([TOKEN_W[i] + TYPE_W[t] * types for i, t in zip(ids, kinds, strict=True)])
                 + BIAS)


def build_slow(folder: Path, token: str, trips_per_token: int) -> Path:
    """A model whose run loops `trips_per_token` times per `token` in its input over a
    256x256 MatMul, giving logit = number of attended tokens; and the tokenizer."""
    eye = np.eye(256, dtype=np.float32).ravel().tolist()
    body = helper.make_graph(
        [helper.make_node("MatMul", ["v_in", "M"], ["v_out"]),
         helper.make_node("Identity", ["cond_in"], ["cond_out"])], "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v_in", TensorProto.FLOAT, [1, 256])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v_out", TensorProto.FLOAT, [1, 256])],
        [helper.make_tensor("M", TensorProto.FLOAT, [256, 256], eye)])
    axes = ["batch", "seq"]
    inputs = [helper.make_tensor_value_info(n, TensorProto.INT64, axes)
              for n in ("input_ids", "attention_mask")]
    nodes = [helper.make_node("Equal", ["input_ids", "slow_id"], ["hit"]),
             helper.make_node("Cast", ["hit"], ["hit_i"], to=TensorProto.INT64),
             helper.make_node("ReduceSum", ["hit_i"], ["tokens"], keepdims=0),
             helper.make_node("Mul", ["tokens", "K"], ["trips"]),
             helper.make_node("Loop", ["trips", "true", "v0"], ["v_n"], body=body),
             helper.make_node("ReduceSum", ["v_n"], ["zero"], keepdims=1),  # (1, 1): 0
             helper.make_node("Cast", ["attention_mask"], ["m"], to=TensorProto.FLOAT),
             helper.make_node("ReduceSum", ["m", "axis1"], ["count"], keepdims=1),
             helper.make_node("Add", ["count", "zero"], ["logits"])]
    inits = [helper.make_tensor("K", TensorProto.INT64, [], [trips_per_token]),
             helper.make_tensor("slow_id", TensorProto.INT64, [], [VOCAB[token]]),
             helper.make_tensor("true", TensorProto.BOOL, [], [True]),
             helper.make_tensor("v0", TensorProto.FLOAT, [1, 256], [0.0] * 256),
             helper.make_tensor("axis1", TensorProto.INT64, [1], [1])]
    out = helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 1])
    graph = helper.make_graph(nodes, "slow-cross-encoder", inputs, [out], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(folder / "model.onnx"))
    save_tokenizer(folder)
    return folder


def build_unsupported(folder: Path) -> Path:
    """A model.onnx whose one node is an op no runtime has; and the tokenizer."""
    ids = helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["b", "s"])
    out = helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["b", 1])
    node = helper.make_node("NoSuchOp", ["input_ids"], ["logits"], domain="com.example")
    graph = helper.make_graph([node], "unsupported", [ids], [out])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid("com.example", 1)])
    (folder / "model.onnx").write_bytes(model.SerializeToString())
    save_tokenizer(folder)
    return folder
