"""The lexical store names the stemmer it was built with (lexical_store.py, text.py
`stemmer_fingerprint`): pyproject allows snowballstemmer from 2.2 on and the releases stem
some words otherwise (2.2: "university" -> "univers", 3.x: "universiti"), so a store saved
before an upgrade held stems the upgraded process's queries no longer made: "universities"
found nothing. Each process here is a new one; "older" replaces snowballstemmer's English
stemmer by one that cuts the generated words to six letters (another release's stems)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.stemmer_release import run

WORDS = ["university", "universities", "universe", "generously", "generous", "communism"]

RUN = """from vault import Vault
from vault.retrieval.pipeline import SearchEngine, SearchParams
engine = SearchEngine(SearchParams(), scratch=str(root / ".rmh"))
with (Vault.init if mode == "index" else Vault.open)(root, watch=False, engine=engine) as v:
    out = [[h.note, h.receipt["signals"]["bm25"]]
           for q in words for h in v.search(q, 5, learn=False, now=date(2024, 1, 1)).hits]
print(json.dumps(out))
"""


def _run(root: Path, mode: str, release: str) -> str:
    return run(RUN, root, mode, release, WORDS)


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
