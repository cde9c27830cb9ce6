"""A Ctrl-C that a native extension wrapped while a model was starting: found, and raised again.

pybind11's module init turns a SIGINT during `import onnxruntime` into ImportError
("initialization failed") caused by the KeyboardInterrupt, and onnxruntime raises that again;
code that wraps a model's errors in ModelUnavailable (encoders.py, rerank.py) or falls back on
them (onnx_cache.py) reported a Ctrl-C at start-up as "model unavailable: model.onnx
(initialization failed)" (session 26). Each asks `interruption` first.
"""

from __future__ import annotations

from ..errors import ModelUnavailable


def model_error(what: str, exc: BaseException) -> ModelUnavailable:
    """ModelUnavailable(`what`, why) for `exc`, an error loading a model; but a Ctrl-C that a
    native extension turned into an error on the way is raised again as the interruption it
    is (`interruption`), never reported as a model fault."""
    if (stop := interruption(exc)) is not None:
        raise stop from exc
    return ModelUnavailable(what, str(exc))


def interruption(exc: BaseException) -> KeyboardInterrupt | None:
    """The KeyboardInterrupt in `exc`'s chain of causes and contexts (a copy), or None
    (module docstring; a cycle of contexts ends the walk)."""
    seen: set[int] = set()
    link: BaseException | None = exc
    while link is not None and id(link) not in seen:
        if isinstance(link, KeyboardInterrupt):
            return KeyboardInterrupt(*link.args)
        seen.add(id(link))
        link = link.__cause__ or link.__context__
    return None
