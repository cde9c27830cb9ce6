"""A memory-mapped `.rmh/` store truncated or rewritten in place by another program under a
running `rmh serve` (session 29 ADVSTORE2, found; session 30 MMAP, fixed). The server mapped
the store file itself: a truncation (`os.truncate`, `: > file`, a sync tool restoring an old
copy) killed it with SIGBUS at its next call (exit -7, every later call lost), and bytes
rewritten in place were read as they stood (an Internal error with a traceback, or a wrong
snippet). Now each store is mapped from an unnamed private copy (storage/private_copy.py):
whatever happens to the file afterwards, every call gets the answer an undamaged server
gives, the server exits 0 when its input ends, and no note changes."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.harness.test_cli_notes import ROOT, rmh

pytestmark = pytest.mark.slow
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("vault.search", {"query": "kiwi5"}), ("vault.read", {"note": "N1.md"}),
    ("vault.search", {"query": "kiwi7 word"}), ("vault.backlinks", {"note": "N2.md"})]


def _notes(root: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(root.glob("*.md"))}


def _truncate(fraction: float) -> Callable[[Path], None]:
    return lambda p: os.truncate(p, int(p.stat().st_size * fraction))


def _rewrite(at: float, length: float) -> Callable[[Path], None]:
    def damage(p: Path) -> None:
        size = p.stat().st_size
        with open(p, "r+b") as fh:  # in place: same inode, same size
            fh.seek(int(size * at))
            fh.write(b"\x5a" * max(1, int(size * length)))
    return damage


# generated: truncations to 0 and to fractions, rewrites at offsets and lengths, applied in
# this order to one server (each after its calls are answered)
DAMAGES = [_rewrite(at, 0.1) for at in (0.0, 0.3, 0.9)] + [
    _truncate(f) for f in (0.75, 0.5, 0.01, 0.0)]


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("mapped") / "v"
    root.mkdir()
    for i in range(30):
        (root / f"N{i}.md").write_text(
            f"# N{i}\nkiwi{i} [[N{(i + 1) % 30}]] text {i} " + "word " * 200 + "\n")
    assert rmh("--vault", str(root), "init", "--no-dense").returncode == 0
    assert rmh("--vault", str(root), "search", "--no-dense", "kiwi1").returncode == 0
    return root


class _Server:
    def __init__(self, root: Path) -> None:
        env = {k: v for k, v in os.environ.items() if k not in ("RMH_VAULT", "RMH_CONFIG")}
        env.update(PYTHONHASHSEED="0", PYTHONPATH=str(ROOT))
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "harness", "--vault", str(root), "serve", "--no-dense"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT,
            env=env)
        self.next = 0

    def call(self, method: str, params: dict[str, Any]) -> Any:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.next += 1
        frame = {"jsonrpc": "2.0", "id": self.next, "method": method, "params": params}
        try:
            self.proc.stdin.write((json.dumps(frame) + "\n").encode())
            self.proc.stdin.flush()
        except BrokenPipeError:
            return None
        line = self.proc.stdout.readline()
        return json.loads(line) if line else None

    def close(self) -> tuple[int, bytes]:
        assert self.proc.stdin is not None and self.proc.stderr is not None
        with contextlib.suppress(BrokenPipeError):
            self.proc.stdin.close()
        code = self.proc.wait(timeout=120)
        return code, self.proc.stderr.read()


def _answers(server: _Server) -> list[Any]:
    out = []
    for method, params in CALLS:
        got = server.call(method, params)
        out.append(None if got is None else {k: v for k, v in got.items() if k != "id"})
    return out


def _stores(root: Path) -> list[str]:
    return sorted(p.name for p in (root / ".rmh").iterdir() if p.suffix == ".bin")


STORES = ["lexical-index.bin", "name-table-aliases.bin", "name-table-keys.bin",
          "name-table-names.bin", "note-columns.bin", "stat-columns.bin"]


def test_every_mapped_store_of_the_vault_is_damaged_below(made: Path) -> None:
    assert _stores(made) == STORES  # a new mapped store joins the list


@pytest.mark.parametrize("name", STORES)
def test_a_store_damaged_under_a_server_never_kills_it(
        made: Path, tmp_path: Path, name: str) -> None:
    root = tmp_path / "v"
    shutil.copytree(made, root)
    before = _notes(root)
    server = _Server(root)
    try:
        want = _answers(server)  # the undamaged answers; every store is mapped by now
        assert all(a is not None and "result" in a for a in want), want
        for step, damage in enumerate(DAMAGES):
            damage(root / ".rmh" / name)
            assert _answers(server) == want, (name, step)
    finally:
        code, err = server.close()
    assert code == 0, (name, code, err[-400:])
    assert b"Traceback" not in err, err[-400:]
    assert _notes(root) == before
