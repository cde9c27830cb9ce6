"""The saved optimized ONNX graph (vault/retrieval/onnx_cache.py): same vectors bit for bit,
loaded by a new process, and ignored and saved again when stale, damaged or half-written."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from vault.retrieval import encoders, onnx_cache
from vault.retrieval.encoders import MiniLmEncoder

ROOT = Path(__file__).resolve().parents[3]
TEXTS = ["billing migration", "", "Zoë's café — naïve façade", "x",
         "a much longer sentence with many more word pieces in it " * 40,  # past 256 tokens
         "who talked about the billing migration yesterday?"]


@cache
def plain() -> bytes:
    """The vectors of an encoder that optimizes the shipped model itself (today's path)."""
    return MiniLmEncoder().encode(TEXTS).tobytes()


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[dict[str, Any]]]:
    """Every session made, with its options (`optimize`, `save_to`) and model kind."""
    plain()  # made before the spy, so that only the sessions under test are recorded
    made: list[dict[str, Any]] = []
    real = encoders.cpu_session

    def spy(model: bytes | str, threads: int, **options: Any) -> Any:
        made.append({"file": isinstance(model, str), **options})
        return real(model, threads, **options)

    monkeypatch.setattr(encoders, "cpu_session", spy)
    yield made


def files(folder: Path) -> list[str]:
    """What `folder` holds: the saved graph's files, and anything else by name (but the
    fingerprint's memo: test_model_fingerprint.py)."""
    out = []
    for p in sorted(folder.iterdir()):
        if p.name.startswith("fingerprint-") and not p.is_dir():
            continue
        if p.is_dir() and p.name.startswith(onnx_cache.PREFIX) and not p.name.endswith(".tmp"):
            out += sorted(f.name for f in p.iterdir())
        else:
            out.append(p.name)
    return out


WHOLE = sorted([onnx_cache.MODEL, onnx_cache.WEIGHTS, onnx_cache.PROBE])


def saved(folder: Path) -> Path:
    (one,) = [p for p in folder.iterdir() if p.is_dir() and not p.name.endswith(".tmp")]
    return one


def encode(folder: Path) -> bytes:
    return MiniLmEncoder(graph_folder=folder).encode(TEXTS).tobytes()


def test_saved_then_loaded_with_the_same_vectors(tmp_path: Path,
                                                 calls: list[dict[str, Any]]) -> None:
    folder = tmp_path / "cache" / "rmh"  # made when missing
    assert encode(folder) == plain()
    assert files(folder) == WHOLE
    assert len(calls) == 1 and ".tmp/" in calls[0]["save_to"]
    model = saved(folder) / onnx_cache.WEIGHTS
    assert model.stat().st_size > 50_000_000  # the folded weights, beside a small graph
    inode = model.stat().st_ino
    assert encode(folder) == plain()  # loaded: the graph as saved, not optimized again
    assert calls[1] == {"file": True, "optimize": False} and len(calls) == 2
    assert model.stat().st_ino == inode  # not saved again


def test_a_new_process_loads_it_and_embeds_the_same(tmp_path: Path) -> None:
    code = ("import sys\nfrom pathlib import Path\nfrom vault.retrieval import encoders\n"
            "from vault.retrieval.encoders import MiniLmEncoder\nmade = []\n"
            "real = encoders.cpu_session\n"
            "encoders.cpu_session = lambda m, t, **o: made.append(o) or real(m, t, **o)\n"
            f"v = MiniLmEncoder(graph_folder=Path(sys.argv[1])).encode({TEXTS!r})\n"
            "sys.stdout.write(v.tobytes().hex() + ' ' + repr(made))\n")
    outs = []
    for _ in range(2):
        r = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True,
                           text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                           timeout=300)
        assert r.returncode == 0, r.stderr
        vec, made = r.stdout.split(" ", 1)
        assert bytes.fromhex(vec) == plain()
        outs.append(made)
    assert "save_to" in outs[0] and outs[1] == "[{'optimize': False}]"


@pytest.mark.parametrize("damage", ["truncated", "garbage", "empty", "weights_truncated",
                                    "weights_flipped", "probe_flipped", "probe_short",
                                    "probe_missing", "model_missing", "weights_missing"])
def test_damage_is_ignored_and_saved_again(tmp_path: Path, calls: list[dict[str, Any]],
                                           damage: str) -> None:
    assert encode(tmp_path) == plain()
    model, probe = saved(tmp_path) / onnx_cache.MODEL, saved(tmp_path) / onnx_cache.PROBE
    weights = saved(tmp_path) / onnx_cache.WEIGHTS
    data, size = model.read_bytes(), weights.stat().st_size
    if damage == "weights_truncated":
        os.truncate(weights, size // 2)
    elif damage == "weights_flipped":  # a byte flipped every 4 MiB: the layers' weights too
        with open(weights, "r+b") as f:
            for at in range(1000, size, 4 << 20):
                f.seek(at)
                byte = f.read(1)
                f.seek(at)
                f.write(bytes([byte[0] ^ 0x40]))
    elif damage == "weights_missing":
        weights.unlink()
    elif damage == "truncated":
        model.write_bytes(data[: len(data) // 2])
    elif damage == "garbage":
        model.write_bytes(bytes(range(256)) * 64)
    elif damage == "empty":
        model.write_bytes(b"")
    elif damage == "probe_flipped":  # a graph that no longer gives the saved probe's bytes
        raw = bytearray(probe.read_bytes())
        raw[100] ^= 0x01
        probe.write_bytes(bytes(raw))
    elif damage == "probe_short":
        probe.write_bytes(probe.read_bytes()[:-4])
    elif damage == "probe_missing":
        probe.unlink()
    else:
        model.unlink()
    assert encode(tmp_path) == plain()
    assert "save_to" in calls[-1]  # made from the shipped model and saved again
    assert files(tmp_path) == WHOLE and model.read_bytes() == data
    assert weights.stat().st_size == size
    assert encode(tmp_path) == plain() and calls[-1] == {"file": True, "optimize": False}


def test_other_key_is_not_used(tmp_path: Path, calls: list[dict[str, Any]],
                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Another onnxruntime version, model fingerprint, format or machine: another name."""
    encode(tmp_path)
    monkeypatch.setattr(onnx_cache, "FORMAT", onnx_cache.FORMAT + 1)
    assert encode(tmp_path) == plain() and "save_to" in calls[-1]
    assert len([p for p in tmp_path.iterdir() if p.name.startswith(onnx_cache.PREFIX)]) == 2
    k = onnx_cache.key("f" * 64, "1.0")
    assert len({k, onnx_cache.key("e" * 64, "1.0"), onnx_cache.key("f" * 64, "1.1")}) == 3


def test_no_folder_or_an_unwritable_one_still_embeds(tmp_path: Path,
                                                     calls: list[dict[str, Any]]) -> None:
    assert MiniLmEncoder().encode(TEXTS).tobytes() == plain()
    assert calls == [{"file": False}]
    blocker = tmp_path / "file"
    blocker.write_text("x", encoding="utf-8")
    assert encode(blocker / "rmh") == plain()  # mkdir fails: the shipped model, unsaved
    if os.geteuid() != 0:  # root writes anywhere
        ro = tmp_path / "ro"
        ro.mkdir(mode=0o500)
        assert encode(ro) == plain() and list(ro.iterdir()) == []


def test_a_writer_killed_mid_save_leaves_nothing_wrong(tmp_path: Path) -> None:
    """SIGKILL while onnxruntime writes the graph (its temporary folder exists): the next
    encoder ignores the temporary folder, embeds the same bytes, saves a whole folder and
    removes the dead writer's temporary one."""
    code = ("import sys\nfrom pathlib import Path\nfrom vault.retrieval.encoders import "
            "MiniLmEncoder\nMiniLmEncoder(graph_folder=Path(sys.argv[1])).encode(['x'])\n")
    for attempt in range(5):
        folder = tmp_path / f"try{attempt}"
        folder.mkdir()
        proc = subprocess.Popen([sys.executable, "-c", code, str(folder)], cwd=ROOT,
                                env={**os.environ, "PYTHONPATH": str(ROOT)})
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and proc.poll() is None:
            if any(p.iterdir() for p in folder.glob("*.tmp")):
                proc.send_signal(signal.SIGKILL)
                break
            time.sleep(0.002)
        proc.wait(timeout=60)
        if proc.returncode != -signal.SIGKILL or not list(folder.glob("*.tmp")):
            continue  # finished before the poll saw its temporary folder: try again
        assert [p.name for p in folder.iterdir()  # no graph (the fingerprint's memo)
                if not p.name.endswith(".tmp") and not p.name.startswith("fingerprint-")] == []
        assert encode(folder) == plain()
        assert files(folder) == WHOLE  # the dead writer's temporary folder is gone
        return
    pytest.fail("never caught a writer mid-save in 5 tries")


def test_stale_temporaries_are_swept_and_a_live_writers_kept(tmp_path: Path,
                                                             calls: list[dict[str, Any]]
                                                             ) -> None:
    encode(tmp_path)
    name = saved(tmp_path).name
    (saved(tmp_path) / onnx_cache.PROBE).unlink()  # as a copy from elsewhere might be
    dead = tmp_path / f"{name}.999999999.tmp"  # no such process: removed
    live = tmp_path / f"{name}.1.tmp"  # pid 1 is alive: another writer's, kept
    for t in (dead, live):
        t.mkdir()
        (t / onnx_cache.WEIGHTS).write_bytes(b"partial")
    assert encode(tmp_path) == plain() and "save_to" in calls[-1]
    assert not dead.exists() and live.exists()
    assert files(tmp_path) == [*WHOLE, live.name]
    assert np.frombuffer((saved(tmp_path) / onnx_cache.PROBE).read_bytes(),
                         np.float32).size == len(onnx_cache.PROBE_IDS) * 384
