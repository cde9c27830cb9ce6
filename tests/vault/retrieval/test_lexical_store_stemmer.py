"""The lexical store names the stemmer it was built with (lexical_store.py, text.py
`stemmer_fingerprint`): pyproject allows snowballstemmer from 2.2 on and the releases stem
some words otherwise (2.2: "university" -> "univers", 3.x: "universiti"), so a store saved
before an upgrade held stems the upgraded process's queries no longer made: "universities"
found nothing. Each process here is a new one; "older" replaces snowballstemmer's English
stemmer by one that cuts the generated words to six letters (another release's stems)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
WORDS = ["university", "universities", "universe", "generously", "generous", "communism"]

RUN = """
import json, sys
from datetime import date
from pathlib import Path
root, mode, release, words = Path(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4:]
if release == "older":
    import snowballstemmer
    real = snowballstemmer.stemmer

    class Older:
        def __init__(self, lang):
            self.inner = real(lang)

        def stemWord(self, w):
            return w[:6] if w in words else self.inner.stemWord(w)

    snowballstemmer.stemmer = Older
from vault import Vault
from vault.retrieval.pipeline import SearchEngine, SearchParams
engine = SearchEngine(SearchParams(), scratch=str(root / ".rmh"))
with (Vault.init if mode == "index" else Vault.open)(root, watch=False, engine=engine) as v:
    out = [[h.note, h.receipt["signals"]["bm25"]]
           for q in words for h in v.search(q, 5, learn=False, now=date(2024, 1, 1)).hits]
print(json.dumps(out))
"""


def _run(root: Path, mode: str, release: str) -> str:
    p = subprocess.run([sys.executable, "-c", RUN, str(root), mode, release, *WORDS],
                       capture_output=True, text=True, cwd=ROOT, timeout=300,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert p.returncode == 0, p.stderr
    return p.stdout


@pytest.mark.parametrize(("first", "then"), [("older", "current"), ("current", "older")])
def test_a_store_of_another_stemmer_is_rebuilt(tmp_path: Path, first: str, then: str) -> None:
    roots = {name: tmp_path / name for name in ("upgraded", "fresh")}
    for root in roots.values():
        root.mkdir()
        for i, word in enumerate(WORDS):
            (root / f"n{i}.md").write_text(f"A note on the {word}.\n", encoding="utf-8")
    _run(roots["upgraded"], "index", first)  # saves .rmh/lexical-index.bin
    assert (roots["upgraded"] / ".rmh" / "lexical-index.bin").exists()
    _run(roots["fresh"], "index", then)
    got, fresh = _run(roots["upgraded"], "search", then), _run(roots["fresh"], "search", then)
    assert got == fresh
    assert all(hit[1]["raw"] > 0 for hit in json.loads(got)[:1])
