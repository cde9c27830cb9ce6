"""A Ctrl-C while a model starts is an interruption, never "model unavailable": pybind11 turns
a SIGINT during `import onnxruntime` into ImportError("initialization failed") caused by the
KeyboardInterrupt (session 26: `rmh search` answered model_unavailable). Every place that
wraps a model's errors (the embedder's tokenizer and session, the cross-encoder, the saved
graph's load and save) raises the interruption again, however deep a native extension buried
it; any other error is still ModelUnavailable (or, for the saved graph, a fallback)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vault.errors import ModelUnavailable
from vault.retrieval import cross_encoder, encoders, onnx_cache, rerank
from vault.retrieval.encoders import MiniLmEncoder
from vault.retrieval.interrupted import interruption, model_error

from .cross_encoder_exports import build

WRAPPERS = st.lists(st.sampled_from([ImportError, RuntimeError, OSError, ValueError, Exception]),
                    min_size=1, max_size=4)
LINKS = st.sampled_from(["cause", "context"])


def _buried(wrappers: list[type[Exception]], links: list[str], interrupt: bool) -> Exception:
    """An error wrapping, through `wrappers` (innermost last) linked by cause or context, a
    KeyboardInterrupt (`interrupt`) or a plain OSError."""
    inner: BaseException = KeyboardInterrupt() if interrupt else OSError("disk")
    for kind, link in zip(reversed(wrappers), links * len(wrappers), strict=False):
        outer = kind("initialization failed")
        if link == "cause":
            outer.__cause__ = inner
        else:
            outer.__context__ = inner
        inner = outer
    assert isinstance(inner, Exception)
    return inner


@given(WRAPPERS, st.lists(LINKS, min_size=1, max_size=4), st.booleans())
def test_a_buried_interrupt_is_found_and_nothing_else_is_one(
        wrappers: list[type[Exception]], links: list[str], interrupt: bool) -> None:
    exc = _buried(wrappers, links, interrupt)
    assert (interruption(exc) is not None) is interrupt
    if interrupt:
        with pytest.raises(KeyboardInterrupt):
            model_error("model.onnx", exc)
    else:
        assert isinstance(model_error("model.onnx", exc), ModelUnavailable)


def test_a_cycle_of_contexts_ends() -> None:
    a, b = RuntimeError("a"), RuntimeError("b")
    a.__context__, b.__context__ = b, a
    assert interruption(a) is None


_ENCODER: list[MiniLmEncoder] = []


@pytest.fixture(scope="module")
def ce_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One tiny cross-encoder export for every example."""
    return build(tmp_path_factory.mktemp("ce"))


def _encoder() -> MiniLmEncoder:
    """One encoder for every example; its session is never made (cpu_session fails)."""
    if not _ENCODER:
        _ENCODER.append(MiniLmEncoder())
    return _ENCODER[0]


def _failing(exc: BaseException) -> Any:
    def make(*_args: Any, **_kwargs: Any) -> Any:
        raise exc
    return make


@settings(max_examples=25, deadline=None)
@given(WRAPPERS, st.lists(LINKS, min_size=1, max_size=4), st.booleans())
def test_every_model_start_raises_the_interrupt(
        ce_folder: Path, wrappers: list[type[Exception]], links: list[str], interrupt: bool
) -> None:
    exc = _buried(wrappers, links, interrupt)
    expected: type[BaseException] = KeyboardInterrupt if interrupt else ModelUnavailable
    enc = _encoder()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(encoders, "cpu_session", _failing(exc))
        with pytest.raises(expected):
            enc.encode(["a text"])
        mp.setattr(cross_encoder, "cpu_session", _failing(exc))
        with pytest.raises(expected):
            rerank.OnnxCrossEncoder.load(ce_folder)


@pytest.mark.parametrize("where", ["load", "save"])
def test_the_saved_graph_does_not_swallow_an_interrupt(tmp_path: Path, where: str) -> None:
    """A load or save of the saved graph that fails falls back to the shipped bytes; one that
    failed because of a Ctrl-C stops instead."""
    buried = _buried([ImportError], ["cause"], True)
    calls: list[dict[str, Any]] = []

    def make(model: Any, threads: int, **kwargs: Any) -> Any:
        calls.append(kwargs)
        if where == "load" or kwargs.get("save_to") is not None:
            raise buried
        return "plain session"

    if where == "load":
        saved = tmp_path / (onnx_cache.PREFIX + onnx_cache.key("fp", _ort_version()))
        saved.mkdir()
        (saved / onnx_cache.PROBE).write_bytes(b"probe")
    with pytest.raises(KeyboardInterrupt):
        onnx_cache.session(lambda: b"model", "fp", 1, tmp_path, make)
    assert calls and all(c.get("save_to") is None or where == "save" for c in calls)
    plain = _buried([ImportError], ["cause"], False)
    assert onnx_cache.session(lambda: b"model", "fp", 1, tmp_path,
                              lambda *a, **k: _plain_after(plain, k)) == "plain session"


def _plain_after(exc: BaseException, kwargs: dict[str, Any]) -> Any:
    if kwargs.get("save_to") is not None or kwargs.get("optimize") is False:
        raise exc
    return "plain session"


def _ort_version() -> str:
    import onnxruntime as ort

    return str(ort.__version__)
