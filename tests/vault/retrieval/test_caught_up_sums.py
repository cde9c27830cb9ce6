"""The conjunctive sums of a caught-up state saved by the first new process and read by the
later ones (retrieval/caught_up_sums.py): after generated additions, edits, renames and
deletions every process's hits equal a fresh build's (exact dense), the later processes
move no sums, and a process killed at any file operation leaves a vault whose next process
still searches as a fresh build does (COLD40)."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from bench.synthetic_encoder import SyntheticEncoder
from vault import DenseParams, SearchEngine, SearchParams, Vault
from vault.erasure_steps import drop_derived
from vault.retrieval import caught_up_sums
from vault.retrieval.signals.conjunctive import ConjunctiveIndex
from vault.storage import mapped_arrays
from vault.storage.embeddings import EmbeddingCache

from .folder_history import change, make_vault, plain_text

ROOT = Path(__file__).resolve().parents[3]
QUERIES = ["redfox blueowl", "greenelk amberyak", "violetcod greybee redemu"]
Hits = list[list[tuple[str, float]]]


def _engine(root: Path, stores: bool) -> Callable[[EmbeddingCache], SearchEngine]:
    params = SearchParams(dense=DenseParams(approx_above=10**9))  # exact dense
    return lambda cache: SearchEngine(params, encoder=SyntheticEncoder(), cache=cache,
                                      scratch=str(root / ".rmh") if stores else None)


def _search(root: Path, stores: bool = True) -> tuple[Hits, bool]:
    """(each query's hits, whether caught up from a saved base) in a new vault object."""
    with Vault.open(root, engine=_engine(root, stores), watch=False) as v:
        hits = [[(h.note, h.score) for h in v.search(q, 10, learn=False).hits]
                for q in QUERIES]
        return hits, v.corpus().base is not None


def _vault(root: Path, rng: random.Random, notes: int = 30) -> list[str]:
    names = make_vault(root, rng, notes, plain_text)
    _search(root)  # the base: every store saved for it
    return names


def _change(root: Path, rng: random.Random, names: list[str], step: int) -> None:
    change(root, rng, names, step, plain_text)


@pytest.mark.parametrize("seed", range(4))
def test_later_processes_read_the_sums_and_equal_a_fresh_build(
        tmp_path: Path, seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    moves: list[int] = []
    real = ConjunctiveIndex._moved

    def counted(*args: object) -> None:
        moves.append(1)
        real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(ConjunctiveIndex, "_moved", staticmethod(counted))
    rng = random.Random(seed)
    root = tmp_path / "v"
    names = _vault(root, rng)
    sums = root / ".rmh" / caught_up_sums.FILE
    for step in range(5):
        _change(root, rng, names, step)
        fresh, _ = _search(root, stores=False)
        moves.clear()
        first, base = _search(root)
        assert base and moves and sums.exists(), step  # moved, then saved
        for _ in range(2):
            moves.clear()
            later, base = _search(root)
            assert base and not moves, step  # read, not moved
            assert later == first == fresh, step


def test_a_damaged_or_foreign_file_is_not_used(tmp_path: Path) -> None:
    rng = random.Random(7)
    root = tmp_path / "v"
    names = _vault(root, rng)
    _change(root, rng, names, 0)
    fresh, _ = _search(root, stores=False)
    assert _search(root)[0] == fresh
    sums = root / ".rmh" / caught_up_sums.FILE
    good = sums.read_bytes()
    head, arrays = mapped_arrays.read(sums, caught_up_sums.MAGIC) or ({}, {})
    for bad in ("flip", "other key", "zero sums"):
        if bad == "flip":
            raw = bytearray(good)
            raw[-3] ^= 0xFF
            sums.write_bytes(bytes(raw))
        else:
            key = "0" * 64 if bad == "other key" else head["key"]
            mapped_arrays.write(sums, caught_up_sums.MAGIC, {**head, "key": key}, {
                "s1": arrays["s1"] * 0, "s2": arrays["s2"] * 0})
        got, _ = _search(root)
        if bad == "zero sums":  # the right key is trusted: the sums are read, not moved
            assert got != fresh
        else:
            assert got == fresh, bad
        sums.write_bytes(good)


KILLED = """
import json, sys
from pathlib import Path
from tests.vault.retrieval.test_caught_up_sums import QUERIES, _engine
from vault import Vault
root, after = Path(sys.argv[1]), int(sys.argv[2])
with Vault.open(root, engine=_engine(root, True), watch=False, fault_after=after) as v:
    print(json.dumps([[(h.note, h.score) for h in v.search(q, 10, learn=False).hits]
                      for q in QUERIES]))
"""


def test_killed_at_every_file_operation(tmp_path: Path) -> None:
    """The first process after a change (it saves the sums, over an older state's file) is
    SIGKILLed after its N-th file operation, N = 1, 2, ... until it finishes: the file is
    the old one or the new one, whole, and the next processes search as a fresh build."""
    rng = random.Random(3)
    start = tmp_path / "start"
    names = _vault(start, rng)
    _change(start, rng, names, 0)
    _search(start)  # an older state's sums in place
    sums = Path(".rmh") / caught_up_sums.FILE
    old = (start / sums).read_bytes()
    _change(start, rng, names, 1)
    fresh, _ = _search(start, stores=False)
    after, news = 0, set()
    while True:
        after += 1
        root = tmp_path / f"k{after}"
        shutil.copytree(start, root, symlinks=True)
        run = subprocess.run([sys.executable, "-c", KILLED, str(root), str(after)],
                             capture_output=True, text=True, cwd=ROOT, timeout=300,
                             env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert run.returncode in (0, -9), run.stderr
        now = (root / sums).read_bytes()
        assert now == old or mapped_arrays.read(root / sums, caught_up_sums.MAGIC) is not None
        news.add(now != old)
        for _ in range(2):
            assert _search(root)[0] == fresh, after
        assert not list((root / ".rmh").glob(f".{caught_up_sums.FILE}.*.tmp")), after
        shutil.rmtree(root)
        if run.returncode == 0:
            assert json.loads(run.stdout) == [[list(h) for h in q] for q in fresh]
            break
        assert after < 100
    assert news == {False, True}  # killed before the new file and after it


def test_an_erasure_drops_the_file(tmp_path: Path) -> None:
    """The file keys a digest of changed notes' text: `rmh forget` drops it with the other
    derived files (erasure_steps.py `drop_derived`)."""
    rng = random.Random(5)
    root = tmp_path / "v"
    names = _vault(root, rng)
    _change(root, rng, names, 0)
    _search(root)
    state = root / ".rmh"
    assert (state / caught_up_sums.FILE).exists()
    (state / f".{caught_up_sums.FILE}.1.tmp").write_bytes(b"x")
    drop_derived(state)
    assert not (state / caught_up_sums.FILE).exists()
    assert not list(state.glob(f".{caught_up_sums.FILE}.*"))
