"""Which vault-relative paths the store accepts: the checks, one reason string each.

A path is refused when it is empty, not valid Unicode, longer than `MAX_PATH_BYTES`, absolute,
has a drive letter or a backslash, or contains a control, bidi or look-alike character; a
component is refused when it is `..`, hidden (a dot-name: `.obsidian/`, `.git/`, `.rmh/` are
not notes), longer than `MAX_COMPONENT_BYTES`, or becomes a slash or a leading dot under NFKC.
"""

from __future__ import annotations

import posixpath
import re
import unicodedata
from functools import lru_cache

MAX_COMPONENT_BYTES = 255
MAX_PATH_BYTES = 1024

# Look-alikes of "/", "\", "." would display a traversal or hidden name meaning something
# else; bidi controls and the BOM reorder or hide how a path reads.
_BAD_CHARS = (
    (re.compile("[\x00-\x1f\x7f-\x9f]"), "control"),
    (
        re.compile(
            "[\u2215\u2044\uff0f\u29f8\u2024\u2025\ufe52\uff0e\uff3c\ufe68\u29f5\u2216\u29f9]"
        ),
        "look-alike",
    ),
    (re.compile("[\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff]"), "bidi"),
)
_DRIVE = re.compile(r"^[A-Za-z]:")


def _escape(ch: str) -> str:
    o = ord(ch)
    if ch == "\\" or ch.isprintable():
        return "\\\\" if ch == "\\" else ch
    if 0xDC80 <= o <= 0xDCFF:  # a byte that was not UTF-8 (os.fsdecode's surrogateescape)
        return f"\\x{o - 0xDC00:02x}"
    return f"\\x{o:02x}" if o <= 0xFF else f"\\u{o:04x}" if o <= 0xFFFF else f"\\U{o:08x}"


def printable(name: str) -> str:
    """`name` as one line of printable, valid UTF-8 text that says which name it is: itself
    when every character is printable and none is a backslash (the usual case); else the
    backslash doubled, a byte that was not UTF-8 as `\\xff`, any other character that
    `str.isprintable` refuses (controls, newlines, bidi and format characters, lone
    surrogates) as `\\x0a`, `\\u202e` or `\\U000e0001`. What the index stores and `doctor`
    shows for a file it skips: a file name is any bytes, and SQLite, JSON and a terminal
    take only text."""
    if name.isprintable() and "\\" not in name:
        return name
    return "".join(map(_escape, name))


def copy_name(rel: str, n: int) -> str:
    """The `n`-th name for a copy of vault path `rel` where the others are taken (the trash:
    `Store.trash`): `rel` for 0, else " (n)" before its suffix, the name cut at a character
    so it stays within MAX_COMPONENT_BYTES (a note named at the cap had one trash copy, then
    ENAMETOOLONG: it could not be deleted again)."""
    if n == 0:
        return rel
    folder, base = posixpath.split(rel)
    stem, suffix = posixpath.splitext(base)
    tag = f" ({n}){suffix}"
    room = max(MAX_COMPONENT_BYTES - len(tag.encode("utf-8")), 0)
    return posixpath.join(folder, stem.encode("utf-8")[:room].decode("utf-8", "ignore") + tag)


def path_problem(path: str) -> str | None:
    """Why a whole path is refused (before it is split into components), or None."""
    if not path:
        return "empty path"
    try:
        size = len(path.encode("utf-8"))
    except UnicodeEncodeError:
        return "not valid unicode"
    if size > MAX_PATH_BYTES:
        return f"path longer than {MAX_PATH_BYTES} bytes"
    for rx, what in _BAD_CHARS:
        m = rx.search(path)
        if m:
            return f"{what} character U+{ord(m.group()):04X}"
    if "\\" in path:
        return "backslash"
    if path.startswith("/"):
        return "absolute path"
    return "drive letter" if _DRIVE.match(path) else None


@lru_cache(maxsize=65536)
def component_problem(comp: str) -> str | None:
    """Why one component is refused, or None. Cached: folder names repeat in scans."""
    if comp == "..":
        return "parent component '..'"
    if comp.startswith("."):
        return "hidden component (reserved)"
    if len(comp.encode("utf-8")) > MAX_COMPONENT_BYTES:
        return f"component longer than {MAX_COMPONENT_BYTES} bytes"
    norm = unicodedata.normalize("NFKC", comp)
    if "/" in norm or "\\" in norm:
        return "look-alike slash (NFKC)"
    return "look-alike dot (NFKC)" if norm.startswith(".") else None


def path_refusal(path: str) -> str | None:
    """Why `path` can be no vault path (`FolderView.check`'s reasons, a note's ".md" aside:
    a folder's name too), or None when it may be one."""
    problem = path_problem(path)
    for comp in path.split("/"):
        if comp not in ("", "."):
            problem = problem or component_problem(comp)
    return problem
