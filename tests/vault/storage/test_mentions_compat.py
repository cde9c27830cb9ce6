"""A subject written in compatibility forms (full-width letters, ligatures) is the subject:
search's tokenizer reads text as NFKC (notes/text.py), so `rmh search quixbrel` found a note
saying "Ｑｕｉｘｂｒｅｌ", while the erasure, folding to NFC only, neither named nor erased it."""

from __future__ import annotations

import random
import string
from pathlib import Path

import pytest

from vault import Vault
from vault.notes.text import tokenize
from vault.storage import forgotten
from vault.storage.mentions import count_in_bytes, mentions


def _wide(text: str, rng: random.Random) -> str:
    """`text` with each ASCII letter in full width, in a random case, or left as it is."""
    out = []
    for ch in text:
        ch = rng.choice((ch.lower(), ch.upper()))
        out.append(chr(ord(ch) + 0xFEE0) if ch.isascii() and rng.random() < 0.7 else ch)
    return "".join(out)


@pytest.mark.parametrize("seed", range(4))
def test_a_full_width_subject_is_named_wherever_search_finds_it(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(200):
        name = "".join(rng.choices(string.ascii_lowercase, k=rng.randint(3, 9)))
        text = f"met {_wide(name, rng)}'s courier"
        assert name in tokenize(text)  # what search finds it by
        assert mentions(text, name), (text, name)
        assert mentions(f"met {name} today", _wide(name, rng))
        assert not mentions(f"met {_wide(name + 'x', rng)}", name)
        record = forgotten.Forgotten(frozenset({s for s in [forgotten._subject(name)] if s}))
        assert record.names(text)


def test_forget_erases_the_note_naming_it_in_full_width(tmp_path: Path) -> None:
    rng = random.Random(7)
    with Vault.init(tmp_path / "v") as v:
        v.write("a.md", f"The courier {_wide('quixbrel', rng)} delivered parcels.\n")
        v.write("b.md", "Gardening and tea.\n")
        assert v.forget_plan(subject="Quixbrel").notes == ("a.md",)


@pytest.mark.parametrize("seed", range(3))
def test_the_proof_finds_either_spelling_in_bytes(tmp_path: Path, seed: int) -> None:
    """The proof's byte search (count_in_bytes) finds a full-width copy of an ASCII subject
    and an ASCII copy of a subject typed in full width, as `mentions` names them."""
    rng = random.Random(seed)
    for k in range(40):
        name = "".join(rng.choices(string.ascii_lowercase, k=rng.randint(3, 9)))
        wide, file = _wide(name, rng), tmp_path / f"{k}.bin"
        file.write_bytes(bytes(rng.randrange(256) for _ in range(64))
                         + f"the courier {wide} delivered the parcels; ".encode()
                         + f"then {name} left.".encode())
        assert count_in_bytes(file, name) == 2, (wide, name)
        assert count_in_bytes(file, wide) == 2, (wide, name)
