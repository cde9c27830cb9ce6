"""Math in Obsidian markdown, where nothing is a link, tag or heading (`markdown_scan`'s
`excluded_spans` asks here at each `$` it meets, left to right): `$$...$$` (display, to the
next unescaped `$$` in its paragraph, not into a fenced block; a `$$` not closed before the
next blank line is a dollar, also at a line's start: blocks are read before inline math, and
Obsidian's reading view renders each section between blank lines on its own, so a formula
with a blank line inside does not render there (obsidian-latex-suite issues #358, #117: "an
Obsidian bug", live preview and reading view disagree). So a price tier or a money legend
("$$ = mid-range" on its own line) no longer hides the headings, links and tags of the
paragraphs down to the next `$$`) and `$...$`
(inline, on one line: Pandoc's rule, which keeps "$5 and $10" text: the opening `$` is
followed by a non-space, the closing one preceded by a non-space and not followed by a
digit). `\\$` is a dollar, and so is a `$` inside a wiki-link: `[[$AAPL]] and [[$TSLA]]` are
two links (each starts before its `$`, as a parser reading left to right finds them), not a
formula `$AAPL]] and [[$` hiding both.
"""

from __future__ import annotations

import re

_DOLLAR = re.compile(r"\$")


class MathScan:
    """The math of one text, asked about its `$`s left to right (`s` grows from call to
    call): up to where no `$` (`$$`) opens math (a search that failed, `_inline_end`); the
    first wiki-link and blank line not before the last `$` asked about, read on lazily."""

    def __init__(self, text: str, wiki: re.Pattern[str], blank: re.Pattern[str]) -> None:
        self._text = text
        self._off = [0, 0]
        self._links = wiki.finditer(text) if "[[" in text else iter(())
        self._link = (-1, -1)
        self._blanks = blank.finditer(text)
        self._blank_at = -1

    def span_end(self, s: int, tok: str, limit: int) -> tuple[int, int]:
        """(the end of the math that `tok` ("$" or "$$") at `s` opens, else -1: a literal
        dollar; where the scan goes on), the math ending before `limit` (a fence's start)."""
        text, k = self._text, len(tok) - 1
        if s < self._off[k] or self._in_link(s):
            return -1, s + len(tok)
        if s > 0 and text[s - 1] == "\\":
            return -1, s + 1
        if tok == "$":
            stop = text.find("\n", s, limit) % (limit + 1)  # none: -1 % (limit + 1)
            end = _inline_end(text, s, stop)
        else:
            stop, end = self._paragraph_end(s, limit), s + 2
            while (end := text.find("$$", end, stop) + 2) > 1 and text[end - 3] == "\\":
                pass
            end = end if end > 1 else -1
        if end >= 0:
            return end, end
        if tok == "$$" or not text[s + 1:s + 2].isspace():
            self._off[k] = stop  # no `$`/`$$` before `stop` closes any opening: all literal
        return -1, s + len(tok)

    def _paragraph_end(self, s: int, limit: int) -> int:
        """Where the next blank line from `s` starts, else `limit`."""
        while self._blank_at < s:
            b = next(self._blanks, None)
            self._blank_at = len(self._text) if b is None else b.start()
        return min(limit, self._blank_at)

    def _in_link(self, s: int) -> bool:
        while self._link[1] <= s:
            w = next(self._links, None)
            self._link = (len(self._text) + 1,) * 2 if w is None else w.span()
        return self._link[0] <= s


def _inline_end(text: str, start: int, stop: int) -> int:
    """End of the inline math `$...$` opened at `start` (its `$` not followed by a space),
    closed before `stop` (its line's end) by a `$` after a non-space and not before a digit
    or `$`; else -1.
    Whether a `$` closes depends on that `$` alone, so one search that fails holds for every
    opening up to `stop` (the caller skips them: linear in a paragraph of prices)."""
    if start + 1 >= len(text) or text[start + 1].isspace():
        return -1
    for m in _DOLLAR.finditer(text, start + 2, stop):
        c = m.start()
        after = text[c + 1:c + 2]
        if not text[c - 1].isspace() and text[c - 1] != "\\" and not after.isdigit() \
                and after != "$":
            return c + 1
    return -1
