"""The keys links and names are compared by: a note's title, a path's folded form, and how
closely a path is spelled as a link wrote it (links.py resolves with them)."""

from __future__ import annotations

import posixpath
import unicodedata
from collections.abc import Sequence


def strip_md(path: str) -> str:
    """`a/b.md` -> `a/b` (case-insensitive suffix)."""
    return path[:-3] if path.lower().endswith(".md") else path


def title_of(path: str) -> str:
    """A note's title: its file name without `.md`."""
    return strip_md(posixpath.basename(path))


def spelling(path: str, written: str) -> int:
    """How closely note `path` is spelled as `written` names it (a written path names its
    last components): 0 in the very code points (`.md` as written, or added when not written:
    `Note` -> `Note.md`, `x/Note.md`), 1 but for the case of `.md` (`Note.MD`), 2 otherwise
    (`note.md`, or `Note.md` decomposed where `Note` was typed composed)."""
    full = written if written.lower().endswith(".md") else written + ".md"
    if path == full or path.endswith("/" + full):
        return 0
    stem, want = strip_md(path), strip_md(written)
    return 1 if stem == want or stem.endswith("/" + want) else 2


def fold(name: str) -> str:
    """A name as links compare it: casefolded, canonically composed (the caseless match of
    Unicode 15, section 3.13: NFD, casefold, then NFC to keep keys short)."""
    if name.isascii():  # the common case, and already in every normal form
        return name.casefold()
    return unicodedata.normalize("NFC", unicodedata.normalize("NFD", name).casefold())


def path_key(path: str) -> str:
    """What a note is found under by its path: folded (`fold`), `.md` dropped."""
    return fold(strip_md(path))


def name_key(path: str) -> str:
    """What a note is found under by its file name: its title, folded (the last component
    of its `path_key`: folding makes no `/`, and `.md` is the title's)."""
    return _last(path_key(path))


def _last(path: str) -> str:
    """`posixpath.basename` without its overhead (hot: once or twice a resolved link)."""
    return path[path.rfind("/") + 1:]


def alias_keys(aliases: Sequence[str]) -> list[str]:
    """What a note is found under by its aliases (whole, stripped, folded)."""
    return [fold(a.strip()) for a in aliases]
