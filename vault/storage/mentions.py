"""Whether a text names a string: the one rule erasure uses to pick notes, trash copies, log
lines and events that name a subject, and to look for it afterwards in the bytes rmh keeps.

A text *mentions* a needle when the needle occurs in it case-insensitively (both case-folded,
Unicode `str.casefold`, and in compatibility form: NFKC, `fold`, as search reads text) **as a
whole word**: the character before the occurrence is no word character (a letter, a digit,
`_`), nor is the one after, on each side where the needle's own edge is a word character
("C++" may be followed by anything).
A character of a script written without spaces between words (Han, kana, Hangul, Thai, Lao,
Khmer, Myanmar: notes/text.py) is no edge on either side: "山田太郎" is named in
"山田太郎さんは東京に住んでいる" and "Ann" in "私はAnnさんと会った" (the whole-word rule
alone named a name in such prose nowhere, and `rmh forget` erased none of its notes while its
proof said 0 occurrences).
So `--subject Ann` names "Ann", "ann's", "[[Ann]]" and "people/Ann.md", and not "annual",
"Joanna" or the hex digest "3ann0"; a substring rule erased every note holding "annual" for
good (`rmh forget` is not reversible).
An escape in serialised text (JSON's `\\n`, `\\t`, `\\u00e9` before the needle) counts as a
boundary, so a log line or record that stores "...\\nAnn said" still names Ann. A needle of
several words is named across any white space between them ("Ann\\nLee" in a hard-wrapped
paragraph names "Ann Lee").

In bytes (`count_in_bytes`, the proof after an erasure reads every file rmh owns, SQLite
files and arrays included) a whole-word occurrence counts when it sits in text: at least
`CONTEXT` printable characters (valid UTF-8, no control byte but tab and newlines) run on from
it on one side, or the text runs to the file's start or end. Chance bytes are not text: in a
78 MB shared embedding cache (float32 vectors under hex keys), "ed" occurs 20,098 times as
bytes, 222 times as a whole word and 0 times in text, "al" 1,648, 216 and 0, "ada" 1,183, 1
and 0 (with 8 characters of context 2 chance "ed" were left: a float's exponent byte is often
"<", "=" or ">"). A letter or two of text between binary bytes and the occurrence is a
field's header, not part of a word (`_bounded`: SQLite writes a value's serial type right
before it, often an ASCII letter or digit). A needle as a whole value between
binary fields (an alias "Ann" alone in a column) is not counted there, nor one that starts a
value right after a text value ending in a letter ("search" then "Ann met Bo": "searchAnn met
Bo" is one word as bytes): in a SQLite file `count_in_sqlite` reads every text value of its
rows as text. The proof also looks for every erased note's path and distinctive lines as
plain bytes (storage/erase.py). A sparse file's holes (`data_extents`) are zero bytes no needle
without a NUL can match, so they are not read: a 1 TB sparse file in the vault made the
proof read a terabyte of zeros (hours) before.
"""

from __future__ import annotations

import bisect
import errno
import os
import re
import sqlite3
import unicodedata
from collections.abc import Callable, Iterable
from functools import lru_cache
from pathlib import Path
from typing import BinaryIO

from ..notes.text import (
    JOINERS,
    SEARCH_VARIANTS,
    SPACELESS_CLASS,
    script_points,
    search_form,
    spaceless,
)

HEADER = 2  # characters between binary bytes and a value: SQLite's serial type varint
CONTEXT = 16  # printable characters beside an occurrence in bytes that make it text
# white space between a needle's words: any run of it (a hard-wrapped "Ann\nLee" names "Ann
# Lee"), or of its escapes in serialised text
_SPACE = r"(?:\s|\\[nrt])+"
_SPACE_BYTES = rb"(?:[ \t\r\n]|\xc2\xa0|\\[nrt])+"
_POINTED, _POINTED_END = "\u0590", "\u06ff"  # the Hebrew and Arabic blocks
_ESCAPE = re.compile(r"(?:\\[nrtbf\"/\\]|\\u[0-9a-f]{4})\Z")  # folded text: lower-case


def fold(text: str) -> str:
    """`text` in compatibility form (NFKC), case-folded and composed, as search's tokenizer
    reads it (notes/text.py): "Zoë" typed decomposed, as macOS names files, is the "Zoë" a
    user types composed, and a full-width "Ｑｕｉｘ" is "quix" (search found it for "quix";
    the erasure, folding to NFC only, left it); "İstanbul" is "istanbul", and Arabic and Hebrew
    points are read away and Arabic letter variants folded (`search_form`: search found
    "مُحَمَّد" for "محمد", the erasure named it nowhere)."""
    return search_form(case_fold(text))


def case_fold(text: str) -> str:
    """`text` in compatibility form, case-folded, its points and letter variants as written
    (`fold` before session 31: records of forgotten subjects written then hold it)."""
    if not unicodedata.is_normalized("NFKC", text):
        text = unicodedata.normalize("NFKC", text)
    folded = text.casefold()
    return folded if unicodedata.is_normalized("NFKC", folded) else unicodedata.normalize(
        "NFKC", folded)


def _word(ch: str) -> bool:
    """A word character; a combining mark too (in bytes, "Zoe" before U+0308 is "Zoë")."""
    return ch.isalnum() or ch == "_" or unicodedata.combining(ch) > 0


def _edge(ch: str) -> bool:
    """A word character that a whole word does not run on past: not of a script written
    without spaces (module docstring)."""
    return _word(ch) and not spaceless(ch)


_GLUED = f"[^\\W{SPACELESS_CLASS}]"  # a character a word runs on through (`_edge`, in `re`)


@lru_cache(maxsize=64)
def pattern(needle: str) -> re.Pattern[str]:
    """The whole-word pattern of `needle` over case-folded text (module docstring)."""
    folded = fold(needle).strip()
    if not folded:
        return re.compile(r"(?!)")  # only white space: names nothing
    left = (f"(?:(?<!{_GLUED})|" + r"(?<=\\[nrtbf\"/\\])|(?<=\\u[0-9a-f]{4}))"
            if _edge(folded[0]) else "")
    right = f"(?!{_GLUED})" if _edge(folded[-1]) else ""
    return re.compile(left + _SPACE.join(re.escape(w) for w in folded.split()) + right)


def mentions(text: str, needle: str) -> bool:
    """Whether `text` names `needle` as a whole word, case-insensitively (an empty needle
    names nothing)."""
    return bool(needle) and pattern(needle).search(fold(text)) is not None


def mentioning(needles: Iterable[str]) -> Callable[[str], bool]:
    """`mentions` for several needles at once: a text names one of them (none: nothing)."""
    pats = [pattern(n) for n in dict.fromkeys(needles) if n]

    def test(text: str) -> bool:
        if not pats:
            return False
        folded = fold(text)
        return any(p.search(folded) is not None for p in pats)
    return test


def ending_in_part(needles: Iterable[str]) -> Callable[[str], bool]:
    """Whether a text that was cut short (a log keeps only so many characters of it) ends in
    the beginning of a needle: from a word boundary (as `mentions` counts one) to its end,
    the text, folded and with its white space runs made one space, is where a needle starts
    (any length, one letter included: what followed the cut is unknown, so the cut part may
    be that needle's). A cut "... the launch code is un" of the erased line "The launch code
    is under the floorboard" holds no whole needle, and is its fragment."""
    starts = sorted({" ".join(fold(n).split()) for n in needles if n.strip()})
    longest = max((len(n) for n in starts), default=0)

    def test(text: str) -> bool:
        folded = " ".join(fold(text).split())
        for i in range(max(0, len(folded) - longest), len(folded)):
            tail = folded[i:]
            if i and _word(tail[0]) and _word(folded[i - 1]):
                continue  # inside a word: no needle starts there
            at = bisect.bisect_left(starts, tail)
            if at < len(starts) and starts[at].startswith(tail):
                return True
        return False
    return test


def _forms(ch: str) -> set[bytes]:
    """The UTF-8 forms of one character a byte occurrence may hold: itself, its lower, upper
    and folded forms, composed or not, and an ASCII one's full-width form (`fold` reads it as
    the ASCII one), and the letters search reads as it (`SEARCH_VARIANTS`: "İ" for "i")."""
    cased = {ch, ch.lower(), ch.upper(), ch.casefold(), *SEARCH_VARIANTS.get(ch, "")}
    # ("İ".casefold() is two characters, which have no full-width form)
    cased |= {chr(ord(c) + 0xFEE0) for c in list(cased) if len(c) == 1 and "!" <= c <= "~"}
    return {unicodedata.normalize(nf, f).encode("utf-8") for f in cased for nf in ("NFC", "NFD")}


def _spellings(needle: str) -> list[str]:
    """The needle as typed (composed) and as `fold` reads it: a full-width "Ｑｕｉｘ" is
    searched as "quix" too."""
    typed = unicodedata.normalize("NFC", needle).translate(_UNJOINED)  # `_joiners` matches them
    return list(dict.fromkeys((typed, fold(needle))))


_UNJOINED = dict.fromkeys(map(ord, JOINERS))


@lru_cache(maxsize=16)
def _candidates(needle: str) -> re.Pattern[bytes]:
    """Byte occurrences of `needle` in any case (each character as one of its `_forms`, in
    UTF-8), as typed or folded, a Hebrew or Arabic letter followed by any of its optional
    points (`search_form` reads them away): what `count_in_bytes` then judges."""
    spellings = []
    for spelling in _spellings(needle):
        words = []
        for word in spelling.split():
            parts = [b"(?:" + b"|".join(re.escape(f) for f in sorted(_forms(ch))) + b")"
                     + (_points() if _POINTED <= ch <= _POINTED_END else b"") for ch in word]
            words.append(_joiners().join(parts))
        if words:
            spellings.append(_SPACE_BYTES.join(words))
    return re.compile(b"|".join(spellings) if spellings else b"(?!)")


@lru_cache(maxsize=1)
def _joiners() -> bytes:
    """Any run of the format characters search reads away inside a word (`JOINERS`: a soft
    hyphen, a zero-width joiner...), in UTF-8: "Ali\u00adce" is an occurrence of "Alice"."""
    return b"(?:" + b"|".join(re.escape(c.encode()) for c in JOINERS) + b")*"


@lru_cache(maxsize=1)
def _points() -> bytes:
    """Any run of the points search reads away after a Hebrew or Arabic letter, in UTF-8."""
    return b"(?:" + b"|".join(re.escape(c.encode()) for c in script_points()) + b")*"


def _bounded(left: str, right: str, needle: str) -> bool:
    """Whether an occurrence between `left` and `right` (decoded neighbours) is a whole word.
    A word character that is all the text there is between the occurrence and binary bytes
    (`HEADER` characters at most) is a field's header, not a word: SQLite writes a text
    value's serial type, often a letter or digit, right before it ("AZoë and ...")."""
    folded = fold(needle).strip()
    if not folded:
        return False
    if (_edge(folded[0]) and _glued(left[::-1])
            and not _ESCAPE.search(left.casefold())):
        return False
    return not (_edge(folded[-1]) and _glued(right))


def _glued(side: str) -> bool:
    """Whether `side` (read outwards from an occurrence) starts with a word character of text
    (not a field header before binary bytes)."""
    if not side or not _edge(side[0]):
        return False
    run = _run(side)
    return run > HEADER or run == len(side)


def _run(text: str) -> int:
    """How many characters from the start of `text` are printable (tab and newlines too)."""
    n = 0
    for ch in text:
        if not (ch.isprintable() or ch in "\t\n\r"):
            break
        n += 1
    return n


def count_in_bytes(file: Path, needle: str) -> int:
    """Occurrences of `needle` in the file's bytes as a whole word in text (module docstring).
    OSError when the file cannot be read. Read in windows with `pread`, never mapped: a file
    another program shortens while it is read (an editor truncating in place, a WAL
    checkpoint) only reads short, where a mapping killed the process with SIGBUS."""
    if not needle:
        return 0
    with open(file, "rb") as fh:
        size = fh.seek(0, 2)
        candidates = _candidates(needle)
        extents = [(0, size)] if "\0" in needle else data_extents(fh, size)
        return sum(_count_window(fh.fileno(), start, end, size, candidates, needle)
                   for start, end in extents)


WINDOW = 1 << 20  # bytes judged per read (more up to the next cut: `_cuts`)
MARGIN = 1 << 12  # read on both sides of them: at least 4 * CONTEXT, the context judged


@lru_cache(maxsize=16)
def _cuts(needle: str) -> re.Pattern[bytes]:
    """A byte no occurrence of `needle` (`_candidates`) can hold: none of its characters'
    forms' bytes, no white space or escape byte. No occurrence lies across one."""
    held = {b for spelling in _spellings(needle) for ch in spelling for f in _forms(ch)
            for b in f}
    held |= set(b" \t\r\n\xc2\xa0\\nrt") | set(JOINERS.encode())
    return re.compile(b"[^" + b"".join(re.escape(bytes([b])) for b in sorted(held)) + b"]")


def _count_window(fd: int, start: int, end: int, size: int, candidates: re.Pattern[bytes],
                  needle: str) -> int:
    """`count_in_bytes` over [start, end) of the file `fd` of `size` bytes, in windows of at
    least WINDOW bytes, each ending at a cut (`_cuts`: no occurrence goes on past it) and
    read with MARGIN bytes of context around it. Where no cut follows within what was read,
    more is read (a file all of the needle's bytes and white space is read in one piece)."""
    total, pos, extra, cuts = 0, start, MARGIN, _cuts(needle)
    while pos < end:
        lo_w = max(0, pos - MARGIN)
        want = min(size, pos + WINDOW + extra + MARGIN) - lo_w
        buf = os.pread(fd, want, lo_w)
        hi_w = lo_w + len(buf)
        eof = size if len(buf) == want else hi_w  # a short read: the file shrank meanwhile
        size, end = eof, min(end, eof)
        if min(end, eof) <= pos + WINDOW:
            stop = min(end, eof)
        else:
            cut = cuts.search(buf, pos + WINDOW - lo_w)
            stop = cut.start() + lo_w if cut is not None else hi_w
            if stop + MARGIN > hi_w and hi_w < eof:  # no cut, or no context after it: more
                extra *= 2
                continue
            stop = min(stop, end)
        for m in candidates.finditer(buf, pos - lo_w, stop - lo_w):
            i, j = m.start() + lo_w, m.end() + lo_w
            lo, hi = max(0, i - 4 * CONTEXT), min(eof, j + 4 * CONTEXT)
            left = buf[lo - lo_w:i - lo_w].decode("utf-8", "surrogateescape")
            right = buf[j - lo_w:hi - lo_w].decode("utf-8", "surrogateescape")
            if not _bounded(left, right, needle):
                continue
            back, ahead = _run(left[::-1]), _run(right)
            if (back >= CONTEXT or (lo == 0 and back == len(left))
                    or ahead >= CONTEXT or (hi == eof and ahead == len(right))):
                total += 1
        pos, extra = stop, MARGIN
    return total


def data_extents(fh: BinaryIO, size: int) -> list[tuple[int, int]]:
    """The (start, end) byte ranges of the first `size` bytes of the open file `fh` that hold
    data, in order: a sparse file's holes (all zero bytes) are left out (SEEK_DATA and
    SEEK_HOLE), so no match of a needle without a NUL byte lies across one. The whole file
    where the file system cannot tell. Moves `fh`'s position."""
    if not hasattr(os, "SEEK_DATA") or size <= 0:
        return [(0, size)] if size > 0 else []
    out, pos, fd = list[tuple[int, int]](), 0, fh.fileno()
    try:
        while pos < size:
            start = os.lseek(fd, pos, os.SEEK_DATA)
            end = min(os.lseek(fd, start, os.SEEK_HOLE), size)
            if start >= size:
                break
            if end <= start:  # no progress: the file changes under us; read it whole
                return [(0, size)]
            out.append((start, end))
            pos = end
    except OSError as exc:
        if exc.errno != errno.ENXIO:  # ENXIO: no data after `pos`; else no support
            return [(0, size)]
    return out


SQLITE_MAGIC = b"SQLite format 3\x00"


def count_in_sqlite(file: Path, needle: str) -> int:
    """Whole-word occurrences of `needle` in the text values of every table of the SQLite
    file `file` (0 when it is none, or cannot be read as one), each value on its own: the
    bytes of two values side by side make one word (module docstring). Read as immutable:
    nothing is written beside it (its WAL, if any, is read as bytes by the caller)."""
    if not needle:
        return 0
    with open(file, "rb") as fh:
        if fh.read(len(SQLITE_MAGIC)) != SQLITE_MAGIC:
            return 0
    pat, total = pattern(needle), 0
    try:
        conn = sqlite3.connect(f"{file.resolve().as_uri()}?mode=ro&immutable=1", uri=True)
    except sqlite3.Error:
        return 0
    try:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = "
                                              "'table'")]
        for table in tables:
            quoted = '"' + table.replace('"', '""') + '"'
            try:
                rows = conn.execute(f"SELECT * FROM {quoted}")
                for row in rows:
                    total += sum(len(pat.findall(fold(v))) for v in row
                                 if isinstance(v, str))
            except sqlite3.Error:  # a virtual table whose module is not loaded, a bad page
                continue
    except sqlite3.Error:
        return total
    finally:
        conn.close()
    return total
