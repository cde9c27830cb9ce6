"""Edits of a note's text that touch one span and nothing else (pure functions on text).

An `Edit` says what to change; `apply(text, edit)` returns the new text. The contract, which
the property tests check: every character outside the edited span is kept as it was, so a
person's edits elsewhere in the note (whitespace, line endings, frontmatter) survive.

    append        text added at the end; a newline first when the note does not end in one
                  (a lone CR when its lines end so, classic Mac: it ends a line there too)
    prepend       text inserted at the start of the body: after the frontmatter block when
                  there is one (a leading BOM stays first), else at the very start; a block
                  whose closing fence ends the file gets a newline after it first. A text
                  that does not end in a newline gets one when the body starts with a
                  heading or a code fence, which it would otherwise turn into plain text
    section       the body of the section under a heading (ATX "#" .. "######", outside
                  fenced code) is replaced: from the line after the heading up to the next
                  heading of the same or a higher level (or the end). `heading` is its text
                  ("Plans" or "## Plans"); exactly one heading must match. A replacement that
                  does not end in a newline gets one when another heading follows
    replace       every occurrence of `find` becomes `text`; with `expected_count`, the edit
                  is refused unless there are exactly that many occurrences (one by default)

Refusals raise vault.errors.EditRefused with the reason and its counts.

`size_after(text, edit)` is the UTF-8 size of `apply(text, edit)` computed without building
it (a replace of a short `find` by a long text, `expected_count` times, would otherwise build
a string of count x len(text) first), so a size limit is checked before any text is made.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from ..errors import EditRefused
from ..plural import counted
from .frontmatter import BOM, find_block

EditKind = Literal["append", "prepend", "section", "replace"]
EDIT_KINDS: tuple[EditKind, ...] = ("append", "prepend", "section", "replace")

_HEADING = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*")
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")


@dataclass(frozen=True)
class Edit:
    """One edit: its kind, the new text, and what locates the span (see the module doc)."""

    kind: EditKind
    text: str = ""
    heading: str | None = None
    find: str | None = None
    expected_count: int | None = 1


# A line ends at CRLF, a lone CR or LF, and nowhere else: how the index reads a note's lines
# (frontmatter.lines_view; CodeMirror's `\r\n?|\n`). `str.splitlines` also ends one at \x0b,
# \x0c, \x1c-\x1e, \x85, U+2028 and U+2029: `top\u2028# Plans` was a section to an edit and
# no heading to the index, and the prepend found the same line ends another way (HOUSE40).
_LINE_END = re.compile(r"\r\n|\r|\n")


def _lines(text: str) -> list[tuple[int, int, str]]:
    """(start, end, line without its line end) for every line of `text` (`_LINE_END`)."""
    out: list[tuple[int, int, str]] = []
    pos = 0
    for m in _LINE_END.finditer(text):
        out.append((pos, m.end(), text[pos:m.start()]))
        pos = m.end()
    if pos < len(text):  # the last line, unended
        out.append((pos, len(text), text[pos:]))
    return out


def headings(text: str, start: int = 0) -> list[tuple[int, int, int, str]]:
    """(line start, line end, level, heading text) of the ATX headings at or after `start`,
    skipping fenced code blocks."""
    found: list[tuple[int, int, int, str]] = []
    fence: str | None = None
    for lo, hi, line in _lines(text):
        if hi <= start:
            continue
        if lo < start:  # a BOM first: the line is read from `start`, as the index reads it
            lo, line = start, line[start - lo:]
        m = _FENCE.match(line)
        if fence is not None:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) \
                    and not line[m.end():].strip():
                fence = None
            continue
        if m:
            fence = m.group(1)
            continue
        h = _HEADING.fullmatch(line)
        if h:
            found.append((lo, hi, len(h.group(1)), (h.group(2) or "").strip()))
    return found


def _classic_mac(text: str) -> bool:
    """Whether `text`'s lines end in lone CRs (no LF at all): what is added to it ends so."""
    return "\r" in text and "\n" not in text


def _ends_line(text: str) -> bool:
    return text.endswith("\n") or (text.endswith("\r") and _classic_mac(text))


def _line_end(text: str) -> str:
    return "\r" if _classic_mac(text) else "\n"


def body_start(text: str) -> int:
    """Where the body starts: after the frontmatter block, else after a BOM, else 0."""
    block = find_block(text)
    if block is not None:
        return block.body_start
    return 1 if text.startswith(BOM) else 0


def _prepend_at(text: str, added: str) -> tuple[int, str]:
    """Where prepended text goes, and the line ending it needs first: without one, text after
    a closing fence that ends the file would fuse with it (`---top`), and the note would lose
    its frontmatter."""
    at = body_start(text)
    block = find_block(text)
    if block is None or not added or at < len(text) or text.endswith("\n") \
            or (text.endswith("\r") and block.newline == "\r"):  # a lone CR ends the fence line
        return at, ""
    return at, "\n" if text.endswith("\r") else block.newline


def _prepend_end(text: str, at: int, added: str) -> str:
    """The line end prepended text needs after it: `top` before `# Title` made `top# Title`,
    and the note lost its heading (a code fence its code block); text that ends a line, or
    lands before ordinary text, is inserted as given. The line end is the one that line has."""
    if not added or added.endswith(("\n", "\r")):
        return ""
    m = _LINE_END.search(text, at)
    line = text[at:m.start() if m else len(text)]
    if not (_HEADING.fullmatch(line) or _FENCE.match(line)):
        return ""
    return m.group() if m else _line_end(text)


def _section_span(text: str, heading: str, replacement: str) -> tuple[int, int, str]:
    """(end of the heading line, end of its section, the replacement as inserted)."""
    wanted = heading.strip().lstrip("#").strip()
    level_given = len(heading.strip()) - len(heading.strip().lstrip("#"))
    all_heads = headings(text, body_start(text))
    matches = [i for i, h in enumerate(all_heads)
               if h[3] == wanted and (level_given == 0 or h[2] == level_given)]
    if len(matches) != 1:
        raise EditRefused("section", f"heading {wanted!r} matches "
                          f"{counted(len(matches), 'heading')}", expected=1, found=len(matches))
    i = matches[0]
    _, head_end, level, _ = all_heads[i]
    end = next((h[0] for h in all_heads[i + 1:] if h[2] <= level), len(text))
    if end < len(text) and replacement and not replacement.endswith("\n") \
            and not (replacement.endswith("\r") and _classic_mac(text)):
        replacement += _line_end(text)
    if head_end == len(text) and not _ends_line(text) and replacement:
        replacement = _line_end(text) + replacement  # the heading was the last line, unended
    return head_end, end, replacement


def _check(edit: Edit) -> None:
    """EditRefused for an edit that needs a locator it lacks, or of an unknown kind."""
    if edit.kind == "section" and (not edit.heading
                                   or not edit.heading.strip().lstrip("#").strip()):
        raise EditRefused("section", "a heading is required")
    if edit.kind == "replace" and not edit.find:
        raise EditRefused("replace", "`find` must be a non-empty string")
    if edit.kind not in EDIT_KINDS:
        raise EditRefused(str(edit.kind), f"unknown edit kind; one of {', '.join(EDIT_KINDS)}")


def _replace_count(text: str, edit: Edit) -> int:
    assert edit.find
    count = text.count(edit.find)
    if count == 0 or (edit.expected_count is not None and count != edit.expected_count):
        raise EditRefused("replace", f"{edit.find[:80]!r} occurs {counted(count, 'time')}",
                          expected=edit.expected_count, found=count)
    return count


def _utf8(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def size_after(text: str, edit: Edit) -> int:
    """The UTF-8 size in bytes of `apply(text, edit)`, computed arithmetically (no new text is
    built); EditRefused exactly when `apply` would refuse."""
    _check(edit)
    size = _utf8(text)
    if edit.kind == "append":
        sep = text and not _ends_line(text) and edit.text
        return size + (1 if sep else 0) + _utf8(edit.text)
    if edit.kind == "prepend":
        at, sep = _prepend_at(text, edit.text)
        return size + _utf8(sep + edit.text + _prepend_end(text, at, edit.text))
    if edit.kind == "section":
        assert edit.heading
        head_end, end, replacement = _section_span(text, edit.heading, edit.text)
        return size - _utf8(text[head_end:end]) + _utf8(replacement)
    assert edit.find
    # non-overlapping occurrences, as str.replace finds them; UTF-8 keeps each one whole
    return size + _replace_count(text, edit) * (_utf8(edit.text) - _utf8(edit.find))


def apply(text: str, edit: Edit) -> str:
    """The note's text after `edit`; EditRefused when the edit cannot apply as asked."""
    _check(edit)
    if edit.kind == "append":
        sep = _line_end(text) if text and not _ends_line(text) and edit.text else ""
        return text + sep + edit.text
    if edit.kind == "prepend":
        at, sep = _prepend_at(text, edit.text)
        return text[:at] + sep + edit.text + _prepend_end(text, at, edit.text) + text[at:]
    if edit.kind == "section":
        assert edit.heading
        head_end, end, replacement = _section_span(text, edit.heading, edit.text)
        return text[:head_end] + replacement + text[end:]
    assert edit.find
    _replace_count(text, edit)
    return text.replace(edit.find, edit.text)
