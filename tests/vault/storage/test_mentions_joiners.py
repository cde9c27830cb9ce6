"""A soft hyphen, zero-width joiner, word joiner or zero-width no-break space inside a word
does not split it (UAX #29 rule WB4; vault/notes/text.py `JOINERS`): search finds
"Donau\u00addampf\u00adschiff" (hyphenation hints pasted from a web page) by
"Donaudampfschiff" and Sinhala "ශ්\u200dරී" by "ශ්රී", and erasure names what search finds
(vault/storage/mentions.py). Before, the word was read as its pieces: the whole word found
nothing, and `forget --subject` left the note while its proof said 0 occurrences.

Words are generated: letters of several scripts with joiners drawn between some of them."""

from __future__ import annotations

import json
import random
import subprocess
from pathlib import Path

import pytest

from tests.forks import cli_env, run_cli
from vault import Vault
from vault.notes.text import tokenize
from vault.storage.mentions import count_in_bytes, mentions

ROOT = Path(__file__).resolve().parents[3]
LETTERS = ["abcdefghijklmnopqrstuvwxyzäöüß", "කගචජටඩතදනපබමයරලවසහ", "कखगचजटडतदनपबमयरलवसह",
           "കഗചജടഡതദനപബമയരലവസഹ", "абвгдежзиклмнопрст"]
VIRAMA = {"ක": "\u0dca", "क": "\u094d", "ക": "\u0d4d"}
JOINERS = "\u00ad\u200d\u2060\ufeff"


def _words(seed: int) -> list[tuple[str, str]]:
    """(a word as typed, the same word with joiners inside it)."""
    rng = random.Random(seed)
    out = []
    for letters in LETTERS:
        for _ in range(4):
            chars = [rng.choice(letters) for _ in range(rng.randint(4, 9))]
            virama = next((v for k, v in VIRAMA.items() if k[0] in letters), "")
            plain = "".join(c + (virama if virama and rng.random() < 0.3 else "") for c in chars)
            cut = sorted(rng.sample(range(1, len(plain)), rng.randint(1, min(3, len(plain) - 1))))
            joined = "".join(plain[a:b] + rng.choice(JOINERS)
                             for a, b in zip([0, *cut], cut, strict=False)) + plain[cut[-1]:]
            out.append((plain, joined))
    return out


@pytest.mark.parametrize("seed", range(3))
def test_a_joiner_inside_a_word_keeps_it_one_word_to_search_and_erasure(
        tmp_path: Path, seed: int) -> None:
    words = _words(seed)
    for plain, joined in words:
        assert tokenize(f"a {joined} b") == tokenize(f"a {plain} b"), ascii(joined)
        for typed, written in ((plain, joined), (joined, plain)):
            text = f"yesterday {written} came by, and we talked about the garden"
            assert mentions(text, typed), ascii((typed, written))
            note = tmp_path / "note.md"
            note.write_text(text, encoding="utf-8")
            assert count_in_bytes(note, typed) == 1, ascii((typed, written))
    root = tmp_path / "v"
    root.mkdir()
    for i, (_, joined) in enumerate(words):
        (root / f"n{i}.md").write_text(f"# note {i}\nwe read {joined} today\n", encoding="utf-8")
    with Vault.init(root) as v:
        for i, (plain, _) in enumerate(words):
            hits = [h.note for h in v.search(plain, k=3, learn=False).hits]
            assert hits[:1] == [f"n{i}.md"], ascii((plain, hits))


def test_forget_erases_a_word_written_with_soft_hyphens_and_its_proof_finds_none(
        tmp_path: Path) -> None:
    root = tmp_path / "vault"
    root.mkdir()
    boat = "Donau\u00addampf\u00adschiff"
    (root / "a.md").write_text(f"# a\nthe {boat} left at noon\n", encoding="utf-8")
    (root / "keep.md").write_text("# keep\nnothing about boats here\n", encoding="utf-8")
    env = cli_env(tmp_path)

    def rmh(*args: str) -> subprocess.CompletedProcess[str]:
        return run_cli(("--vault", str(root), *args), env=env, cwd=ROOT)

    assert rmh("init").returncode == 0
    done = rmh("forget", "--subject", "Donaudampfschiff", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["erased"]["notes"] == ["a.md"]
    assert report["proof"]["occurrences"] == 0
    assert not [p for p in root.rglob("*.md") if b"dampf" in p.read_bytes()]
    assert (root / "keep.md").exists()
