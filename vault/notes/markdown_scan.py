"""Scan Obsidian markdown for links, tags and headings, skipping code and comments.

Contract: `scan_body(text)` never raises. It ignores everything inside fenced code blocks
(``` or ~~~, length >= 3, closed by a fence of the same character at least as long, or the end
of the text), inline code spans (a run of n backticks closed by the next run of exactly n
backticks in the same paragraph), HTML comments `<!-- -->` and Obsidian comments `%% %%` (an
unclosed comment runs to the end; but a `<!--` inside a line is a comment only when its `-->`
is in the same paragraph or heading line, else literal text, as CommonMark reads raw HTML:
`_comment_end`), and math (`$$...$$`, `$...$` on one line: math_spans.py). A link, tag or
heading that overlaps any of these is dropped.

Recognised forms follow Obsidian:
- wiki-links `[[T]]`, `[[T|alias]]`, `[[T#Heading]]`, `[[T#^block]]`, `[[#Heading]]`, `![[T]]`,
  `[[T.md]]` (".md" stripped), `[[T\\|alias]]` (the table escape);
- markdown links `[text](path/T.md)`, `[text](<path with spaces.md>)`, `![](T.md)`, with %-decoding,
  an optional `#fragment`, balanced parentheses (one level: `[t](Swan%20(book).md)`), a title
  in quotes or parentheses,
  and without ".md" (`[text](Some%20Note)`, `[text](folder/note)`:
  Obsidian's links to a note, resolved as `T.md`); external URLs (any `scheme:` or `//host`), a
  bare `#fragment`, a folder (`a/`) and a path whose file name has another extension (a dot and
  1-8 letters or digits, a letter among them: `pic.png`, `www.example.com`) are not links;
- tags `#tag`, `#nested/tag`, `#a-b_c`, `#2024-05`, `#📚/books`: up to white space or punctuation
  (`_TAG`); the `#` must start the line or follow whitespace, and the tag must not be all digits;
- ATX headings `# Title` (up to 3 leading spaces, closing `#`s removed). Setext headings and
  indented code blocks are not recognised.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass, replace
from typing import Literal
from urllib.parse import unquote

from .math_spans import MathScan

Span = tuple[int, int]


@dataclass(frozen=True)
class Link:
    """One link as written. Offsets are into the full note text; `start` includes the `!`."""

    target: str
    heading: str | None
    block: str | None
    alias: str | None
    embed: bool
    kind: Literal["wiki", "markdown"]
    start: int
    end: int


@dataclass(frozen=True)
class LinkSite:
    """A link plus where its note part sits in the text, for rewriting it in place."""

    link: Link
    target_start: int  # the note part as written (".md" included, whitespace excluded)
    target_end: int
    md_suffix: bool  # the written note part ends with ".md"
    angle: bool  # markdown destination written as <...>
    # inside a frontmatter value: "'" or '"' (a quoted YAML scalar: the link's text is read
    # unescaped and a new target written escaped), ":" (a plain scalar); "" elsewhere
    quote: str = ""


@dataclass(frozen=True)
class BodyScan:
    sites: tuple[LinkSite, ...]
    tags: tuple[str, ...]  # in text order, "#" removed, not deduplicated
    headings: tuple[str, ...]


_FENCE_OPEN = re.compile(r"(?:[ \t]*>)*[ \t]*(`{3,}|~{3,})(.*)")
_FENCE_CLOSE = re.compile(r"(?:[ \t]*>)*[ \t]*(`{3,}|~{3,})[ \t]*")
_INLINE_START = re.compile(r"`+|<!--|%%|\$\$?")
_BACKTICKS = re.compile(r"`+")
_BLANK_LINE = re.compile(r"\n[ \t]*\r?\n")
# What may precede a `<!--` on its line for it to open an HTML block (CommonMark 4.6, type 2):
# indentation, blockquote markers, list markers. Anything else makes it inline (6.6).
_BLOCK_PREFIX = re.compile(r"[ \t]*(?:>[ \t]*|(?:[-+*]|\d{1,9}[.)])[ \t]+)*")
WIKI = re.compile(r"(!?)\[\[([^\[\]\n]+)\]\]")
# A destination not in <...> may hold balanced parentheses (CommonMark 6.3, one level here:
# Obsidian writes `[x](Black%20Swan%20(book).md)`, %-encoding spaces but not parentheses).
_MARKDOWN = re.compile(
    r"(!?)\[([^\[\]\n]*)\]\([ \t]*(?:<([^<>\n]*)>|((?:[^\s()<>]|\([^\s()<>]*\))++))"
    r"(?:[ \t]+(?:\"[^\"\n]*\"|'[^'\n]*'|\([^()\n]*\)))?[ \t]*\)"
)
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:|//")
_EXTENSION = re.compile(r"\.(?=[A-Za-z0-9]*[A-Za-z])[A-Za-z0-9]{1,8}")
# A tag runs to white space or punctuation, as Obsidian's tag check reads it (letters, digits,
# `_`, `-`, `/`, emoji: `#📚/books`; not `.,;:!?'"()[]{}` or General Punctuation such as `’`).
_TAG = re.compile(r"(?<!\S)#([^\s\u2000-\u206f\u2e00-\u2e7f'!\"#$%&()*+,.:;<=>?@^`{|}~\[\]\\]+)")
_NOT_A_TAG = re.compile(r"\d+")
# The heading line; the title and its optional closing `#`s are cut in `_heading_title` (a lazy
# `(.*?)(?:[ \t]+#+)?` backtracked quadratically on a long line of spaces).
_HEADING = re.compile(r"^ {0,3}#{1,6}(?:[ \t][^\n]*)?$", re.MULTILINE)


def _fenced_spans(text: str) -> list[Span]:
    """Fenced code blocks as (start, end) spans, whole lines, fences included."""
    if "```" not in text and "~~~" not in text:
        return []
    spans: list[Span] = []
    fence_char, fence_len, fence_start = "", 0, 0
    pos = 0
    for line in text.split("\n"):
        end = pos + len(line)
        content = line[:-1] if line.endswith("\r") else line
        if not fence_char:
            m = _FENCE_OPEN.fullmatch(content)
            # A backtick fence's info string may not contain backticks (CommonMark 4.5).
            if m and not (m.group(1)[0] == "`" and "`" in m.group(2)):
                fence_char, fence_len, fence_start = m.group(1)[0], len(m.group(1)), pos
        else:
            m = _FENCE_CLOSE.fullmatch(content)
            if m and m.group(1)[0] == fence_char and len(m.group(1)) >= fence_len:
                spans.append((fence_start, end))
                fence_char = ""
        pos = end + 1
    if fence_char:
        spans.append((fence_start, len(text)))
    return spans


def _code_span_end(text: str, start: int, run: int, limit: int, blanks: list[int]) -> int:
    """End of the inline code span opened by `run` backticks ending at `start`, or -1.

    `blanks` holds the sorted starts of blank lines: a code span does not cross a paragraph.
    """
    i = bisect_left(blanks, start)
    stop = min(limit, blanks[i]) if i < len(blanks) else limit
    for m in _BACKTICKS.finditer(text, start, stop):
        if m.end() - m.start() == run:
            return m.end()
    return -1


def _next_blank(blanks: list[int], start: int, limit: int) -> int:
    """Where the paragraph holding `start` ends: the next blank line, else `limit`."""
    i = bisect_left(blanks, start)
    return min(limit, blanks[i]) if i < len(blanks) else limit


def _comment_end(text: str, start: int, limit: int, blanks: list[int], close: int,
                 line: int, heads: list[Span]) -> int:
    """End of the HTML comment whose `<!--` is at `start`, or -1 when it is literal text.
    `close`: the first `-->` after the `<!--` (-1: none), `line`: where its line starts (both
    kept by the caller as it moves on, so a note of many `<!--` is scanned once, not once each).

    At the start of a line (after indentation, `>` or a list marker) it opens an HTML block
    that runs to the `-->`, else to the end of the text (CommonMark 4.6, type 2). Elsewhere
    it is inline raw HTML (6.6): a comment only when its `-->` comes within its paragraph or
    heading line (`heads`: the heading lines); an unclosed `<!--` in a sentence is literal
    and hides nothing."""
    if _BLOCK_PREFIX.fullmatch(text, line, start) is not None:
        return len(text) if close < 0 else close + 3
    if close < 0 or close >= _next_blank(blanks, start, limit):
        return -1
    i = bisect_left(heads, (line, line))  # a heading is a block of one line, and it ends
    if i < len(heads) and heads[i][0] == line:  # a paragraph above it (CommonMark 4.2)
        return -1 if close >= heads[i][1] else close + 3
    return -1 if i < len(heads) and heads[i][0] < close else close + 3


def excluded_spans(text: str) -> list[Span]:
    """Sorted, merged spans of code, comments and math, where nothing is a link, tag or
    heading."""
    fences = _fenced_spans(text)
    spans = list(fences)
    n, fi, pos = len(text), 0, 0
    blanks: list[int] = []  # starts of blank lines, found at the first `<!--` or backtick
    found_blanks = False
    close, line, seen = -2, 0, 0  # next `-->` (-2: not looked for), line start of `seen`
    heads: list[Span] = []  # the heading lines, found with the blank lines
    math = MathScan(text, WIKI, _BLANK_LINE)
    while (m := _INLINE_START.search(text, pos)) is not None:
        s = m.start()
        while fi < len(fences) and fences[fi][1] <= s:
            fi += 1
        if fi < len(fences) and fences[fi][0] <= s:
            pos = fences[fi][1]
            continue
        tok = m.group()
        if tok[0] == "$":
            end, pos = math.span_end(s, tok, fences[fi][0] if fi < len(fences) else n)
            if end >= 0:
                spans.append((s, end))
            continue
        if tok != "%%" and not found_blanks:
            blanks, found_blanks = [b.start() for b in _BLANK_LINE.finditer(text)], True
            heads = [h.span() for h in _HEADING.finditer(text)] if "#" in text else []
        if tok == "<!--":
            if close != -1 and close < s + 4:  # none left stays none
                close = text.find("-->", s + 4)
            line, seen = max(line, text.rfind("\n", seen, s) + 1), s
            end = _comment_end(text, s, n, blanks, close, line, heads)
            if end < 0:  # literal `<!--`
                pos = m.end()
                continue
        elif tok == "%%":
            e = text.find("%%", m.end())
            end = n if e < 0 else e + 2
        else:
            if s > 0 and text[s - 1] == "\\":  # an escaped backtick is literal
                pos = s + 1
                continue
            limit = fences[fi][0] if fi < len(fences) else n
            end = _code_span_end(text, m.end(), len(tok), limit, blanks)
            if end < 0:  # unmatched run: literal backticks
                pos = m.end()
                continue
        spans.append((s, end))
        pos = end
    spans.sort()
    merged: list[Span] = []
    for a, b in spans:
        if merged and a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b))
        else:
            merged.append((a, b))
    return merged


def _overlaps(spans: list[Span], starts: list[int], a: int, b: int) -> bool:
    i = bisect_left(starts, b) - 1
    return i >= 0 and spans[i][1] > a


def wiki_site(inner: str, start: int, end: int, inner_start: int, embed: bool) -> LinkSite | None:
    """Interpret the text between `[[` and `]]`; None when it names nothing."""
    head, bar, alias = inner.partition("|")
    if bar and head.endswith("\\"):  # `[[T\|a]]` inside a table
        head = head[:-1]
    note, hash_, sub = head.partition("#")
    lead = len(note) - len(note.lstrip())
    raw = note.strip()
    md_suffix = raw.lower().endswith(".md")
    target = raw[:-3] if md_suffix else raw
    heading = block = None
    sub = sub.strip()
    if hash_ and sub.startswith("^"):
        block = sub[1:] or None
    elif hash_:
        heading = sub or None
    if not target and heading is None and block is None:
        return None
    t0 = inner_start + lead
    link = Link(target, heading, block, alias if bar else None, embed, "wiki", start, end)
    return LinkSite(link, t0, t0 + len(raw), md_suffix, False)


def scan_wiki(text: str, lo: int, hi: int) -> list[LinkSite]:
    """Wiki-links in text[lo:hi], code and comments not excluded (frontmatter values; scan_body
    filters them)."""
    out = []
    for m in WIKI.finditer(text, lo, hi):
        site = wiki_site(m.group(2), m.start(), m.end(), m.start(2), bool(m.group(1)))
        if site is not None:
            out.append(site)
    return out


def _markdown_site(m: re.Match[str]) -> LinkSite | None:
    angle = m.group(3) is not None
    dest = m.group(3) if angle else m.group(4)
    dest_start = m.start(3) if angle else m.start(4)
    raw_path, hash_, frag = dest.partition("#")
    if _SCHEME.match(raw_path.lstrip()):
        return None
    path = unquote(raw_path.strip())
    md_suffix = path.lower().endswith(".md")
    if not (note_path(path[:-3]) if md_suffix else bare_note_path(path)):
        return None
    frag = unquote(frag).strip()
    heading = block = None
    if hash_ and frag.startswith("^"):
        block = frag[1:] or None
    elif hash_:
        heading = frag or None
    lead = len(raw_path) - len(raw_path.lstrip())
    t0 = dest_start + lead
    text = m.group(2)
    link = Link(path[:-3] if md_suffix else path, heading, block, text or None, bool(m.group(1)),
                "markdown", m.start(), m.end())
    return LinkSite(link, t0, t0 + len(raw_path.strip()), md_suffix, angle)


def note_path(path: str) -> bool:
    """Whether a markdown destination's path (decoded, `.md` dropped) can name a note: a
    file name, not empty, not a folder (`a/`), not `.` or `..`."""
    name = path.rpartition("/")[2]
    return name not in ("", ".", "..")


def bare_note_path(path: str) -> bool:
    """Whether a markdown destination written without `.md` names a note (`note_path`, and
    no other extension ends its file name: `pic.png` is an attachment)."""
    name = path.rpartition("/")[2]
    dot = name.rfind(".")
    return note_path(path) and (dot <= 0 or _EXTENSION.fullmatch(name[dot:]) is None)


def scan_body(text: str, offset: int = 0) -> BodyScan:
    """Links, tags and headings of a note body; offsets are shifted by `offset`."""
    spans = excluded_spans(text)
    starts = [a for a, _ in spans]
    sites = [
        s
        for s in scan_wiki(text, 0, len(text))
        if not _overlaps(spans, starts, s.link.start, s.link.end)
    ]
    if "](" in text:
        for m in _MARKDOWN.finditer(text):
            if not _overlaps(spans, starts, m.start(), m.end()):
                site = _markdown_site(m)
                if site is not None:
                    sites.append(site)
    sites.sort(key=lambda s: (s.link.start, s.link.end))
    kept: list[LinkSite] = []
    for site in sites:  # a wiki-link and a markdown link never share characters
        if not kept or site.link.start >= kept[-1].link.end:
            kept.append(site)
    link_spans = [(s.link.start, s.link.end) for s in kept]
    link_starts = [a for a, _ in link_spans]
    tags = []
    for m in _TAG.finditer(text):
        tag = m.group(1)
        if _NOT_A_TAG.fullmatch(tag):  # Obsidian needs a non-numerical character
            continue
        if _overlaps(spans, starts, m.start(), m.end()):
            continue
        if not _overlaps(link_spans, link_starts, m.start(), m.end()):
            tags.append(tag)
    headings = []
    if "#" in text:
        for m in _HEADING.finditer(text):
            title = _heading_title(m.group())
            if title and not _overlaps(spans, starts, m.start(), m.start() + 1):
                headings.append(title)
    return BodyScan(tuple(_shift(s, offset) for s in kept), tuple(tags), tuple(headings))


def _heading_title(line: str) -> str:
    """The title of an ATX heading line as `^ {0,3}#{1,6}(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*\r?$`
    would cut it (an optional final CR, trailing blanks, then one closing run of `#`s after a
    blank are dropped), stripped; computed from the ends, so linear in the line."""
    u = line.lstrip(" ").lstrip("#")
    if u.endswith("\r"):
        u = u[:-1]
    v = u.rstrip(" \t").lstrip(" \t")
    s = v.rstrip("#")
    if len(s) < len(v) and s[-1:] in (" ", "\t"):
        v = s
    return v.strip()


def _shift(site: LinkSite, offset: int) -> LinkSite:
    if offset == 0:
        return site
    ln = site.link
    link = replace(ln, start=ln.start + offset, end=ln.end + offset)
    return replace(
        site,
        link=link,
        target_start=site.target_start + offset,
        target_end=site.target_end + offset,
    )
