"""vault/notes/edits.py reads a note's lines as the index does (one notion of a line end:
CRLF, a lone CR, LF; frontmatter.lines_view): on generated notes of mixed line ends, with a
BOM or not, frontmatter or not, with or without a final line end, and with the characters
`str.splitlines` also breaks at (\\x0b, \\x0c, \\x1c-\\x1e, \\x85, U+2028, U+2029) inside lines,
the headings an edit finds are the index's, a section edit of each one rewrites only its
section, and a prepend keeps every heading a heading. Before (HOUSE40) `edits._lines` split at
every `splitlines` boundary: `top\\u2028# Plans` was a section to `rmh edit` and no heading to
the index (REV39's finding)."""

from __future__ import annotations

import random

import pytest

from vault.notes.edits import Edit, apply, body_start, headings, size_after
from vault.notes.frontmatter import BOM
from vault.notes.note import parse

ENDS = ("\n", "\r\n", "\r")
ODD = ("\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")
WORDS = ("alpha", "Plans", "café", "Ünï", "delta", "#tag", "[[Link]]", "x")


def _line(rng: random.Random, k: int) -> str:
    word = f"{rng.choice(WORDS)}{k}"
    odd = rng.choice(ODD)
    return rng.choice([
        f"# {word}", f"## {word} ##", f"   ### {word}", f"#### {word}{odd}tail",
        f"text {word}", f"text{odd}# {word}", f"{odd}## {word}", "```", "~~~", "",
        f"- item {word}", f"plain {word}{odd}"])


def generated(seed: int) -> str:
    rng = random.Random(seed)
    lines = [_line(rng, k) for k in range(rng.randint(1, 14))]
    if rng.random() < 0.4:
        lines = ["---", f"title: t{seed}", "---", *lines]
    text = "".join(line + rng.choice(ENDS) for line in lines)
    if rng.random() < 0.5:  # no final line end
        text = text.rstrip("\r\n")
    return (BOM if rng.random() < 0.3 else "") + text


def index_headings(text: str) -> list[str]:
    """The headings the index finds (a BOM before a body without frontmatter read past, as
    `edits.body_start` reads it: PARSE 11, tests/vault/notes/test_note_bom.py)."""
    return list(parse(text).headings)


def utf8(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


@pytest.mark.parametrize("seed", range(400))
def test_edits_read_the_lines_the_index_reads(seed: int) -> None:
    text = generated(seed)
    found = headings(text, body_start(text))
    assert [h[3] for h in found] == index_headings(text), repr(text)
    titles = [h[3] for h in found]
    for lo, hi, level, title in found:
        assert text[lo:hi].rstrip("\r\n").lstrip(BOM).lstrip(" ").startswith("#" * level)
        if titles.count(title) != 1 or not title:
            continue
        edit = Edit("section", "new body", heading=f"{'#' * level} {title}")  # "#tag" too
        out = apply(text, edit)
        assert out[:hi] == text[:hi]  # everything before the section kept
        assert size_after(text, edit) == utf8(out)
        assert index_headings(out).count(title) == 1  # still a heading, still one
    edit = Edit("prepend", "top")
    out = apply(text, edit)
    assert size_after(text, edit) == utf8(out)
    assert index_headings(out) == index_headings(text), (repr(text), repr(out))
