"""Erasure names what search finds in Hebrew and Arabic text written with or without its
optional points, in Arabic letter variants, and "İ" as "i" (vault/notes/text.py
`search_form`, vault/storage/mentions.py). Before, `rmh forget --subject محمد` left a note
saying "مُحَمَّد" (search found it) and its proof said 0 occurrences; a subject holding "İ"
crashed the proof (its case-folded form is two characters).

Names are generated: letters of each script with points drawn after some of them, and a
letter variant swapped in, as people type them."""

from __future__ import annotations

import json
import random
import subprocess
from pathlib import Path

import pytest

from tests.forks import cli_env, run_cli
from vault.notes.text import tokenize
from vault.storage import forgotten
from vault.storage.mentions import case_fold, count_in_bytes, mentions

ROOT = Path(__file__).resolve().parents[3]
HEBREW = ("אבגדהוזחטיכלמנסעפצקרשת", "\u05b0\u05b4\u05b5\u05b6\u05b7\u05b8\u05b9\u05bc\u05c1")
ARABIC = ("بتثجحخدذرزسشصضطظعغفقكلمنهوي", "\u064b\u064e\u064f\u0650\u0651\u0652\u0670\u0640")
VARIANTS = {"\u0627": "\u0623\u0625\u0622", "\u0647": "\u0629", "\u064a": "\u0649"}


def _names(seed: int) -> list[tuple[str, str]]:
    """(a name as typed plainly, the same name written with points and variants)."""
    rng = random.Random(seed)
    out = []
    for letters, points in (HEBREW, ARABIC):
        for _ in range(6):
            plain = "".join(rng.choice(letters) for _ in range(rng.randint(3, 6)))
            if letters is ARABIC[0] and rng.random() < 0.5:
                plain = "\u0627" + plain[1:] + rng.choice("\u0647\u064a")
            marked = ""
            for ch in plain:
                ch = rng.choice(VARIANTS[ch]) if ch in VARIANTS and rng.random() < 0.7 else ch
                marked += ch + "".join(rng.sample(points, rng.randint(0, 2)))
            out.append((plain, marked))
    out.append(("istanbul", "\u0130stanbul"))
    out.append(("\u0130zmir", "Izmir"))
    return out


@pytest.mark.parametrize("seed", range(4))
def test_a_name_search_reads_alike_is_named_with_or_without_its_points(tmp_path: Path,
                                                                      seed: int) -> None:
    for plain, marked in _names(seed):
        assert tokenize(plain) == tokenize(marked), (plain, marked)  # search reads them alike
        for typed, written in ((plain, marked), (marked, plain)):
            text = f"yesterday {written} came by, and we talked for an hour about the garden"
            assert mentions(text, typed), ascii((typed, written))
            note = tmp_path / "note.md"
            note.write_text(text, encoding="utf-8")
            assert count_in_bytes(note, typed) == 1, ascii((typed, written))
            other = written + plain[0]  # a longer word (one more letter): no whole-word mention
            assert not mentions(f"yesterday {other} came by", typed), ascii((typed, other))


def test_forget_erases_a_name_written_with_points_and_its_proof_finds_none(
        tmp_path: Path) -> None:
    plain, marked = _names(7)[8]  # an Arabic name
    root = tmp_path / "vault"
    root.mkdir()
    (root / "a.md").write_text(f"# a\nwe met {marked} at the market\n", encoding="utf-8")
    (root / "b.md").write_text(f"# b\n{plain} sends regards\n", encoding="utf-8")
    (root / "keep.md").write_text("# keep\nnothing about anyone here\n", encoding="utf-8")
    env = cli_env(tmp_path)

    def rmh(*args: str) -> subprocess.CompletedProcess[str]:
        return run_cli(("--vault", str(root), *args), env=env, cwd=ROOT)

    assert rmh("init").returncode == 0
    done = rmh("forget", "--subject", plain, "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["erased"]["notes"] == ["a.md", "b.md"]
    assert report["proof"]["occurrences"] == 0
    held = [p for p in root.rglob("*") if p.is_file()
            and (marked.encode() in p.read_bytes() or plain.encode() in p.read_bytes())]
    assert held == []
    assert (root / "keep.md").exists()


@pytest.mark.parametrize("seed", range(3))
def test_the_forgotten_record_names_a_turn_however_its_points_are_written(seed: int) -> None:
    """A subject recorded now names turns written with or without points; a record an older
    rmh wrote (its words folded with the points kept) still names the turns it named."""
    for plain, marked in _names(seed):
        turn = f"then {marked} said the bus was late again"
        entry_now = forgotten._subject(plain)
        assert entry_now is not None
        now = forgotten.Forgotten(subjects=frozenset({entry_now}))
        assert now.names(turn) and now.names(turn.replace(marked, plain)), ascii(plain)
        old_words = forgotten._WORDS.findall(case_fold(marked))
        entry = (len(old_words), forgotten._digest(" ".join(old_words)))
        older = forgotten.Forgotten(subjects=frozenset({entry}))
        assert older.names(turn), ascii(marked)
        assert not older.names("then someone else said the bus was late again")
