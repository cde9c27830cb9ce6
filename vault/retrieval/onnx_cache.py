"""The embedder's optimized ONNX graph, saved once and loaded by later processes (issue 33).

Creating an onnxruntime session for the MiniLM model costs a new process ~0.27 s of CPU, most
of it graph optimization (constant folding of the int8 weights into float32, fusions) and
allocating the folded weights. The optimized graph onnxruntime builds can be saved
(`SessionOptions.optimized_model_filepath`), its weights in a file of their own, and later
loaded with graph optimizations disabled: onnxruntime memory-maps the weights file, so the
session costs ~0.06 s and the process ~0.14 s less in all; the same kernels on the same graph,
so the same vectors bit for bit (NOTES-B.md; tests/vault/retrieval/test_onnx_cache.py with
real vectors). The price is disk: the folded weights are ~90 MB, so they live in one
user-level folder ([embed] graph_cache), not in every vault.

`session(...)` returns a session for the shipped model bytes:

- the folder `onnx-optimized-<key>/` holds `model.onnx`, `weights.bin` and `probe`; `key` is
  BLAKE2b of this format's version, the encoder's fingerprint (sha256 of the model bytes and
  its settings), the onnxruntime version and the machine (architecture and CPU flags:
  optimizations may pick kernels by CPU);
- `probe` holds the hidden states the freshly optimized session gave for a fixed input when
  the graph was saved; a loaded graph must give the same bytes, else (damage, another
  machine's copy) it is ignored and saved again. The probe runs every layer, but reads only
  its own 11 rows of the word-embedding table: a byte changed in another row goes unseen
  (as one changed inside a vault's memory-mapped dense rows would); a digest of the 90 MB
  would cost about what loading saves;
- anything else (no folder, a graph onnxruntime cannot load, a full or read-only disk) falls
  back to the session made from the shipped bytes, which is then saved: into a temporary
  folder named with this process's id, every file fsynced, then renamed into place whole, so
  a process killed at any point leaves the old folder, the new one, or none (and a temporary
  folder, removed by the next save once its process is gone). A folder being replaced is
  removed first; a process still using its weights keeps its mapping.

Folders of other keys (an older onnxruntime) are left in place.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ..storage.fileops import dead_temps
from ..storage.folders import SETTLED_NS
from .interrupted import interruption

FORMAT = 2
PREFIX = "onnx-optimized-"
MODEL, WEIGHTS, PROBE = "model.onnx", "weights.bin", "probe"
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


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _sweep(folder: Path) -> None:
    """Remove the temporary folders (~90 MB each) of killed writers: a writer whose process is
    gone (a live one elsewhere, on a shared home, only loses its save: its rename fails)."""
    for tmp in dead_temps(folder, PREFIX + "*.tmp"):
        shutil.rmtree(tmp, ignore_errors=True)


def _load(saved: Path, threads: int, make: Make) -> Any | None:
    try:
        want = (saved / PROBE).read_bytes()
        sess = make(str(saved / MODEL), threads, optimize=False)
        return sess if probe(sess) == want else None
    except Exception as exc:  # onnxruntime raises its own untyped errors for a bad file
        if (stop := interruption(exc)) is not None:  # a Ctrl-C it wrapped: not a bad file
            raise stop from exc
        return None


def _save(saved: Path, model_bytes: bytes, threads: int, make: Make, made: list[Any]) -> None:
    """Make the session from the shipped bytes into `made` and save its graph as `saved`."""
    tmp = saved.with_name(f"{saved.name}.{os.getpid()}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    try:
        made.append(make(model_bytes, threads, save_to=str(tmp / MODEL), weights=WEIGHTS))
        (tmp / PROBE).write_bytes(probe(made[0]))
        for name in (MODEL, WEIGHTS, PROBE):
            _fsync(tmp / name)
        _fsync(tmp)
        shutil.rmtree(saved, ignore_errors=True)
        os.replace(tmp, saved)
        _fsync(saved.parent)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def remembered(folder: Path | None, model: Path, stat: os.stat_result, settings: str
               ) -> str | None:
    """The fingerprint saved by `remember` for the model file `model` with `settings`, while the
    file's device, inode, size, modification and change times are still those `stat` gives
    (the change time no program can set: a file rewritten or replaced in any way has another);
    None when none is saved or it no longer matches. Reading and hashing the 23 MB model cost
    every new process ~0.03 s of CPU for an answer that rarely changes."""
    if folder is None:
        return None
    try:
        words = _memo(folder, model, settings).read_text(encoding="ascii").split()
    except (OSError, UnicodeDecodeError):
        return None
    if len(words) != 7 or words[:5] != _stamp(stat) or words[6] != _check(words[:6]):
        return None
    return words[5]


def remember(folder: Path | None, model: Path, stat: os.stat_result, settings: str,
             fingerprint: str, clock: int) -> None:
    """Save `fingerprint` for `remembered` (best effort: a read-only or full disk saves none;
    written whole under a temporary name, so a reader sees the old text or the new; a killed
    writer's temporary is removed by the next save). None while the file's change time was
    not SETTLED_NS old at `clock` (folders.now() before `stat`): a rewrite of the same size in
    the same clock tick would keep every stamp (folders.py's "racily clean" rule)."""
    if folder is None or stat.st_ctime_ns >= clock - SETTLED_NS:
        return
    memo = _memo(folder, model, settings)
    tmp = memo.with_name(f"{memo.name}.{os.getpid()}.tmp")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for dead in dead_temps(folder, "fingerprint-*.tmp"):
            dead.unlink(missing_ok=True)
        words = [*_stamp(stat), fingerprint]
        tmp.write_text(" ".join([*words, _check(words)]) + "\n", encoding="ascii")
        os.replace(tmp, memo)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()


def _stamp(st: os.stat_result) -> list[str]:
    return [str(v) for v in (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)]


def _check(words: list[str]) -> str:
    """A checksum of the memo's words: a damaged memo is not believed."""
    return hashlib.blake2b(" ".join(words).encode(), digest_size=8).hexdigest()


def _memo(folder: Path, model: Path, settings: str) -> Path:
    name = hashlib.blake2b(f"{FORMAT}|{model}|{settings}".encode(), digest_size=16).hexdigest()
    return folder / f"fingerprint-{name}"


def session(read: Callable[[], bytes], fingerprint: str, threads: int, folder: Path | None,
            make: Make) -> Any:
    """A session for the shipped model bytes `read` returns (module docstring; called only
    when the saved graph cannot serve). `make(model, threads, *, optimize=True,
    save_to=None, weights=...)` creates one (encoders.cpu_session); its errors for the shipped
    bytes propagate, those of the saved copy never do."""
    if folder is None:
        return make(read(), threads)
    import onnxruntime as ort

    saved = folder / (PREFIX + key(fingerprint, ort.__version__))
    if (saved / PROBE).is_file():
        loaded = _load(saved, threads, make)
        if loaded is not None:
            return loaded
    made: list[Any] = []
    try:
        folder.mkdir(parents=True, exist_ok=True)
        _sweep(folder)
        _save(saved, read(), threads, make, made)
        return made[0]
    except Exception as exc:  # a full or read-only disk, or onnxruntime failing to write the
        # graph; with nothing made, the shipped bytes are tried plainly: their errors propagate
        if (stop := interruption(exc)) is not None:  # a Ctrl-C it wrapped: no disk fault
            raise stop from exc
        return made[0] if made else make(read(), threads)
