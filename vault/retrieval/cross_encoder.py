"""A local ONNX cross-encoder: any standard sequence-classification export of a reranker.

What loads (the shapes optimum / transformers exports of ms-marco-MiniLM, bge-reranker and
their kin take): a folder with `model.onnx` (or `onnx/model.onnx`, the Hugging Face Hub
layout) and `tokenizer.json`. Inputs: `input_ids` and `attention_mask`, and `token_type_ids`
when the model has them (BERT; XLM-R/bge have none), int64 or int32, shape (batch, seq) with
either axis dynamic or fixed (a fixed batch is filled with copies and cut; a fixed length is
padded to). Output: `logits` (or the only output), shape (n,), (n, 1) or (n, 2).

Score (as sentence-transformers' CrossEncoder.predict, which applies Sigmoid when
num_labels == 1): sigmoid(logit) for one logit; for two, softmax's relevant column r =
sigmoid(l_r - l_(1-r)). r is read from config.json's `id2label` beside the model when one of
its two labels names relevance (RELEVANT: LABEL_1, "relevant", "entailment", ...) or the
other its absence (IRRELEVANT); else r = 1 by convention (LABEL_1 of a binary classifier, as
monoBERT), and the stage report says which (`OnnxCrossEncoder.relevant`). More labels is an
error, as CrossEncoder.rank() refuses num_labels != 1.

Pairs are cut to MAX_TOKENS, a fixed sequence axis, or `model_max_length` in
tokenizer_config.json (transformers' own limit) when it is smaller. `load` checks all of this
and runs the model once on a full-length pair holding the tokenizer's largest id, so a model
that cannot serve (unknown input, unsupported op, a tokenizer of another vocabulary, fewer
positions than the length, a non-finite score) is one ModelUnavailable at load, never a
failure at the first query.
Each run can be bounded: a `RunBound` given at load watches every run (the load's test run
too) and may call `stop`; onnxruntime is then told to stop (RunOptions.terminate) and the run
fails (RerankFailed, "the model ran over <bound>"), so a slow model costs a query its rerank,
never a hang. vault reads no clock for it: the bound is a parameter, the shell's wall clock
(harness/run_bound.py `WallClock`, rmh.toml `[rerank] timeout_s`) or any other a caller pins
(a test's bound stops the Nth run). Without one, runs are not bounded. The bound decides only
whether the stage ran, and the receipt says which.
"""

from __future__ import annotations

import hashlib
import json
import stat
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from ..errors import ModelUnavailable
from ..plural import counted
from .encoders import cpu_session, tokenizable
from .interrupted import model_error

MAX_TOKENS = 512
BATCH_SIZE = 16
MAX_MODEL_BYTES = 2**31  # protobuf's limit: bigger exports keep weights in external data
MAX_TOKENIZER_BYTES = 2**28
FEEDS = ("input_ids", "attention_mask", "token_type_ids")
INT_TYPES: dict[str, type[np.integer[Any]]] = {"tensor(int64)": np.int64,
                                             "tensor(int32)": np.int32}
FLOAT_TYPES = ("tensor(float)", "tensor(float16)", "tensor(double)")
PAD_TOKENS = ("[PAD]", "<pad>", "<|pad|>")
# id2label names (lower case, "-" and " " as "_") of a binary classifier's two columns
RELEVANT = ("label_1", "relevant", "entailment", "entailed", "positive", "pos", "yes", "true",
            "1", "match", "matched", "related", "similar", "duplicate", "paraphrase")
IRRELEVANT = ("label_0", "irrelevant", "not_relevant", "non_relevant", "nonrelevant",
              "contradiction", "not_entailment", "negative", "neg", "no", "false", "0",
              "no_match", "mismatch", "unrelated", "dissimilar", "not_duplicate",
              "not_paraphrase")
WHAT = "cross-encoder"


class RunBound(Protocol):
    """When one model run must stop (module docstring): `watching(stop)` is a context around
    the run that calls `stop` (from any thread) once the run has to end; str() names the bound
    in the failure ("the model ran over 30 s")."""

    def watching(self, stop: Callable[[], None]) -> AbstractContextManager[object]: ...


def sigmoid(x: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Numerically stable logistic function 1 / (1 + e^-x)."""
    e = np.exp(-np.abs(x))  # in (0, 1]: never overflows
    out: npt.NDArray[np.float64] = np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))
    return out


class RerankFailed(Exception):
    """The cross-encoder could not score a query's pairs; the stage keeps the fused order."""


@dataclass(frozen=True)
class Signature:
    """What the model takes and gives: its feeds (name, integer type) in FEEDS order, fixed
    batch size and sequence length (None: dynamic), the output read and its label count
    (0: shape (n,); None: a dynamic last axis, checked on each run)."""

    feeds: tuple[tuple[str, type[np.integer[Any]]], ...]
    batch: int | None
    seq: int | None
    output: str
    labels: int | None


def _fail(reason: str) -> ModelUnavailable:
    return ModelUnavailable(WHAT, reason)


def _fixed(dims: Sequence[Any], axis: str) -> int | None:
    """The one fixed size the inputs give an axis, or None when it is dynamic in all."""
    sizes = sorted({d for d in dims if isinstance(d, int) and d > 0})
    if len(sizes) > 1:
        raise _fail(f"the inputs disagree on the {axis} axis: sizes {sizes}")
    return sizes[0] if sizes else None


def signature(session: Any) -> Signature:
    """The model's Signature; ModelUnavailable naming what no cross-encoder export has."""
    inputs = {i.name: i for i in session.get_inputs()}
    unknown = sorted(set(inputs) - set(FEEDS))
    if unknown:
        raise _fail(f"input {unknown[0]!r} is not one of {', '.join(FEEDS)}")
    missing = [n for n in FEEDS[:2] if n not in inputs]
    if missing:
        raise _fail(f"no {missing[0]!r} input (inputs: {', '.join(sorted(inputs))})")
    feeds = []
    for name in (n for n in FEEDS if n in inputs):
        arg = inputs[name]
        if arg.type not in INT_TYPES:
            raise _fail(f"input {name!r} is {arg.type}, not int64 or int32")
        if len(arg.shape) != 2:
            raise _fail(f"input {name!r} has shape {arg.shape}, not (batch, sequence)")
        feeds.append((name, INT_TYPES[arg.type]))
    batch = _fixed([inputs[n].shape[0] for n, _ in feeds], "batch")
    seq = _fixed([inputs[n].shape[1] for n, _ in feeds], "sequence")
    outputs = {o.name: o for o in session.get_outputs()}
    if "logits" in outputs:
        out = outputs["logits"]
    elif len(outputs) == 1:
        out = next(iter(outputs.values()))
    else:
        raise _fail(f"several outputs and none named 'logits': {', '.join(sorted(outputs))}")
    if out.type not in FLOAT_TYPES:  # bfloat16 was "cannot score the tokenizer's pairs"
        raise _fail(f"output {out.name!r} is {out.type}, not a float32, float16 or float64 "
                    "tensor")
    labels: int | None = 0
    if len(out.shape) == 2:
        labels = out.shape[1] if isinstance(out.shape[1], int) else None
    elif len(out.shape) != 1:
        raise _fail(f"output {out.name!r} has shape {out.shape}, not (n,), (n, 1) or (n, 2)")
    if labels is not None and labels > 2:
        raise _fail(f"output {out.name!r} has {labels} labels; a reranker has 1 (or 2)")
    return Signature(tuple(feeds), batch, seq, out.name, labels)


def relevance(logits: npt.NDArray[np.float64], n: int, labels: int | None, column: int = 1
              ) -> npt.NDArray[np.float64]:
    """The n scores in (0, 1) from a run's output, `column` the relevant one of two (module
    docstring); RerankFailed when its shape is not one the signature allows or a logit is not
    finite."""
    width = logits.size // n if n and logits.size % n == 0 else -1
    if width not in (1, 2) or (labels is not None and width != max(labels, 1)):
        raise RerankFailed(f"output of shape {logits.shape} for {counted(n, 'pair')}")
    if not np.all(np.isfinite(logits)):
        raise RerankFailed("the model gave a non-finite logit")
    grid = logits.reshape(n, width)
    return sigmoid(grid[:, 0] if width == 1 else grid[:, column] - grid[:, 1 - column])


def relevant_column(folder: Path) -> tuple[int, str]:
    """The column of a 2-label output that means "relevant", read from config.json's
    `id2label` (module docstring), and a line saying where it came from."""
    try:
        raw = json.loads(_regular(folder / "config.json", 1 << 20).read_text("utf-8"))
        table = raw.get("id2label") if isinstance(raw, dict) else None
    except (ModelUnavailable, OSError, ValueError, RecursionError):  # nested: PLUG6
        table = None
    if not isinstance(table, dict) or sorted(table) != ["0", "1"]:
        return 1, "column 1 by convention (no 2-label id2label in config.json)"
    names = [str(table["0"]), str(table["1"])]
    keys = [n.strip().lower().replace("-", "_").replace(" ", "_") for n in names]
    for words, flip in ((RELEVANT, 0), (IRRELEVANT, 1)):  # one names it, or the other not
        hits = [j for j, k in enumerate(keys) if k in words]
        if len(hits) == 1:
            col = hits[0] ^ flip
            return col, f"column {col} {names[col]!r} (config.json)"
    return 1, f"column 1 by convention (config.json's labels {names} name no relevance)"


def _regular(path: Path, limit: int) -> Path:
    """`path` when it is (or links to) a regular file of at most `limit` bytes."""
    try:
        st = path.stat()
    except OSError as exc:
        raise _fail(f"missing {path.name} in {path.parent} ({exc.strerror})") from exc
    if not stat.S_ISREG(st.st_mode):
        raise _fail(f"{path} is not a regular file")
    if st.st_size > limit:
        raise _fail(f"{path} is {st.st_size} bytes, over {limit}")
    return path


def _digest(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _model_max_length(folder: Path, default: int) -> int:
    """tokenizer_config.json's `model_max_length` beside the model (what transformers and
    sentence-transformers cut pairs to), or `default` when it is absent or unset (HF writes
    1e30 for "no limit")."""
    try:
        raw = json.loads(_regular(folder / "tokenizer_config.json", 1 << 20).read_text("utf-8"))
        value = raw.get("model_max_length") if isinstance(raw, dict) else None
    except (ModelUnavailable, OSError, ValueError, RecursionError):  # (nested past the
        return default  # parser: a RecursionError traceback from every command, PLUG6)
    if isinstance(value, int) and not isinstance(value, bool) and value >= 4:
        return value
    return default


def _pad_id(tokenizer: Any) -> int:
    """The tokenizer's own pad id, else that of the first of PAD_TOKENS it has, else 0."""
    if tokenizer.padding is not None:
        return int(tokenizer.padding["pad_id"])
    ids = [tokenizer.token_to_id(t) for t in PAD_TOKENS]
    return next((int(i) for i in ids if i is not None), 0)


class OnnxCrossEncoder:
    """A cross-encoder loaded from a folder (module docstring for what loads)."""

    def __init__(self, session: Any, tokenizer: Any, fingerprint: str, sig: Signature,
                 bound: RunBound | None = None, column: tuple[int, str] = (1, "")) -> None:
        self._session = session
        self._column, self._relevant = column
        self._tokenizer = tokenizer
        self._fp = fingerprint
        self._sig = sig
        self._bound = bound

    @classmethod
    def load(
        cls, model_dir: str | Path, *, threads: int = 1, max_tokens: int = MAX_TOKENS,
        bound: RunBound | None = None,
    ) -> OnnxCrossEncoder:
        """Load and check the folder's model and tokenizer; ModelUnavailable when unusable
        (a test run stopped by `bound` too)."""
        from tokenizers import Tokenizer

        folder = Path(model_dir)
        if not folder.is_dir():
            raise _fail(f"{folder} is not a folder")
        model_file = folder / "model.onnx"
        if not model_file.exists() and (folder / "onnx" / "model.onnx").exists():
            model_file = folder / "onnx" / "model.onnx"
        model_file = _regular(model_file, MAX_MODEL_BYTES)
        tok_file = _regular(folder / "tokenizer.json", MAX_TOKENIZER_BYTES)
        try:  # tokenizers/onnxruntime raise untyped errors; the tokenizer's never names it
            tokenizer = Tokenizer.from_file(str(tok_file))
        except Exception as exc:
            raise _fail(f"tokenizer.json: {model_error(WHAT, exc).reason}") from exc
        try:
            session = cpu_session(str(model_file), threads)  # a path: external data loads
        except Exception as exc:
            raise model_error(WHAT, exc) from exc
        sig = signature(session)
        length = min(max_tokens, sig.seq or max_tokens, _model_max_length(folder, max_tokens))
        pad = _pad_id(tokenizer)
        tokenizer.no_padding()
        tokenizer.enable_truncation(max_length=length)
        tokenizer.enable_padding(pad_id=pad, length=sig.seq)
        column = relevant_column(folder) if sig.labels in (2, None) else (1, "")
        ce = cls(session, tokenizer, _digest(model_file), sig, bound, column)
        ce._check()
        return ce

    def _check(self) -> None:
        """Run the model once on a pair as long as any it will get, holding the tokenizer's
        largest id; ModelUnavailable when the tokenizer builds no pairs or the model cannot
        score them (another vocabulary; fewer positions than the length)."""
        enc = self._tokenizer.encode("query", " ".join(["passage"] * MAX_TOKENS * 2))
        if not any(enc.special_tokens_mask):
            raise _fail("tokenizer.json adds no special tokens to a pair: not a "
                        "cross-encoder's tokenizer (no pair post_processor)")
        ids = np.array([enc.ids], dtype=np.int64)
        real = [j for j, (s, m) in enumerate(zip(enc.special_tokens_mask, enc.attention_mask,
                                                 strict=True)) if m and not s]
        ids[0, real[0]] = self._tokenizer.get_vocab_size(with_added_tokens=False) - 1
        try:
            self._run([enc, enc], ids=np.repeat(ids, 2, axis=0))
        except Exception as exc:
            if isinstance(exc, RerankFailed):
                raise _fail(f"on a test pair: {exc}") from exc
            why = model_error(WHAT, exc).reason
            raise _fail(f"the model cannot score the tokenizer's pairs ({why}); is "
                        "tokenizer.json this model's?") from exc

    @property
    def fingerprint(self) -> str:
        return self._fp

    @property
    def relevant(self) -> str:
        """Which output column is read as "relevant" and why ("" for one logit)."""
        return self._relevant

    def _run(self, encs: Sequence[Any], ids: npt.NDArray[np.int64] | None = None
             ) -> npt.NDArray[np.float64]:
        """Scores for a batch of encodings (a fixed batch size: run in slices, the last
        filled with copies of its final row); RerankFailed or onnxruntime's error."""
        sig, n = self._sig, len(encs)
        cols = {"input_ids": np.array([e.ids for e in encs]) if ids is None else ids,
                "attention_mask": np.array([e.attention_mask for e in encs]),
                "token_type_ids": np.array([e.type_ids for e in encs])}
        step = sig.batch or n
        out = np.zeros(n, dtype=np.float64)
        for start in range(0, n, step):
            rows = list(range(start, min(start + step, n)))
            rows += [rows[-1]] * (step - len(rows))
            feeds = {name: cols[name][rows].astype(kind) for name, kind in sig.feeds}
            raw = self._bounded(feeds)
            got = relevance(np.asarray(raw, dtype=np.float64), step, sig.labels, self._column)
            out[start : start + step] = got[: min(step, n - start)]
        return out

    def _bounded(self, feeds: dict[str, Any]) -> Any:
        """The output of one run, stopped when the bound says so (module docstring)."""
        import onnxruntime as ort

        opts = ort.RunOptions()
        opts.log_severity_level = 4  # its errors are raised, not printed
        if self._bound is None:
            return self._session.run([self._sig.output], feeds, opts)[0]
        try:
            with self._bound.watching(lambda: setattr(opts, "terminate", True)):
                return self._session.run([self._sig.output], feeds, opts)[0]
        except Exception as exc:
            if opts.terminate:
                raise RerankFailed(f"the model ran over {self._bound}") from exc
            raise

    def score(self, query: str, passages: Sequence[str]) -> npt.NDArray[np.float64]:
        """A score in (0, 1) for each (query, passage) pair, in input order; RerankFailed
        when the model fails on them."""
        out = np.zeros(len(passages), dtype=np.float64)
        for start in range(0, len(passages), BATCH_SIZE):
            query_text, *texts = tokenizable([query, *passages[start : start + BATCH_SIZE]])
            batch = [(query_text, p) for p in texts]
            try:
                out[start : start + len(batch)] = self._run(
                    self._tokenizer.encode_batch(batch))
            except RerankFailed:
                raise
            except Exception as exc:  # onnxruntime/tokenizers raise untyped errors
                raise RerankFailed(model_error(WHAT, exc).reason) from exc
        return out
