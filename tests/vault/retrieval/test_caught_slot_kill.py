"""The files a catch-up saves for later processes (the dense IVF's `CAUGHT` slot,
`.rmh/dense-ivf-now.npz` with its codes `dense-ivf-now-codes-*.npy`: retrieval/ivf_store.py;
the conjunctive sums, `.rmh/conjunctive-sums.bin`: caught_up_sums.py) attacked from outside
(STORE15, session 40):

- the first process after outside changes, SIGKILLed after each of its file operations
  (N = 1, 2, ... until it finishes; vault/storage/faults.py): the next processes search
  exactly as a fresh build does, no temporary of either file is left, and the slot holds
  only the codes file its index names. Before, the IVF's save made no counted operation
  (a kill could not land inside it: the sweep never saw the new codes beside the old index);
- two processes racing to catch up and save, each after its own outside change: afterwards
  the next processes search as a fresh build does and nothing of theirs is left.

The encoder is bench's SyntheticEncoder (deterministic, no model: the files and their
writers are what is attacked), the IVF layout forced (approx_above 1)."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from bench.synthetic_encoder import SyntheticEncoder
from vault import DenseParams, SearchEngine, SearchParams, Vault
from vault.retrieval import caught_up_sums, ivf_store
from vault.storage.embeddings import EmbeddingCache

ROOT = Path(__file__).resolve().parents[3]
WORDS = [f"{a}{b}" for a in ("red", "blue", "green", "amber", "violet", "grey")
         for b in ("fox", "owl", "elk", "yak", "cod", "emu", "gnu", "bee")]
QUERIES = ["redfox blueowl", "greenelk amberyak", "violetcod greybee redemu", "zebra quokka"]
Hits = list[list[tuple[str, float]]]
SLOT = ivf_store.CAUGHT


def _engine(root: Path, stores: bool) -> Callable[[EmbeddingCache], SearchEngine]:
    params = SearchParams(dense=DenseParams(approx_above=1))  # the IVF layout
    return lambda cache: SearchEngine(params, encoder=SyntheticEncoder(), cache=cache,
                                      scratch=str(root / ".rmh") if stores else None)


def search(root: Path, stores: bool = True, fault_after: int | None = None) -> Hits:
    """Each query's hits in a new vault object, as a new process has."""
    with Vault.open(root, engine=_engine(root, stores), watch=False,
                    fault_after=fault_after) as v:
        return [[(h.note, h.score) for h in v.search(q, 10, learn=False).hits]
                for q in QUERIES]


RUN = """
import json, sys
from pathlib import Path
from tests.vault.retrieval.test_caught_slot_kill import search
after = int(sys.argv[2]) or None
print(json.dumps(search(Path(sys.argv[1]), fault_after=after)))
"""


def run(root: Path, after: int = 0) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", RUN, str(root), str(after)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})


def _text(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 40))) + "\n"


def vault(root: Path, rng: random.Random, notes: int = 60) -> list[str]:
    root.mkdir()
    names = [f"n{k}.md" for k in range(notes)]
    for name in names:
        (root / name).write_text(_text(rng), encoding="utf-8")
    Vault.init(root).close()
    search(root)  # the base: every store saved for it
    return names


def change(root: Path, rng: random.Random, names: list[str], step: int) -> None:
    """An edited note (a new text), an added one and a removed one."""
    (root / rng.choice(names)).write_text("zebra quokka " * 20 + _text(rng), encoding="utf-8")
    name = f"new{step}-{rng.randrange(999)}.md"
    names.append(name)
    (root / name).write_text(_text(rng), encoding="utf-8")
    (root / names.pop(rng.randrange(len(names) - 1))).unlink()


def leftovers(root: Path) -> list[str]:
    """Temporaries of the two files, and codes files of the slot its index does not name."""
    state = root / ".rmh"
    out = sorted(p.name for p in state.glob(f".{SLOT.codes}*"))
    out += sorted(p.name for p in state.glob(f".{SLOT.index}*"))
    out += sorted(p.name for p in state.glob(f".{caught_up_sums.FILE}*"))
    index = state / SLOT.index
    named = ""
    if index.exists():
        import numpy as np
        with np.load(index) as z:
            named = str(z["codes"])
    out += sorted(p.name for p in state.glob(f"{SLOT.codes}*.npy") if p.name != named)
    return out


def _slot(root: Path) -> tuple[bytes, frozenset[str]]:
    state = root / ".rmh"
    index = state / SLOT.index
    return (index.read_bytes() if index.exists() else b"",
            frozenset(p.name for p in state.glob(f"{SLOT.codes}*.npy")))


def test_killed_at_every_file_operation_of_the_saves(tmp_path: Path) -> None:
    rng = random.Random(11)
    start = tmp_path / "start"
    names = vault(start, rng)
    change(start, rng, names, 0)
    search(start)  # an older state's slot and sums in place
    old_index, old_codes = _slot(start)
    assert old_index and old_codes and (start / ".rmh" / caught_up_sums.FILE).exists()
    change(start, rng, names, 1)
    fresh = search(start, stores=False)
    after, seen, bad = 0, set(), []
    while True:
        after += 1
        root = tmp_path / f"k{after}"
        shutil.copytree(start, root, symlinks=True)
        proc = run(root, after)
        out, err = proc.communicate(timeout=300)
        assert proc.returncode in (0, -9), err
        index, codes = _slot(root)
        # the slot's codes renamed in beside the old index: a kill inside the IVF's save
        seen.add((index == old_index, codes == old_codes))
        for _ in range(2):
            if search(root) != fresh:
                bad.append((after, "hits"))
        if leftovers(root):
            bad.append((after, " ".join(leftovers(root))))
        shutil.rmtree(root)
        if proc.returncode == 0:
            assert json.loads(out) == [[list(h) for h in q] for q in fresh]
            break
        assert after < 200
    assert not bad, bad
    assert (True, False) in seen, seen  # main: the IVF's save made no counted operation


def test_two_processes_racing_to_save_then_equal_a_fresh_build(tmp_path: Path) -> None:
    rng = random.Random(12)
    root = tmp_path / "v"
    names = vault(root, rng)
    bad = []
    for step in range(6):
        change(root, rng, names, 2 * step)
        first = run(root)
        if step % 2:  # the second after another change: two states race
            change(root, rng, names, 2 * step + 1)
        second = run(root)
        for proc in (first, second):
            _, err = proc.communicate(timeout=300)
            assert proc.returncode == 0, err
        fresh = search(root, stores=False)
        for _ in range(2):
            if search(root) != fresh:
                bad.append((step, "hits"))
        if leftovers(root):
            bad.append((step, " ".join(leftovers(root))))
    assert not bad, bad
