"""Search in scripts written without spaces (Chinese, Japanese, Korean, Thai): a word inside a
longer run of characters is found, as Lucene's CJKAnalyzer / Elasticsearch's `cjk_bigram` find
it (notes/text.py `tokenize`), in titles and bodies, and by a new process."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from vault import Vault

# compounds, each holding a shorter word a query asks for
COMPOUNDS = [("機械学習", "学習"), ("自然言語処理", "言語"), ("東京大学病院", "病院"),
             ("深層学習モデル", "モデル"), ("人工知能研究所", "知能"),
             ("量子コンピュータ", "コンピュータ"),
             ("데이터베이스설계", "베이스"), ("한국어문법", "문법"), ("ภาษาไทยง่ายมาก", "ไทย"),
             ("情報検索システム", "検索")]


@pytest.mark.parametrize("seed", range(3))
def test_a_word_inside_a_run_of_a_spaceless_script_is_found(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    root = tmp_path / "v"
    root.mkdir()
    picked = rng.sample(COMPOUNDS, 6)
    expected: dict[str, str] = {}
    for i, (compound, part) in enumerate(picked):
        if rng.random() < 0.5:  # in the title (the file name) only
            name = f"{compound}.md"
            (root / name).write_text(f"Note {i}.\n", encoding="utf-8")
        else:  # in the body only, inside a sentence with no spaces
            name = f"n{i}.md"
            (root / name).write_text(f"これは{compound}についてのメモです。\n", encoding="utf-8")
        expected[part] = name
    for i in range(8):
        (root / f"o{i}.md").write_text(f"Other plain words {i}.\n", encoding="utf-8")
    with Vault.init(root) as v:
        for part, name in expected.items():
            assert [h.note for h in v.search(part, k=1, learn=False).hits] == [name], part
    with Vault.open(root) as v:  # the persisted lexical store holds the same tokens
        for part, name in expected.items():
            assert [h.note for h in v.search(part, k=1, learn=False).hits] == [name], part
