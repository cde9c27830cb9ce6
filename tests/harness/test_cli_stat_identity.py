"""An edit that keeps a note's size and mtime, seen by the next `rmh` process (real
subprocesses, a real vault folder): storage/folders.py keeps the ctime in a note's identity and
reads a racily clean file again (git's rule)."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

from tests.forks import run_cli
from vault.storage import folders
from vault.storage.index import Index

ROOT = Path(__file__).resolve().parents[2]


def _rmh(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("RMH_VAULT", "RMH_CONFIG")}
    env["PYTHONPATH"] = str(ROOT)
    return run_cli(["--vault", str(root), *args], env=env, cwd=ROOT, timeout=120)


def _found(root: Path, word: str) -> bool:
    """Whether `rmh search WORD` finds the note by that word (its snippet, from the index)."""
    r = _rmh(root, "search", word, "--json", "--no-dense")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    return bool(out["relevant"]) and any(word in hit["snippet"] for hit in out["hits"])


def _vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    assert _rmh(root, "init").returncode == 0
    (root / "Animals.md").write_text("The keeper feeds the zebra every morning.\n")
    return root


def _edit_keeping_stat(path: Path, old: str, new: str) -> None:
    """Same-size text written in place, then atime and mtime set back (touch -r, rsync -t)."""
    st = path.stat()
    data = path.read_bytes().replace(old.encode(), new.encode())
    assert len(data) == st.st_size
    with open(path, "r+b") as fh:
        fh.write(data)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (st.st_size, st.st_mtime_ns,
                                                                st.st_ino)


def test_an_edit_with_its_mtime_set_back_is_seen_by_the_next_process(tmp_path: Path) -> None:
    root = _vault(tmp_path)
    time.sleep(folders.SETTLED_NS / 1e9 + 0.2)  # old enough that the row stores its ctime
    assert _found(root, "zebra")
    index = Index.open(root / ".rmh" / "index.sqlite")
    try:
        assert [r.ctime_ns != folders.RACY for r in index.stats().values()] == [True]
    finally:
        index.close()
    _edit_keeping_stat(root / "Animals.md", "zebra", "hippo")
    assert _found(root, "hippo")
    assert not _found(root, "zebra")
    assert _found(root, "hippo")  # and stays so


def test_a_same_size_edit_right_after_indexing_is_seen(tmp_path: Path) -> None:
    root = _vault(tmp_path)
    assert _found(root, "zebra")
    _edit_keeping_stat(root / "Animals.md", "zebra", "hippo")
    assert _found(root, "hippo") and not _found(root, "zebra")
    assert _found(root, "hippo")
