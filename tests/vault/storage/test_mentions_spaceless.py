"""A name in a script written without spaces (Han, kana, Hangul, Thai) is named wherever it
stands in running prose: by `mentions`, in a file's bytes (the erasure's proof) and by the
forgotten record (a re-ingest leaves its turns out), a record an older rmh wrote included."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from vault.storage import forgotten
from vault.storage.mentions import count_in_bytes, mentions

LETTERS = ("山田太郎佐藤花子鈴木高橋伊藤渡辺", "ひらがなカタカナ", "김철수이영희박민준최서연",
           "สมชายวิไลประเสริฐกาญจนา")


@pytest.mark.parametrize("seed", range(4))
def test_a_spaceless_name_is_named_inside_prose(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    letters = LETTERS[seed]
    for k in range(50):
        name = "".join(rng.sample(letters, rng.randint(2, 4)))
        left = "".join(rng.choice(letters) for _ in range(rng.randint(0, 20)))
        right = "".join(rng.choice(letters) for _ in range(rng.randint(0, 20)))
        text = f"{left}{name}{right}"
        assert mentions(text, name), (text, name)
        assert mentions(f"Met {name}さん, and Ann{name}", "ann")
        file = tmp_path / f"{k}.txt"
        file.write_text(text * 2, encoding="utf-8")
        assert count_in_bytes(file, name) >= 2
        record = forgotten.Forgotten(frozenset({s for s in [forgotten._subject(name)] if s}))
        assert record.names(text), (text, name)
        legacy = forgotten.Forgotten(frozenset({(1, forgotten._digest(name))}))
        assert legacy.names(f"x {name} y") == (forgotten._LEGACY.fullmatch(name) is not None)
    assert not mentions("annual 日本", "ann") and not mentions("Joanna", "Ann")
