"""The words a note's frontmatter properties add to what search reads (Obsidian's Properties).

An Obsidian user writes `status: blocked`, `owner: "[[Alice]]"`, `severity: SEV1` in a
note's properties and expects search to find the note by them, as Obsidian's own search
does. `property_text` gives the values of every property search does not read already
(`title`, `description`, `tags`/`tag`, `aliases`/`alias`, `cssclass(es)`: read elsewhere or
layout) nor reads as the note's date (`date`, `updated`, `created`: the time prior's,
retrieval/when.py, and "2026" in every dated note's field would match every year asked):
text values, and the text items of a list, wiki links as their words (`[[Alice]]` is
"Alice"). Numbers, booleans, nulls, YAML dates and nested mappings are left out (a `true` or
a `3` is no word a note is looked for by, and nesting is no Obsidian property). Keys are not
words of the note: "status" would match every note that has a status.

A value whose words the note's title and body already hold adds nothing (`speaker: Caroline`
beside "[[Caroline]]: ..." in a conversation turn): a property is searchable so that words
found nowhere else are found, not to count a name twice. Nor does a value with a word of
digits only: an identifier or a count (`dia_id: "D1:3"`, `conversation: cc-1`, `version:
"2.1"`), no keyword; a code with letters (`severity: SEV1`) is one. On LoCoMo the turn ids'
words, "d1 3" in every turn's field, cost recall@10 -0.0045 [-0.0075, -0.0020] (session 41,
NOTES-QUERY41), with them left out LoCoMo and LongMemEval rank as before (their other
properties are dates or say what the body says). Deterministic: properties in the block's
order, one space between values.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .text import tokenize

READ_ELSEWHERE = frozenset(("title", "description", "tags", "tag", "aliases", "alias",
                            "cssclass", "cssclasses", "date", "updated", "created"))
MAX_CHARS = 4096  # of one note's property text: a pasted blob in a property is no keyword


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        yield from (v for v in value if isinstance(v, str))


def property_text(frontmatter: Mapping[str, Any], said: str) -> str:
    """The property values of `frontmatter` search adds to the note (module docstring),
    those whose tokens `said` (the note's title and body) does not all hold; space-joined,
    at most MAX_CHARS characters."""
    out: list[str] = []
    held: set[str] | None = None
    size = 0
    for key, value in frontmatter.items():
        if (key.lower() if key.isascii() else key) in READ_ELSEWHERE:
            continue
        for text in _strings(value):
            words = tokenize(text.replace("[[", " ").replace("]]", " ").replace("|", " "))
            if not words or any(w.isdigit() for w in words):
                continue
            if held is None:
                held = set(tokenize(said))
            if all(w in held for w in words):
                continue
            piece = " ".join(words)
            if size + len(piece) + 1 > MAX_CHARS:
                return " ".join(out)
            out.append(piece)
            size += len(piece) + 1
    return " ".join(out)
