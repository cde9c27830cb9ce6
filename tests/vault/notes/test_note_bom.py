"""A byte-order mark before a note without frontmatter hides nothing (PARSE 11, HOUSE41).

Editors on Windows save UTF-8 with a BOM; the store keeps it (files round-trip byte for byte),
but it is no text. Before, the index scanned such a note from offset 0, so its first line did
not start a line: `\\ufeff# Plans` was no heading, `\\ufeff#project` no tag, and a code fence
opened on the first line was no fence (a `#tag` inside it counted). Generated notes: with the
BOM, every heading, tag, alias and link the index finds is the one it finds without it (links
one character later); then through a real vault, a tag on the first line after a BOM is the
note's tag in the index rows.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from vault import Vault
from vault.notes.frontmatter import BOM, find_block
from vault.notes.note import parse

ENDS = ("\n", "\r\n", "\r")


def _first_line(rng: random.Random, k: int) -> str:
    return rng.choice([f"# Plans{k}", f"## Title {k} ##", f"   ### three{k}", f"#tag{k} rest",
                       f"#tag{k}", "```", "~~~", f"[[Link{k}]] after", f"text #t{k}", "",
                       "$$", f"<!-- c{k} -->", "---", f"- item #i{k}", f"#{k}"])


def _line(rng: random.Random, k: int) -> str:
    return rng.choice([f"# H{k}", f"body #b{k}", "```", f"[x](Note{k}.md)", f"plain {k}", ""])


def generated(seed: int) -> str:
    rng = random.Random(seed)
    lines = [_first_line(rng, 0), *(_line(rng, k) for k in range(1, rng.randint(1, 8)))]
    text = "".join(line + rng.choice(ENDS) for line in lines)
    return text.rstrip("\r\n") if rng.random() < 0.3 else text


@pytest.mark.parametrize("seed", range(300))
def test_a_bom_hides_nothing_of_a_note_without_frontmatter(seed: int) -> None:
    text = generated(seed)
    if find_block(text) is not None:  # the block's own case: scanned after the block already
        pytest.skip("opens a frontmatter block")
    plain, marked = parse(text), parse(BOM + text)
    assert marked.headings == plain.headings, repr(text)
    assert marked.tags == plain.tags, repr(text)
    assert marked.aliases == plain.aliases
    assert [(ln.target, ln.start - 1, ln.end - 1) for ln in marked.links] == [
        (ln.target, ln.start, ln.end) for ln in plain.links], repr(text)
    assert marked.body == BOM + text and marked.text == BOM + text  # the file as written


def test_first_line_heading_and_tag_after_a_bom() -> None:
    assert parse(f"{BOM}# Plans\nbody\n").headings == ("Plans",)
    assert parse(f"{BOM}#project first\n").tags == ("project",)
    assert parse(f"{BOM}```\n#not-a-tag\n```\n").tags == ()


def test_the_index_holds_the_tag_of_a_bom_note(tmp_path: Path) -> None:
    root = tmp_path / "v"
    Vault.init(root).close()
    for i in range(6):
        (root / f"n{i}.md").write_bytes(f"{BOM}#first{i} line\n# Heading {i}\nbody\n"
                                        .encode())
    with Vault.open(root, watch=False) as vault:
        vault.sync()
        tags = {row.path: row.tags for row in vault.note_rows()}
    assert tags == {f"n{i}.md": (f"first{i}",) for i in range(6)}
