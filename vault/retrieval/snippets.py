"""Snippets: the short passage of a note that best matches a query, and the note's date/speaker.

A search hit carries a snippet so an agent can judge it without reading the note. The choice
is deterministic and lexical (no model):
1. the body is made readable on one line per passage: wiki-links show their alias or target
   (`[[Auth Service|auth]]` -> "auth"), runs of white space collapse; heading lines are
   left out (they mostly repeat the title) unless the note has nothing else, and so is a
   block id ending a line (` ^idem`, which Obsidian does not show: `[[Note#^idem]]` names it);
   comments (`%% %%`, `<!-- -->`) are left out, as Obsidian's reading view hides them, and code
   and math are shown as written: a `[[x]]` in code is no link and a `# line` of a fenced
   block no heading (the spans of `markdown_scan.excluded_spans`, which the link scan skips);
2. it is cut into passages: sentences (ending in . ! ?) within lines;
3. each passage scores (distinct query content terms it contains, query content-term
   occurrences); the best score wins, the earliest passage on a tie (a total order);
   with no query term anywhere, the first passage (the note's lead) is used;
4. the window starts at the winning passage and takes following passages, then preceding
   ones, while it fits in `max_chars`; a passage longer than `max_chars` is cut around its
   first matching term at word boundaries. A cut side is marked with "…".
The same body and query always give the same snippet (no dict/set order, no randomness).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from datetime import date, datetime
from typing import Any

from ..cancel import checked
from ..notes.markdown_scan import excluded_spans
from ..notes.text import content_terms, tokenize
from ..storage.corpus import Corpus
from .hits import SearchResult

SNIPPET_CHARS = 200  # most characters of a snippet, "…" marks included
ELLIPSIS = "…"

_HEADING = re.compile(r"^\s{0,3}#{1,6}(?:\s+|$)")
# A sentence ends at . ! ? followed by white space or the end of the line; a dot inside a
# token ("1.2", "example.com", "diagram.png") does not end it.
_SENTENCE = re.compile(r".*?(?:[.!?]+(?=\s|$)|$)")
_SPACE = re.compile(r"\s+")
_BLOCK_ID = re.compile(r"(?:^|\s)\^[A-Za-z0-9-]+\s*$")


class _First:
    """The first `char` at or after a position of a text, for positions that only grow: one
    `str.find` answers every position up to what it found, so a pass finds each `char` once."""

    def __init__(self, text: str, char: str) -> None:
        self.text, self.char, self.at = text, char, -1

    def after(self, pos: int) -> int:
        if self.at < pos:
            self.at = self.text.find(self.char, pos)
            if self.at < 0:
                self.at = len(self.text)  # none after `pos`, so none after any later one
        return self.at


def _wiki_text(inner: str) -> str:
    """What `[[inner]]` shows: its alias (after `|`), else its target less any `#heading`."""
    cut = min((i for i in (inner.find("|"), inner.find("#")) if i >= 0), default=len(inner))
    target, rest = inner[:cut], inner[cut:]
    if rest.startswith("#"):
        bar = rest.find("|")
        rest = rest[bar:] if bar >= 0 else ""
    return (rest[1:] or target).strip()


def _links_shown(text: str, wiki: bool) -> str:
    """`text` with each wiki-link (`wiki`: `!?[[target#heading|alias]]`, shown as its alias or
    target) or markdown link (`![text](url)`, shown as its text) replaced, leftmost first and
    none overlapping: what `re.sub` with `!?\\[\\[([^\\]|#]*)(?:#[^\\]|]*)?(?:\\|([^\\]]*))?\\]\\]`
    or `!?\\[([^\\]]*)\\]\\([^)]*\\)` gives, in time linear in `text`. The regular expressions
    themselves tried every `[` and scanned from it to the next `]` or `)`, however far: a note
    of 2**18 characters of `[x](` took 0.7 s a snippet and one of 8 MiB about an hour, holding
    every search that listed it (session 42, SBX18). A link's end is the first `]` after its
    `[` (and for a markdown link the first `)` after its `](`), so each is found once."""
    close, paren = _First(text, "]"), _First(text, ")")
    opener = "[[" if wiki else "["
    out: list[str] = []
    done = start = 0
    while (start := text.find(opener, start)) >= 0:
        inner = start + len(opener)
        end = close.after(inner)
        if end >= len(text):
            break  # no `]` after this `[`, so after none of the later ones
        if wiki:
            shown, stop = text[end + 1:end + 2] == "]", end + 2
        else:
            shown, stop = text[end + 1:end + 2] == "(", paren.after(end + 2) + 1
            if shown and stop > len(text):
                break  # no `)` after this `](`, so after none of the later ones
        if not shown:
            start += 1
            continue
        bang = start - 1 if start > done and text[start - 1] == "!" else start
        label = _wiki_text(text[inner:end]) if wiki else text[inner:end]
        out += [text[done:bang], label]
        done = start = stop
    out.append(text[done:])
    return "".join(out)


def _links(text: str) -> str:
    return _links_shown(_links_shown(text, wiki=True), wiki=False)


def _shown(body: str) -> list[tuple[str, bool]]:
    """The body's lines as the reader sees them, each with whether it is a fenced code line:
    links shown as text outside code and math, comments dropped (their line breaks kept)."""
    parts: list[str] = []
    code: set[int] = set()  # numbers of the shown lines a fenced block covers
    line, pos = 0, 0  # line: the line breaks shown so far (a link may span one, and go)
    for a, b in excluded_spans(body):
        text, seg = _links(body[pos:a]), body[a:b]
        head = seg.lstrip(" \t>")
        line += text.count("\n")
        if head.startswith(("%%", "<!--")):
            seg = "\n" * seg.count("\n")
        elif head.startswith(("```", "~~~")):  # else inline code or math, as written too
            code.update(range(line, line + seg.count("\n") + 1))
        parts += [text, seg]
        line += seg.count("\n")
        pos = b
    parts.append(_links(body[pos:]))
    return [(sub, i in code) for i, row in enumerate("".join(parts).split("\n"))
            for sub in row.splitlines()]


def readable(body: str) -> list[str]:
    """The body's passages, in order: link markup shown as text, one sentence each."""
    passages: list[str] = []
    headings: list[str] = []
    for line, in_code in _shown(body):
        line = line if in_code else _BLOCK_ID.sub("", line)
        if not in_code and _HEADING.match(line):  # usually the title again: a last resort
            headings.append(_SPACE.sub(" ", _HEADING.sub("", line)).strip())
            continue
        for match in _SENTENCE.finditer(line):
            sentence = _SPACE.sub(" ", match.group(0)).strip()
            if sentence:
                passages.append(sentence)
    return passages or [h for h in headings if h]


def _score(passage: str, terms: frozenset[str]) -> tuple[int, int]:
    tokens = tokenize(passage)
    return len(terms.intersection(tokens)), sum(1 for t in tokens if t in terms)


def _cut(passage: str, terms: frozenset[str], max_chars: int) -> str:
    """`passage` cut to `max_chars` around its first matching term, at word boundaries."""
    lowered = passage.casefold()
    positions = [p for p in map(lowered.find, terms) if p >= 0]  # one find a term
    focus = min(positions) if positions else 0
    budget = max_chars - 2 * len(ELLIPSIS)
    start = max(0, min(focus - budget // 3, len(passage) - budget))
    if start > 0:
        space = passage.find(" ", start)
        start = space + 1 if 0 <= space < focus else start
    end = start + budget
    if end < len(passage):
        space = passage.rfind(" ", start, end)
        end = space if space > start else end
    head = ELLIPSIS if start > 0 else ""
    tail = ELLIPSIS if end < len(passage) else ""
    return head + passage[start:end].strip() + tail


def snippet(body: str, query: str, max_chars: int = SNIPPET_CHARS) -> str:
    """The passage of `body` that best matches `query`, at most `max_chars` characters."""
    passages = readable(body)
    if not passages:
        return ""
    terms = frozenset(content_terms(tokenize(query))) or frozenset(tokenize(query))
    scores = [_score(p, terms) for p in passages]
    best = max(range(len(passages)), key=lambda i: (scores[i], -i))
    if len(passages[best]) > max_chars:
        return _cut(passages[best], terms, max_chars)
    lo, hi = best, best + 1
    length = len(passages[best])
    while hi < len(passages) and length + 1 + len(passages[hi]) <= max_chars - len(ELLIPSIS):
        length += 1 + len(passages[hi])
        hi += 1
    while lo > 0 and length + 1 + len(passages[lo - 1]) <= max_chars - 2 * len(ELLIPSIS):
        length += 1 + len(passages[lo - 1])
        lo -= 1
    text = " ".join(passages[lo:hi])
    return (ELLIPSIS if lo > 0 else "") + text + (ELLIPSIS if hi < len(passages) else "")


def _plain(value: Any) -> str | None:
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, str | int | float) and not isinstance(value, bool):
        text = str(value).strip()
        return text[:100] or None
    return None


def note_facts(frontmatter: Mapping[str, Any]) -> dict[str, str]:
    """The note's "date" and "speaker" from its frontmatter, when present, as short strings."""
    out: dict[str, str] = {}
    for key in ("date", "speaker"):
        value = _plain(frontmatter.get(key))
        if value is not None:
            out[key] = value
    return out


def with_snippets(result: SearchResult, corpus: Corpus) -> SearchResult:
    """`result` with each hit's snippet (for the result's query) and date/speaker filled in.

    Stoppable (vault/cancel.py): each snippet looks for every query term in the note, so a
    query of ~1,500 terms over 3,000 hits (context(), budget_words=20000) took ~10 s here, and
    ran on after its cell's deadline without a checkpoint. Nothing is logged before it."""
    hits = []
    for hit in checked(result.hits):
        i = corpus.position(hit.id)
        hits.append(replace(hit, snippet=snippet(corpus.bodies[i], result.query),
                            facts=note_facts(corpus.frontmatter[i])))
    return replace(result, hits=tuple(hits))
