"""A cross-encoder's output type: float32, float16 and float64 logits score alike; any other
type (bfloat16, integers, a bool, a sequence of tensors) is refused at load naming the type
(PLUG5, session 31: a bfloat16 head was refused as "the model cannot score the tokenizer's
pairs (...); is tokenizer.json this model's?", sending the user to the wrong file; a sequence
output was "has shape []")."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from vault.errors import ModelUnavailable
from vault.retrieval.rerank import OnnxCrossEncoder

from .cross_encoder_exports import save_tokenizer

FEEDS = ("input_ids", "attention_mask", "token_type_ids")
SCORED = {"float": TensorProto.FLOAT, "float16": TensorProto.FLOAT16,
          "double": TensorProto.DOUBLE}
REFUSED = {"bfloat16": TensorProto.BFLOAT16, "int64": TensorProto.INT64,
           "int32": TensorProto.INT32, "bool": TensorProto.BOOL, "uint8": TensorProto.UINT8}


def build(folder: Path, kind: int, *, sequence: bool = False) -> Path:
    """A model whose logit is mean(input_ids) / 8, cast to `kind`, shape (batch, 1) (or
    that tensor in a sequence); the tokenizer of cross_encoder_exports."""
    folder.mkdir(exist_ok=True)
    save_tokenizer(folder)
    inputs = [helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "seq"])
              for n in FEEDS]
    nodes = [helper.make_node("Cast", ["input_ids"], ["ids"], to=TensorProto.FLOAT),
             helper.make_node("ReduceMean", ["ids"], ["mean"], axes=[1], keepdims=1),
             helper.make_node("Div", ["mean", "eight"], ["scaled"]),
             helper.make_node("Cast", ["scaled"], ["cast"], to=kind)]
    if sequence:
        nodes.append(helper.make_node("SequenceConstruct", ["cast"], ["logits"]))
        output = helper.make_tensor_sequence_value_info("logits", kind, None)
    else:
        nodes.append(helper.make_node("Identity", ["cast"], ["logits"]))
        output = helper.make_tensor_value_info("logits", kind, ["batch", 1])
    eight = helper.make_tensor("eight", TensorProto.FLOAT, [], [8.0])
    graph = helper.make_graph(nodes, "g", inputs, [output], initializer=[eight])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, folder / "model.onnx")
    return folder


def test_float_outputs_of_any_width_score_alike(tmp_path: Path) -> None:
    scores = {}
    for name, kind in SCORED.items():
        ce = OnnxCrossEncoder.load(build(tmp_path / name, kind))
        scores[name] = ce.score("apple", ["apple fruit", "car red", "banana"])
    for name in SCORED:
        assert np.allclose(scores[name], scores["double"], atol=1e-3), scores


@pytest.mark.parametrize(("name", "sequence"),
                         [(n, False) for n in sorted(REFUSED)] + [("float", True)])
def test_any_other_output_type_is_refused_naming_it(tmp_path: Path, name: str,
                                                     sequence: bool) -> None:
    kind = REFUSED.get(name, TensorProto.FLOAT)
    with pytest.raises(ModelUnavailable) as err:
        OnnxCrossEncoder.load(build(tmp_path, kind, sequence=sequence))
    reason = str(err.value)
    assert f"({name})" in reason and "not a float32, float16 or float64 tensor" in reason, reason
    assert "tokenizer" not in reason
