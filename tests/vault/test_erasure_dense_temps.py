"""An erasure drops the temporaries a killed save of the dense stores left (REV39, session 39):
`.dense-rows-*.npy.PID.tmp` (float rows), `.dense-ivf-codes-*` and, since session 39's catch-up
slot, `.dense-ivf-now-codes-*` (int8 codes) hold the erased notes' vectors, and
erasure_steps.py `drop_derived` removed the stores but not these (it did for the lexical and
catch-up files). A real process is killed (SIGKILL) at its store's first rename."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from vault import Vault
from vault.erasure_steps import drop_derived
from vault.retrieval import ivf_store

ROOT = Path(__file__).resolve().parents[2]
CHILD = """
import os, signal, sys, types
from pathlib import Path
from bench.synthetic_encoder import SyntheticEncoder
from vault import DenseParams, SearchEngine, SearchParams, Vault
from vault.retrieval import dense_store, ivf_store
root, store, approx = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
def killed(src, dst):
    os.kill(os.getpid(), signal.SIGKILL)
shim = types.SimpleNamespace(**vars(os))
shim.replace = killed
if len(sys.argv) < 5:  # else a save that goes through
    (dense_store if store == "dense" else ivf_store).os = shim
params = SearchParams(dense=DenseParams(approx_above=approx))
engine = lambda cache: SearchEngine(params, encoder=SyntheticEncoder(), cache=cache,
                                    scratch=str(root / ".rmh"))
with Vault.open(root, engine=engine, watch=False) as v:
    v.search("amber fox", 5, learn=False)
"""


def _vault(root: Path) -> None:
    root.mkdir()
    for k in range(12):
        (root / f"n{k}.md").write_text(f"note {k} about an amber fox, line {k}\n" * 3,
                                       encoding="utf-8")
    Vault.init(root).close()


def _temps(state: Path) -> list[str]:
    return sorted(p.name for p in state.iterdir()
                  if p.name.startswith(".dense") and p.name.endswith(".tmp"))


@pytest.mark.parametrize(("store", "approx"), [("dense", 10**9), ("ivf", 1)])
def test_an_erasure_drops_a_killed_dense_save(tmp_path: Path, store: str, approx: int) -> None:
    root = tmp_path / "v"
    _vault(root)
    run = subprocess.run([sys.executable, "-c", CHILD, str(root), store, str(approx)],
                         cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode == -9, run.stderr[-2000:]
    state = root / ".rmh"
    left = _temps(state)
    assert left, sorted(p.name for p in state.iterdir())  # the kill left its temporary
    drop_derived(state)
    assert _temps(state) == [], left


def test_the_caught_up_slot_temps_are_dropped(tmp_path: Path) -> None:
    """The catch-up slot's names (ivf_store.CAUGHT), as its save names its temporaries."""
    state = tmp_path / ".rmh"
    state.mkdir()
    names = [f".{ivf_store.CAUGHT.codes}{'ab' * 16}.npy.4242.tmp",
             f".{ivf_store.CAUGHT.index}.4242.tmp"]
    for name in names:
        (state / name).write_bytes(b"codes of an erased note")
    drop_derived(state)
    assert _temps(state) == []


@pytest.mark.parametrize(("store", "approx"), [("dense", 10**9), ("ivf", 1)])
def test_the_next_save_drops_a_killed_saves_temporary(tmp_path: Path, store: str,
                                                      approx: int) -> None:
    """Without an erasure the killed save's temporary stayed for good (the IVF codes: a byte a
    dimension of every chunk row); the next save of that store removes it."""
    root = tmp_path / "v"
    _vault(root)
    run = [sys.executable, "-c", CHILD, str(root), store, str(approx)]
    got = subprocess.run(run, cwd=ROOT, capture_output=True, text=True, timeout=300,
                         check=False)
    assert got.returncode == -9, got.stderr[-2000:]
    assert _temps(root / ".rmh")
    got = subprocess.run([*run, "unkilled"], cwd=ROOT, capture_output=True, text=True,
                         timeout=300, check=False)
    assert got.returncode == 0, got.stderr[-2000:]
    assert _temps(root / ".rmh") == []
