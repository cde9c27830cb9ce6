"""Corrections of fact notes an editor wrote (vault/conversation/corrections.py,
vault/notes/trust.py): whatever shape the note's frontmatter has, `correct` either does what
it was asked and keeps the note a fact note, every other key kept and its line endings
unmixed, or refuses with a VaultError and changes no byte. Never a KeyError or TypeError (an
internal error on every surface), never a broken block (`---> Trust:` fused onto a closing
fence at the end of the file, or a trust line written in front of a byte-order mark)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from vault import Vault, VaultError, correct_fact
from vault.notes.frontmatter import find_block
from vault.notes.note import parse
from vault.notes.trust import FIELDS, is_claim

AT = "2026-12-05T00:00:00+00:00"
ODD = [None, "", "x", 5, 1.5, True, [], ["a"], [1, 2], {"a": 1}, "[[x]]", "a: b", "multi\nline"]
KEYS = ("subject", "conversation", "trust", "trust_by", "trust_at", "trust_reason",
        "trust_history", "superseded_by", "corrects", "tags", "other")


def fact_text(rng: random.Random) -> str:
    """A fact note as an editor may leave it: keys present or not, of any YAML type, a
    byte-order mark, CRLF, the closing fence with or without a newline, `...` as the fence."""
    fm: dict[str, object] = {"tier": rng.choice(["L2", "L3"]), "key": "city",
                             "value": rng.choice(["Paris", "rome", 5])}
    for k in KEYS:
        if rng.random() < 0.5:
            fm[k] = rng.choice(["sarah", "confirmed", "rejected"] if rng.random() < 0.4 else ODD)
    nl = rng.choice(["\n", "\r\n"])
    lines = ["---", *(f"{k}: {json.dumps(v)}" for k, v in fm.items()),
             rng.choice(["---", "---", "..."])]
    text = rng.choice(["", "\ufeff"]) + nl.join(lines)
    body = rng.choice(["", "# Title", "plain body", "# Title" + nl + nl + "text"])
    if body or rng.random() < 0.5:
        text += nl + body + rng.choice(["", nl])
    return text


def nonfield_keys(text: str) -> dict[str, object]:
    return {k: v for k, v in parse(text).frontmatter.items() if k not in FIELDS}


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes()
            for p in sorted(root.rglob("*.md")) if ".rmh" not in p.parts}


def check_corrected(before: str, after: str, action: str) -> None:
    assert find_block(after) is not None, repr(after)
    fm = parse(after).frontmatter
    assert parse(after).frontmatter_error is None and is_claim(fm), repr(after)
    assert nonfield_keys(after) == nonfield_keys(before), repr(after)
    if action != "supersede":
        assert fm["trust"] == {"confirm": "confirmed", "reject": "rejected"}[action]
    else:
        assert fm["superseded_by"]
    assert after.count("> Trust: ") == 1, repr(after)
    assert after.startswith("\ufeff") == before.startswith("\ufeff")
    if "\n" not in before.replace("\r\n", ""):  # a CRLF note stays CRLF
        assert "\n" not in after.replace("\r\n", ""), repr(after)


def test_generated_fact_notes_are_corrected_or_refused_never_broken(tmp_path: Path) -> None:
    root = tmp_path / "v"
    crashes: list[str] = []
    with Vault.init(root) as v:
        for seed in range(80):
            rng = random.Random(seed)
            name = f"f{seed}.md"
            text = fact_text(rng)
            (root / name).write_bytes(text.encode())
            action = rng.choice(["confirm", "reject", "supersede"])
            value = rng.choice(["Berlin", "lyon", "x y"])
            before = snapshot(root)
            try:
                correct_fact(v, name, action, by="user", at=AT, value=value, reason="r")
            except VaultError:
                assert snapshot(root) == before, seed
                continue
            except Exception as exc:  # the defect this test is about: collect, report all
                crashes.append(f"seed {seed} {action}: {type(exc).__name__}: {exc}")
                continue
            after = (root / name).read_bytes().decode()
            check_corrected(text, after, action)
            # a second correction of the same note keeps one trust line and one block
            correct_fact(v, name, "confirm", by="user", at=AT)
            check_corrected(text, (root / name).read_bytes().decode(), "confirm")
    assert not crashes


@pytest.mark.parametrize("text", [
    "---\ntier: L2\nkey: k\nvalue: v\n---",  # the closing fence ends the file
    "---\r\ntier: L2\r\nkey: k\r\nvalue: v\r\n---",
    "\ufeff---\ntier: L2\nkey: k\nvalue: v\n---\n# T\n\nbody\n",  # a byte-order mark
    "\ufeff---\r\ntier: L2\r\nkey: k\r\nvalue: v\r\n---\r\nbody\r\n",
    "---\ntier: L2\nkey: k\nvalue: v\n...\nbody\n",  # YAML's document end as the fence
])
def test_a_confirmed_note_keeps_its_block(tmp_path: Path, text: str) -> None:
    root = tmp_path / "v"
    with Vault.init(root) as v:
        (root / "f.md").write_bytes(text.encode())
        correct_fact(v, "f.md", "confirm", by="user", at=AT)
        check_corrected(text, (root / "f.md").read_bytes().decode(), "confirm")


@pytest.mark.parametrize("history", ["5", "true", "1.5"])
def test_a_trust_history_that_is_no_list_is_replaced_not_a_crash(tmp_path: Path,
                                                                  history: str) -> None:
    root = tmp_path / "v"
    with Vault.init(root) as v:
        (root / "f.md").write_text(f"---\ntier: L2\nkey: k\nvalue: v\ntrust_history: {history}\n"
                                   "---\nbody\n")
        correct_fact(v, "f.md", "reject", by="user", at=AT)
        fm = parse((root / "f.md").read_text()).frontmatter
        assert fm["trust"] == "rejected" and isinstance(fm["trust_history"], list)


def test_supersede_of_a_note_naming_no_subject_is_refused_unchanged(tmp_path: Path) -> None:
    root = tmp_path / "v"
    with Vault.init(root) as v:
        (root / "f.md").write_text("---\ntier: L2\nkey: city\nvalue: paris\n---\nbody\n")
        before = snapshot(root)
        with pytest.raises(VaultError, match="subject"):
            correct_fact(v, "f.md", "supersede", by="user", at=AT, value="berlin")
        assert snapshot(root) == before


@pytest.mark.parametrize("corrects", ["5", '"[[old]]"', "{a: 1}"])
def test_the_new_value_note_keeps_corrects_as_links(tmp_path: Path, corrects: str) -> None:
    root = tmp_path / "v"
    with Vault.init(root) as v:
        head = "---\ntier: L2\nconversation: c\nsubject: sarah\nkey: city\n"
        (root / "a.md").write_text(head + "value: paris\n---\nbody\n")
        (root / "b.md").write_text(head + f"value: berlin\ncorrects: {corrects}\n---\nbody\n")
        correct_fact(v, "a.md", "supersede", by="user", at=AT, value="berlin")
        got = parse((root / "b.md").read_text()).frontmatter["corrects"]
        assert isinstance(got, list) and all(isinstance(c, str) and c for c in got)
        assert any("a" in c for c in got) and len(got) == (2 if corrects.startswith('"') else 1)


def test_a_fence_ending_the_file_with_a_lone_cr_keeps_its_block(tmp_path: Path) -> None:
    root = tmp_path / "v"
    with Vault.init(root) as v:
        (root / "f.md").write_bytes(b"---\r\ntier: L2\r\nkey: k\r\nvalue: v\r\n---\r")
        correct_fact(v, "f.md", "confirm", by="user", at=AT)
        after = (root / "f.md").read_bytes().decode()
        assert find_block(after) is not None and is_claim(parse(after).frontmatter), repr(after)
