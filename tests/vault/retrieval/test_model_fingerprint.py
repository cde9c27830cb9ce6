"""The embedder's fingerprint remembered beside its optimized graph (vault/retrieval/onnx_cache.py
`remembered`): a new process whose graph and fingerprint are saved never reads the 23 MB model
(issue 33 item 5: ~0.03 s of CPU at every cold start), gives the same vectors bit for bit, and a
model file changed in any way is read and hashed again."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from vault.retrieval.encoders import MODEL_DIST, MODEL_FILE, MiniLmEncoder, _dist_file
from vault.storage import folders

ROOT = Path(__file__).resolve().parents[3]
SETTINGS = b"|pool=mean|norm=l2|trunc=256"

# A new process: counts its opens of the model file (an audit hook sees every open), encodes.
CHILD = """
import sys
from pathlib import Path
model = str(Path(sys.argv[2]).resolve())
opened = []
sys.addaudithook(lambda event, args: opened.append(1) if event == "open"
                 and str(args[0]) == model else None)
from vault.retrieval.encoders import MiniLmEncoder
v = MiniLmEncoder(model_path=Path(sys.argv[2]), graph_folder=Path(sys.argv[1]))
sys.stdout.write(f"{len(opened)} {v.fingerprint} {v.encode(['billing migration']).tobytes().hex()}")
"""


def child(folder: Path, model: Path) -> tuple[int, str, str]:
    out = subprocess.run([sys.executable, "-c", CHILD, str(folder), str(model)], cwd=ROOT,
                         capture_output=True, text=True, check=True, timeout=300).stdout
    opens, fp, vector = out.split()
    return int(opens), fp, vector


def sha(model: Path) -> str:
    return hashlib.sha256(model.read_bytes() + SETTINGS).hexdigest()


def test_a_process_with_the_graph_saved_never_reads_the_model(tmp_path: Path) -> None:
    model = _dist_file(MODEL_DIST, MODEL_FILE)
    first = child(tmp_path / "graphs", model)
    second = child(tmp_path / "graphs", model)
    assert first[0] >= 1  # read, hashed, optimized and saved
    assert second[0] == 0  # on main it read the whole file to hash it: 1
    assert first[1] == second[1] == MiniLmEncoder().fingerprint == sha(model)
    assert first[2] == second[2]


def test_a_model_rewritten_in_place_is_hashed_again(tmp_path: Path) -> None:
    model = tmp_path / "model.onnx"
    shutil.copyfile(_dist_file(MODEL_DIST, MODEL_FILE), model)
    graphs = tmp_path / "graphs"
    assert MiniLmEncoder(model_path=model, graph_folder=graphs).fingerprint == sha(model)
    original = model.read_bytes()
    with open(model, "r+b") as fh:  # same size, same name, same inode: one byte changed
        fh.seek(len(original) // 2)
        fh.write(bytes([original[len(original) // 2] ^ 1]))
    changed = MiniLmEncoder(model_path=model, graph_folder=graphs).fingerprint
    assert changed == sha(model) != hashlib.sha256(original + SETTINGS).hexdigest()
    model.write_bytes(original)  # back as it was: the first fingerprint again
    assert MiniLmEncoder(model_path=model, graph_folder=graphs).fingerprint == sha(model)


def test_a_damaged_memo_is_ignored(tmp_path: Path) -> None:
    model = _dist_file(MODEL_DIST, MODEL_FILE)
    graphs = tmp_path / "graphs"
    want = MiniLmEncoder(graph_folder=graphs).fingerprint
    memos = sorted(graphs.glob("fingerprint-*"))
    assert len(memos) == 1
    for text in ("", "1 2 3", memos[0].read_text().replace(want, "0" * 64)):
        memos[0].write_text(text)
        assert MiniLmEncoder(graph_folder=graphs).fingerprint == want == sha(model)


def test_a_killed_writers_temporary_is_removed_by_the_next_save(tmp_path: Path) -> None:
    graphs = tmp_path / "graphs"
    MiniLmEncoder(graph_folder=graphs)
    (memo,) = graphs.glob("fingerprint-*")
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()
    left = memo.with_name(f"{memo.name}.{dead}.tmp")  # as a writer killed before its rename
    left.write_text("half")
    memo.unlink()  # the next encoder saves again
    MiniLmEncoder(graph_folder=graphs)
    assert sorted(p.name for p in graphs.iterdir()) == [memo.name]


def test_a_model_changed_in_this_clock_tick_is_not_remembered(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A stamp taken in the tick of the file's last change could match a rewrite of the same
    # size in that tick (every stamp kept): no memo until the change is SETTLED_NS old, as
    # folders.py stores no ctime of a racily clean note (REV35; main saved it at once).
    model = tmp_path / "model.onnx"
    shutil.copyfile(_dist_file(MODEL_DIST, MODEL_FILE), model)
    changed = model.stat().st_ctime_ns
    graphs = tmp_path / "graphs"
    monkeypatch.setattr(folders, "_clock", lambda: changed + 1)
    assert MiniLmEncoder(model_path=model, graph_folder=graphs).fingerprint == sha(model)
    assert not list(graphs.glob("fingerprint-*"))
    monkeypatch.setattr(folders, "_clock", lambda: changed + 2 * folders.SETTLED_NS)
    assert MiniLmEncoder(model_path=model, graph_folder=graphs).fingerprint == sha(model)
    assert len(list(graphs.glob("fingerprint-*"))) == 1
