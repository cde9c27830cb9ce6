"""`rmh learning NOTE` says what learning does to the note's score: the factor it prints, on the
query the note was used for, is the ratio of `rmh search`'s scores with the learned state and
without it (the prior alone is one factor of several: the learned channel adds to the fused
score too, so the prior's x1.0667 after one read was a lift of x1.185 on that very query)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.forks import run_cli

ROOT = Path(__file__).resolve().parents[2]
NOTES = {"Alpha": "Alpha covers the zephyr turbine maintenance schedule.",
         "Bravo": "Bravo covers the quokka habitat census in spring.",
         "Charlie": "Charlie covers the zephyr kite and a turbine blade.",
         "Delta": "Delta is an unrelated note about sailing knots."}


def rmh(root: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("RMH_VAULT", "RMH_CONFIG")}
    env["PYTHONPATH"] = str(ROOT)
    out = run_cli(["--vault", str(root), *args], env=env, cwd=ROOT, stdin=stdin, timeout=120)
    assert out.returncode == 0, (args, out.stderr)
    return out


def score(root: Path, query: str, note: str) -> float:
    hits = json.loads(rmh(root, "search", query, "--no-learn", "--no-dense", "--json",
                          "-k", "20").stdout)["hits"]
    return float(next(h["score"] for h in hits if h["note"] == f"{note}.md"))


@pytest.mark.slow
@pytest.mark.parametrize(("note", "query", "cite"), [
    ("Alpha", "zephyr turbine", False), ("Alpha", "zephyr turbine", True),
    ("Bravo", "quokka census", False)])
def test_the_printed_factor_is_the_score_with_learning_over_the_score_without(
        tmp_path: Path, note: str, query: str, cite: bool) -> None:
    root = tmp_path / "v"
    root.mkdir()
    for title, body in NOTES.items():
        (root / f"{title}.md").write_text(f"# {title}\n\n{body}\n", encoding="utf-8")
    rmh(root, "init", "--no-dense")
    rmh(root, "search", query, "--session", "s1", "--no-dense")
    rmh(root, "read", note, "--session", "s1")
    if cite:
        rmh(root, "write", "answers/A", "--session", "s1", stdin=f"Per [[{note}]].\n")
    rmh(root, "end-session", "s1")
    doc = json.loads(rmh(root, "learning", note, "--json", "--no-dense").stdout)
    bare = tmp_path / "bare"  # the same vault, nothing learned
    shutil.copytree(root, bare)
    for f in (bare / ".rmh").glob("learned.sqlite*"):
        f.unlink()
    learned, unlearned = score(root, query, note), score(bare, query, note)
    measured = doc["measured"]
    assert measured["query"] == query
    assert measured["with"]["score"] == learned and measured["without"]["score"] == unlearned
    assert measured["factor"] == pytest.approx(learned / unlearned, rel=1e-12)
    assert measured["factor"] > doc["multiplier"] > 1.0  # the prior is only part of it
    human = rmh(root, "learning", note, "--no-dense").stdout
    assert f"x{learned / unlearned:.4f} (every learned signal together)" in human
    assert f"prior x{doc['multiplier']:.4f} on a query wholly about" in human


COUNT_OPENS = """
import collections, os, sys
counts = collections.Counter()
sys.addaudithook(lambda event, args: counts.update(
    [os.path.basename(str(args[0]).split("?")[0])] if event == "sqlite3.connect" else []))
from harness.cli import main
code = main(sys.argv[1:])
print(code, sorted(counts.items()), file=sys.stderr)
"""


@pytest.mark.slow
@pytest.mark.parametrize("note", sorted(NOTES))
def test_learning_note_opens_the_vault_once(tmp_path: Path, note: str) -> None:
    """Its history and both measuring searches on one open: session 28 opened the index three
    times and the ledger twice (each open a sync, each search's an engine of its own)."""
    root = tmp_path / "v"
    root.mkdir()
    for title, body in NOTES.items():
        (root / f"{title}.md").write_text(f"# {title}\n\n{body}\n", encoding="utf-8")
    rmh(root, "init", "--no-dense")
    rmh(root, "search", "zephyr turbine", "--session", "s1", "--no-dense")
    rmh(root, "read", note, "--session", "s1")
    rmh(root, "end-session", "s1")
    env = {k: v for k, v in os.environ.items() if k not in ("RMH_VAULT", "RMH_CONFIG")}
    r = subprocess.run([sys.executable, "-c", COUNT_OPENS, "--vault",
                        str(root), "learning", note, "--json", "--no-dense"],
                       env={**env, "PYTHONPATH": str(ROOT)}, cwd=ROOT, capture_output=True,
                       text=True, timeout=120, check=False)
    assert r.stderr.splitlines()[-1] == "0 [('index.sqlite', 1), ('learned.sqlite', 1)]", r.stderr
    assert json.loads(r.stdout)["note"] == f"{note}.md"
