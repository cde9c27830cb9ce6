"""The embedder's optimized ONNX graph, saved once and loaded by later processes (issue 33).

Creating an onnxruntime session for the MiniLM model costs a new process ~0.27 s of CPU, most
of it graph optimization (constant folding of the int8 weights into float32, fusions). The
optimized graph onnxruntime builds can be saved (`SessionOptions.optimized_model_filepath`)
and later loaded with graph optimizations disabled: ~0.20 s, the same kernels on the same
graph, so the same vectors bit for bit (measured: NOTES-B.md; tested with real vectors in
tests/vault/retrieval/test_onnx_cache.py). The price is disk: the folded graph is ~90 MB, so it
lives in one user-level folder (beside the shared embedding cache), not in every vault.

`session(...)` returns a session for the shipped model bytes:

- the file `onnx-optimized-<key>.onnx` and its probe `onnx-optimized-<key>.probe` are used
  only when both are whole: `key` is BLAKE2b of this format's version, the encoder's
  fingerprint (sha256 of the model bytes and its settings), the onnxruntime version and the
  machine (architecture and CPU flags: optimizations may pick kernels by CPU);
- the probe holds the hidden states the freshly optimized session gave for a fixed input when
  the graph was saved; a loaded graph must give the same bytes, else (damage, another machine's
  file, a torn copy from elsewhere) it is ignored and saved again;
- anything else (no folder, no file, a file onnxruntime cannot load, a full or read-only
  disk) falls back to the session made from the shipped bytes, which is then saved: model
  first through a temporary name, fsync and rename, probe last the same way, so a process
  killed at any point leaves either nothing, a model without a probe (ignored), or both whole
  (and a temporary file, removed by the next save once its process is gone).

Files of other keys (an older onnxruntime) are left in place.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

FORMAT = 1
PREFIX = "onnx-optimized-"
PROBE_IDS = (101, 1996, 2173, 3647, 2441, 2055, 1037, 2047, 2338, 1012, 102)

Make = Callable[..., Any]


def _cpu() -> str:
    """The machine's architecture and CPU feature flags (Linux: /proc/cpuinfo's first flags
    line; elsewhere the architecture alone)."""
    out = os.uname().machine
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith(("flags", "Features")):
                    return out + "|" + line.split(":", 1)[1].strip()
    except OSError:
        pass
    return out


def key(fingerprint: str, ort_version: str) -> str:
    """The name's key (module docstring): 32 hex digits."""
    text = f"{FORMAT}|{fingerprint}|{ort_version}|{_cpu()}"
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


def probe(sess: Any) -> bytes:
    """The session's output for the fixed probe input, as bytes."""
    ids = np.array([PROBE_IDS], dtype=np.int64)
    feeds = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
    if "token_type_ids" in {i.name for i in sess.get_inputs()}:
        feeds["token_type_ids"] = np.zeros_like(ids)
    out = np.ascontiguousarray(sess.run(None, feeds)[0], dtype=np.float32)
    return out.tobytes()


def _write(path: Path, fill: Callable[[str], object]) -> None:
    """Make `path` whole or not at all: `fill(temporary name)`, fsync, rename. The temporary
    name carries this process's id (`_sweep` removes those of processes that are gone)."""
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.unlink(missing_ok=True)
    try:
        fill(str(tmp))
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: alive
        return True
    return True


def _sweep(folder: Path) -> None:
    """Remove the temporary files (~90 MB each) of killed writers: a writer whose process is
    gone (a live one elsewhere, on a shared home, only loses its save: its rename fails)."""
    for tmp in sorted(folder.glob(PREFIX + "*.tmp")):
        pid = tmp.name.rsplit(".", 2)[-2]
        if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
            tmp.unlink(missing_ok=True)


def _load(model: Path, probe_file: Path, threads: int, make: Make) -> Any | None:
    try:
        want = probe_file.read_bytes()
        sess = make(str(model), threads, optimize=False)
        return sess if probe(sess) == want else None
    except Exception:  # onnxruntime raises its own untyped errors for a bad file
        return None


def session(model_bytes: bytes, fingerprint: str, threads: int, folder: Path | None,
            make: Make) -> Any:
    """A session for `model_bytes` (module docstring). `make(model, threads, *, optimize=True,
    save_to=None)` creates one (encoders.cpu_session); its errors for the shipped bytes
    propagate, those of the saved copy never do."""
    if folder is None:
        return make(model_bytes, threads)
    import onnxruntime as ort

    name = PREFIX + key(fingerprint, ort.__version__)
    model, probe_file = folder / (name + ".onnx"), folder / (name + ".probe")
    if model.is_file() and probe_file.is_file():
        loaded = _load(model, probe_file, threads, make)
        if loaded is not None:
            return loaded
    made: list[Any] = []
    try:
        folder.mkdir(parents=True, exist_ok=True)
        _sweep(folder)
        probe_file.unlink(missing_ok=True)  # a model is trusted only with its own probe
        _write(model, lambda tmp: made.append(make(model_bytes, threads, save_to=tmp)))
        expected = probe(made[0])
        _write(probe_file, lambda tmp: Path(tmp).write_bytes(expected))
        return made[0]
    except Exception:  # a full or read-only disk, or onnxruntime failing to write the graph
        # with nothing made, the shipped bytes are tried plainly: their errors propagate
        return made[0] if made else make(model_bytes, threads)
