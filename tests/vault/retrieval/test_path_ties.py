"""Ties break by vault path: the same files give the same search answers, whatever order
they were indexed in and whatever edits led to them (note ids, and so corpus positions,
follow that history; fusion.stable_order)."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vault import Vault
from vault.retrieval.fusion import order, positive_ranks, top

WORDS = "kiwi pear fig plum".split()
FOLDERS = ["", "a/", "b/", "a/c/"]
QUERIES = ["kiwi", "pear fig", "plum kiwi fig", "n03"]


def vault_files(seed: int) -> dict[str, str]:
    """12-20 notes whose bodies come from a pool of 5: many score alike for every query."""
    rng = random.Random(seed)
    pool = [" ".join(rng.choices(WORDS, k=rng.randint(1, 4))) for _ in range(5)]
    files: dict[str, str] = {}
    for k in range(rng.randint(12, 20)):
        path = f"{rng.choice(FOLDERS)}n{k:02d}.md"
        links = "" if rng.random() < 0.6 else f" [[n{rng.randrange(k + 1):02d}]]"
        files[path] = f"{rng.choice(pool)}{links}\n"
    return files


def answers(root: Path) -> list[list[tuple[str, float, list[tuple[str, float, int]]]]]:
    """Every query's hits: path, score, order, and each signal's raw score and rank (ids left
    out). Scores to 12 digits: PageRank sums in position order, and its last bits follow."""
    with Vault.open(root, watch=False) as v:
        return [[(h.note, round(h.score, 12),
                  sorted((s, round(x["raw"], 12), x["rank"])
                         for s, x in h.receipt.get("signals", {}).items()))
                 for h in v.search(q, 20, learn=False).hits] for q in QUERIES]


def write(root: Path, path: str, text: str) -> None:
    (root / path).parent.mkdir(parents=True, exist_ok=True)
    (root / path).write_text(text)


def in_path_order(root: Path, files: dict[str, str]) -> None:
    """All files, then one sync: ids in path order."""
    Vault.state_dir(root, create=True)
    for p in sorted(files):
        write(root, p, files[p])
    with Vault.open(root, watch=False) as v:
        v.sync()


def one_by_one(root: Path, files: dict[str, str], rng: random.Random) -> None:
    """Files written in a shuffled order, each indexed before the next: ids in that order."""
    Vault.state_dir(root, create=True)
    paths = sorted(files)
    rng.shuffle(paths)
    with Vault.open(root, watch=False) as v:
        for p in paths:
            write(root, p, files[p])
            v.sync()


def by_edits(root: Path, files: dict[str, str], rng: random.Random) -> None:
    """Another history: each note first written elsewhere with other words (reverse path
    order), searched, then renamed into place and given its text; a note added and deleted."""
    Vault.state_dir(root, create=True)
    paths = sorted(files, reverse=True)
    with Vault.open(root, watch=False) as v:
        for j in range(len(paths)):
            write(root, f"tmp/t{j:02d}.md", "plum plum\n")
            v.sync()
        write(root, "gone.md", "kiwi pear fig plum\n")
        v.search("kiwi", 5, learn=False)
        for j in rng.sample(range(len(paths)), len(paths)):
            (root / f"tmp/t{j:02d}.md").rename(root / "tmp" / "x.md")
            write(root, paths[j], files[paths[j]])
            (root / "tmp" / "x.md").unlink()
            v.sync()
        (root / "gone.md").unlink()
        v.sync()


@pytest.mark.parametrize("seed", range(6))
def test_same_files_same_answers_whatever_the_history(tmp_path: Path, seed: int) -> None:
    files = vault_files(seed)
    rng = random.Random(1000 + seed)
    in_path_order(tmp_path / "fresh", files)
    one_by_one(tmp_path / "shuffled", files, rng)
    by_edits(tmp_path / "edited", files, rng)
    want = answers(tmp_path / "fresh")
    raws = [(s, raw) for hits in want for h in hits for s, raw, _ in h[2] if raw > 0]
    assert len(set(raws)) < len(raws)  # a signal gave two notes one score: ties to break
    assert answers(tmp_path / "shuffled") == want
    assert answers(tmp_path / "edited") == want


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 3), min_size=1, max_size=30), st.randoms(use_true_random=False))
def test_order_breaks_ties_by_path_then_position(levels: list[int],
                                                 rnd: random.Random) -> None:
    """order/top/positive_ranks with paths equal a sort by (-score, path, position)."""
    x = np.asarray(levels, dtype=np.float64)
    paths = [f"{rnd.choice('aBé')}{rnd.randrange(3)}" for _ in levels]  # some spelled twice
    want = sorted(range(len(levels)), key=lambda i: (-x[i], paths[i], i))
    assert order(x, paths).tolist() == want
    assert top(x, 5, paths=paths).tolist() == [i for i in want if x[i] > 0][:5]
    r = positive_ranks(x, paths)
    assert [i for i in sorted(range(len(levels)), key=lambda i: r[i]) if r[i] >= 0] == [
        i for i in want if x[i] > 0]
