"""A cross-encoder folder whose tokenizer_config.json or config.json is nested past the JSON
parser (each under its 1 MiB cap) is read as one without the value, as any unreadable file is.
Before (PLUG6, session 32) the first was a RecursionError traceback from every command that
opened a vault with that [rerank] model_dir, and the second the same for a 2-label model."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from vault.retrieval.cross_encoder import relevant_column
from vault.retrieval.rerank import OnnxCrossEncoder

from .cross_encoder_exports import build

DEPTHS = [1_500, 20_000, 200_000]
SHAPES = ["{}", '{{"model_max_length": {}}}', '{{"id2label": {{"0": {}, "1": "x"}}}}',
          '{{"id2label": {}}}']


def deep(shape: str, depth: int) -> str:
    return shape.format("[" * depth + "]" * depth)


@pytest.mark.parametrize("depth", DEPTHS)
@pytest.mark.parametrize("shape", SHAPES)
def test_a_nested_tokenizer_config_is_read_as_none(tmp_path: Path, shape: str,
                                                    depth: int) -> None:
    (tmp_path / "plain").mkdir()
    plain = OnnxCrossEncoder.load(build(tmp_path / "plain"))
    (tmp_path / "deep").mkdir()
    folder = build(tmp_path / "deep")
    (folder / "tokenizer_config.json").write_text(deep(shape, depth), encoding="utf-8")
    ce = OnnxCrossEncoder.load(folder)
    passages = ["apple fruit", "car red", "banana " * 400]
    assert np.array_equal(ce.score("apple", passages), plain.score("apple", passages))


@pytest.mark.parametrize("depth", DEPTHS)
@pytest.mark.parametrize("shape", SHAPES)
def test_a_nested_config_json_leaves_the_column_by_convention(tmp_path: Path, shape: str,
                                                             depth: int) -> None:
    (tmp_path / "config.json").write_text(deep(shape, depth), encoding="utf-8")
    column, why = relevant_column(tmp_path)
    assert column == 1 and why.startswith("column 1 by convention"), why
