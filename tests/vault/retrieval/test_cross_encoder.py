"""Every standard cross-encoder export loads and reorders as its logits say; anything else is
one ModelUnavailable at load; a reranker that fails on a query leaves search answering in the
fused order and says so (session 28: int32 ids, fixed axes, a second output and (n, 2) heads
failed at the first query or ranked by the wrong column; NaN logits ranked silently; a FIFO
read as "missing"; a 3 GiB model.onnx was read whole into memory)."""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vault.errors import ModelUnavailable
from vault.retrieval.pipeline import SearchEngine, SearchParams
from vault.retrieval.rerank import OnnxCrossEncoder, sigmoid

from ..retrieval_fixtures import make_corpus
from .cross_encoder_exports import (
    Export,
    build,
    build_unsupported,
    logit,
    save_tokenizer,
)

QUERY = "fruit"
PASSAGES = ["red apple fruit", "car", "banana banana car car red", "apple", "fruit fruit"] * 4

STANDARD = [Export(), Export(types=False), Export(int32=True), Export(head="n"),
            Export(head="n2"), Export(batch=1), Export(seq=128), Export(batch=3, seq=16),
            Export(batch=1, seq=16, int32=True, types=False), Export(extra_output="hidden"),
            Export(head="n2", types=False, int32=True, batch=2)]


def want(ex: Export, passage: str) -> float:
    """The score the export's logits mean: sigmoid(logit); for (n, 2) softmax's column 1."""
    x = logit(QUERY, passage, types=ex.types) * (2 if ex.head == "n2" else 1)
    return float(sigmoid(np.array([x], dtype=np.float64))[0])


@pytest.mark.parametrize("ex", STANDARD, ids=repr)
def test_every_standard_export_scores_as_its_logits_say(tmp_path: Path, ex: Export) -> None:
    ce = OnnxCrossEncoder.load(build(tmp_path, ex))
    got = ce.score(QUERY, PASSAGES)
    assert np.allclose(got, [want(ex, p) for p in PASSAGES], atol=1e-6)


EXPORTS = st.builds(Export, types=st.booleans(), int32=st.booleans(),
                    batch=st.sampled_from(["batch", 1, 2, 5]),
                    seq=st.sampled_from(["seq", 12, 40]), head=st.sampled_from(["n1", "n2", "n"]),
                    extra_output=st.sampled_from(["", "hidden"]))
WORDS = st.lists(st.sampled_from(["apple", "banana", "fruit", "car", "red", "kiwi"]),
                 min_size=1, max_size=30).map(" ".join)


@settings(max_examples=30, deadline=None)
@given(EXPORTS, st.lists(WORDS, min_size=1, max_size=20))
def test_any_export_shape_gives_the_scores_its_logits_mean(
        tmp_path_factory: pytest.TempPathFactory, ex: Export, passages: list[str]) -> None:
    """Any combination of the standard shapes, any passages (a fixed length cuts them: the
    formula is then taken on the cut pair)."""
    ce = OnnxCrossEncoder.load(build(tmp_path_factory.mktemp("ce"), ex))
    length = ex.seq if isinstance(ex.seq, int) else 512
    cut = [" ".join(p.split()[: length - 4]) for p in passages]  # [CLS] q [SEP] p [SEP]
    got = ce.score(QUERY, passages)
    assert np.allclose(got, [want(ex, p) for p in cut], atol=1e-6)


REFUSED = {
    "three labels": Export(head="n3"),
    "ids named otherwise": Export(ids_name="ids"),
    "an input no export has": Export(extra_input="position_ids"),
    "a vocabulary smaller than the tokenizer's": Export(vocab=8),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_a_model_no_reranker_export_is_refused_at_load(tmp_path: Path, name: str) -> None:
    build(tmp_path, REFUSED[name])
    with pytest.raises(ModelUnavailable):
        OnnxCrossEncoder.load(tmp_path)


def _fifo(d: Path) -> Path:
    save_tokenizer(d)
    os.mkfifo(d / "model.onnx")
    return d


def _huge(d: Path) -> Path:
    save_tokenizer(d)
    with open(d / "model.onnx", "wb") as f:
        f.truncate(3 * 2**30)  # sparse: no disk, but 3 GiB if read
    return d


def _folder(d: Path) -> Path:
    save_tokenizer(d)
    (d / "model.onnx").mkdir()
    return d


def _corrupt(d: Path) -> Path:
    build(d)
    (d / "model.onnx").write_bytes(b"\x08garbage")
    return d


def _bad_tokenizer(d: Path) -> Path:
    build(d)
    (d / "tokenizer.json").write_text("{}", encoding="utf-8")
    return d


def _no_pairs(d: Path) -> Path:
    build(d)
    save_tokenizer(d, pair_template=False)
    return d


BROKEN: dict[str, Callable[[Path], Path]] = {
    "model_dir is the model file": lambda d: build(d) / "model.onnx",
    "model.onnx is a folder": _folder,
    "model.onnx is a FIFO": _fifo,
    "model.onnx is 3 GiB": _huge,
    "model.onnx is corrupt": _corrupt,
    "an unsupported op": build_unsupported,
    "no tokenizer.json": lambda d: build(d, tokenizer=False),
    "tokenizer.json is no tokenizer": _bad_tokenizer,
    "a tokenizer that builds no pairs": _no_pairs,
}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_a_broken_folder_is_one_model_unavailable(tmp_path: Path, name: str) -> None:
    with pytest.raises(ModelUnavailable) as err:
        OnnxCrossEncoder.load(BROKEN[name](tmp_path))
    assert "missing model.onnx" not in str(err.value) or name == "no tokenizer.json"


@pytest.mark.parametrize("text", ["{}", "", "not json", '{"model": 5}', "[]"])
def test_a_tokenizer_that_does_not_load_is_named_in_the_reason(tmp_path: Path, text: str
                                                                ) -> None:
    """The tokenizers library's own error ("Model missing. at line 1 column 2") names no file:
    the reason says it is tokenizer.json, not the model, that does not load."""
    build(tmp_path)
    (tmp_path / "tokenizer.json").write_text(text, encoding="utf-8")
    with pytest.raises(ModelUnavailable) as err:
        OnnxCrossEncoder.load(tmp_path)
    assert err.value.reason.startswith("tokenizer.json: "), err.value.reason


def test_symlinks_and_the_hub_layout_load(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    build(real)
    linked = tmp_path / "linked"
    linked.mkdir()
    for name in ("model.onnx", "tokenizer.json"):
        (linked / name).symlink_to(real / name)
    hub = tmp_path / "hub"
    (hub / "onnx").mkdir(parents=True)
    build(hub / "onnx")
    (hub / "onnx" / "tokenizer.json").rename(hub / "tokenizer.json")
    for folder in (linked, hub):
        got = OnnxCrossEncoder.load(folder).score(QUERY, PASSAGES[:5])
        assert np.allclose(got, [want(Export(), p) for p in PASSAGES[:5]], atol=1e-6)


CORPUS = [("car", "fruit car car car"), ("apple", "fruit apple"), ("misc", "fruit banana"),
          ("other", "fruit")]


@pytest.mark.parametrize("poison", [math.nan, math.inf, -math.inf])
def test_non_finite_logits_keep_the_fused_order_and_say_so(tmp_path: Path, poison: float
                                                           ) -> None:
    build(tmp_path, Export(poison=poison, head="n2"))
    corpus = make_corpus(CORPUS)
    plain = SearchEngine(SearchParams()).search(corpus, QUERY, k=4)
    engine = SearchEngine(SearchParams(rerank_top_n=4, rerank_keep=3),
                          reranker=OnnxCrossEncoder.load(tmp_path))
    res = engine.search(corpus, QUERY, k=4)
    assert res.stages["rerank"].startswith("failed: ")
    assert [h.title for h in res.hits] == [h.title for h in plain.hits]
    assert all(h.receipt["rerank"] is None for h in res.hits)


class StopRuns:
    """A pinned bound (cross_encoder.RunBound): while `armed`, stops every run as soon as it
    starts; no clock."""

    def __init__(self, armed: bool) -> None:
        self.armed, self.runs, self.stopped = armed, 0, 0

    @contextmanager
    def watching(self, stop: Callable[[], None]) -> Iterator[None]:
        self.runs += 1
        if self.armed:
            self.stopped += 1
            stop()
        yield

    def __str__(self) -> str:
        return "the pinned bound"


@pytest.mark.parametrize("ex", [Export(), Export(batch=1), Export(head="n2", types=False)])
def test_a_run_the_bound_stops_fails_the_stage_and_search_answers(tmp_path: Path, ex: Export
                                                                 ) -> None:
    """The bound is a parameter (vault reads no clock): armed after load, it stops the query's
    first run; the stage says so and the query keeps the fused order. Unarmed, it reranks."""
    bound = StopRuns(armed=False)
    ce = OnnxCrossEncoder.load(build(tmp_path, ex), bound=bound)
    assert bound.runs >= 1  # the load's test run went through it
    corpus = make_corpus([(f"n{j}", p) for j, p in enumerate(PASSAGES)])
    engine = SearchEngine(SearchParams(rerank_top_n=8, rerank_keep=8), reranker=ce)
    assert engine.search(corpus, QUERY, k=8).stages["rerank"].startswith("ran")
    bound.armed = True
    plain = SearchEngine(SearchParams()).search(corpus, QUERY, k=8)
    res = engine.search(corpus, QUERY, k=8)
    assert bound.stopped == 1
    assert res.stages["rerank"] == "failed: the model ran over the pinned bound; fused order kept"
    assert [h.note for h in res.hits] == [h.note for h in plain.hits]
    assert all(h.receipt["rerank"] is None for h in res.hits)


def test_a_model_stopped_on_the_test_pair_is_refused_at_load(tmp_path: Path) -> None:
    with pytest.raises(ModelUnavailable, match="over the pinned bound"):
        OnnxCrossEncoder.load(build(tmp_path, Export()), bound=StopRuns(armed=True))


def test_retrieval_reads_no_clock() -> None:
    """Time enters retrieval as a parameter (a RunBound, a `now`), never read inside it."""
    root = Path(__file__).resolve().parents[3] / "vault" / "retrieval"
    clock = re.compile(r"threading\.Timer|\btime\.(monotonic|time|perf_counter|process_time)"
                       r"|\b(datetime|date)\.(now|today|utcnow)\(|^\s*import time\b"
                       r"|^\s*from time import", re.MULTILINE)
    found = [f"{f.relative_to(root)}: {m.group(0)}" for f in sorted(root.rglob("*.py"))
             for m in clock.finditer(f.read_text(encoding="utf-8"))]
    assert found == []


def test_weights_kept_as_external_data_load(tmp_path: Path) -> None:
    """Exports over 2 GiB (bge-reranker-large) keep their weights in a file beside model.onnx;
    the model is loaded from its path so onnxruntime finds them (bytes alone cannot)."""
    import onnx
    from onnx import numpy_helper
    from onnx.external_data_helper import set_external_data

    build(tmp_path)
    model = onnx.load(str(tmp_path / "model.onnx"))
    for t in model.graph.initializer:
        if t.name in ("W", "T"):  # the weights; small constants stay inline, as in exports
            t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t), t.name))
            set_external_data(t, "model.onnx_data")
    onnx.save(model, str(tmp_path / "model.onnx"))
    assert (tmp_path / "model.onnx_data").stat().st_size > 0
    got = OnnxCrossEncoder.load(tmp_path).score(QUERY, PASSAGES[:5])
    assert np.allclose(got, [want(Export(), p) for p in PASSAGES[:5]], atol=1e-6)


def test_the_length_is_tokenizer_configs_and_checked_at_load(tmp_path: Path) -> None:
    """A model with 64 positions: refused at load unless tokenizer_config.json says 64 (as
    transformers' exports write it), and then long passages are cut to 64 and scored."""
    build(tmp_path, Export(positions=64))
    with pytest.raises(ModelUnavailable, match="tokenizer's pairs"):
        OnnxCrossEncoder.load(tmp_path)
    (tmp_path / "tokenizer_config.json").write_text('{"model_max_length": 64}', "utf-8")
    long = " ".join(["apple"] * 100)
    got = OnnxCrossEncoder.load(tmp_path).score(QUERY, [long, "car"])
    cut = " ".join(["apple"] * 60)  # 64 = [CLS] fruit [SEP] + 60 + [SEP]
    assert got[0] == pytest.approx(want(Export(), cut), abs=1e-6)
    assert got[1] == pytest.approx(want(Export(), "car"), abs=1e-6)


# id2label of config.json -> the column that means "relevant" (None: no config.json)
LABELS: list[tuple[dict[str, str] | None, int, str]] = [
    (None, 1, "convention"), ({"0": "LABEL_0", "1": "LABEL_1"}, 1, "config.json"),
    ({"0": "relevant", "1": "not relevant"}, 0, "config.json"),
    ({"0": "entailment", "1": "contradiction"}, 0, "config.json"),
    ({"0": "Negative", "1": "Positive"}, 1, "config.json"),
    ({"0": "yes", "1": "other"}, 0, "config.json"),
    ({"0": "other", "1": "Not-Relevant"}, 0, "config.json"),
    ({"0": "LABEL_1", "1": "LABEL_0"}, 0, "config.json"),
    ({"0": "foo", "1": "bar"}, 1, "convention"), ({"0": "yes", "1": "true"}, 1, "convention"),
    ({"0": "only"}, 1, "convention")]


@pytest.mark.parametrize("id2label, column, source", LABELS, ids=repr)
def test_a_two_label_models_relevant_column_is_read_from_config_json(
        tmp_path: Path, id2label: dict[str, str] | None, column: int, source: str) -> None:
    """config.json's id2label says which of two columns means "relevant" (session 28 read
    column 1 always: a model whose label 0 means relevant ranked inverted); labels that name
    no relevance keep the convention, and `relevant` says which was used."""
    build(tmp_path, Export(head="n2"))
    if id2label is not None:
        (tmp_path / "config.json").write_text(json.dumps({"id2label": id2label}), "utf-8")
    ce = OnnxCrossEncoder.load(tmp_path)
    sign = 1 if column == 1 else -1
    want = [float(sigmoid(np.array([sign * 2 * logit(QUERY, p, types=True)]))[0])
            for p in PASSAGES]
    assert np.allclose(ce.score(QUERY, PASSAGES), want, atol=1e-6)
    assert ce.relevant.startswith(f"column {column}") and source in ce.relevant


def test_a_one_logit_model_ignores_config_json(tmp_path: Path) -> None:
    build(tmp_path, Export(head="n1"))
    (tmp_path / "config.json").write_text('{"id2label": {"0": "irrelevant"}}', "utf-8")
    ce = OnnxCrossEncoder.load(tmp_path)
    assert ce.relevant == ""
    assert np.allclose(ce.score(QUERY, PASSAGES), [want(Export(), p) for p in PASSAGES])
