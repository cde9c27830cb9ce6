"""Split a note into chunks that fit the encoder window, along headings and paragraphs.

Contract: `chunk_note(title, body, count, max_tokens)` returns a non-empty tuple of strings
whose token counts (by `count`, special tokens included) are each <= `max_tokens`, unless a
single word is longer than the window (then the encoder truncates it). Order follows the text.

Method: the body is cut into sections at markdown headings (`#`..`######`), each section into
paragraphs at blank lines; consecutive paragraphs of one section are packed greedily while they
fit. A paragraph that alone is too long is split at sentence ends, then at word boundaries.
Every chunk is prefixed with the note title (and the section heading when there is one) so a
chunk carries its context. The title counts against the window.

What the encoder reads is prose: wiki-link markup is reduced to the words a reader sees
(`[[Target|shown]]` -> "shown", `[[Target#Heading]]` -> "Target", `![[x]]` -> "x"), and a
title that is only an identifier (no token of two or more letters, e.g. "D1-3", "2024-05-01")
is left out, since it carries no meaning for a sentence encoder and only dilutes short notes
(measured on LoCoMo in BENCHMARKS.md). Lexical signals still index the raw title and body.

Dialogue turns (a note whose frontmatter names a `speaker`, as `rmh ingest` and the benchmark
vaults write them) that fit one window are also embedded sentence by sentence, every sentence
prefixed with its speaker ("Alice: ..."), and score by their best unit. Finer retrieval units
raise dense recall (Chen et al. 2023, "Dense X Retrieval: What Retrieval Granularity Should We
Use?"), but only with their context attached: on LoCoMo, bare sentences scored recall@10 0.300
against 0.448 for whole turns, and speaker-prefixed sentences 0.571 (BENCHMARKS.md). A turn
whose frontmatter names no speaker but whose body starts with one ("user: ...", "Caroline:
...", a BEIR corpus of chat turns, a pasted message) is read as that speaker's turn
(`turn_speaker`): its aside ("By the way, I just canceled my Forbes subscription") gets a
vector of its own (issue 33's lme_turns: dense nDCG@10 0.339 -> 0.552, NOTES-QUAL4.md). A
first label that two later sentences answer with labels of their own ("Background: ...
Methods: ... Results: ...", a structured abstract) heads a section and names no speaker
(24 of SciFact's 5,183 abstracts, NOTES-QUAL5.md).
Other notes keep one unit per window, so ordinary vaults pay nothing extra.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from itertools import islice

TokenCounter = Callable[[str], int]
# Characters per token of budget above which text is split without being counted: no
# WordPiece token of the shipped vocabulary spans more (a word over 100 characters is one
# [UNK]), and ordinary prose runs 4-6 characters a token.
CHARS_PER_TOKEN = 32

_HEADING = re.compile(r"^(#{1,6})\s+(.*\S)\s*$")
_BLANK = re.compile(r"\n\s*\n")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
# No class admits "[" or a newline (as markdown_scan.WIKI), so a failed match scans at most to
# the next "[": linear on any input ("[[" * n was quadratic with `[^\]|#]*`).
_LINK = re.compile(r"!?\[\[([^\[\]\n|#]*)(?:#[^\[\]\n|]*)?(?:\|([^\[\]\n]*))?\]\]")
_WORD = re.compile(r"[^\W\d_]{2,}")
# A turn's speaker label: a word or name of up to 31 characters, a colon, a space ("user: ",
# "Caroline: "); a digit cannot start it ("1. Step: ...") nor "/" follow its colon (URLs).
_LABEL = re.compile(r"([^\W\d_][\w .'-]{0,30}?):[ \t]")
_LINE_LABEL = re.compile(r"^[^\W\d_][\w .'-]{0,30}?:[ \t]", re.MULTILINE)
# The same label at the start of a later sentence of the same line ("... blood. Methods: We
# ..."), group 1 its sentence's end mark; `_inline_labels` drops those after a list number
# ("1. Hiking: ...") or an initial ("by J.K. Rowling: ...").
_INLINE_LABEL = re.compile(r"([.!?])[ \t]+[^\W\d_][\w .'-]{0,30}?:[ \t]")


def plain_links(text: str) -> str:
    """Wiki-links replaced by their shown text (alias if given, else the target name)."""
    return _LINK.sub(lambda m: (m.group(2) or m.group(1)).strip(), text)


def informative_title(title: str) -> str:
    """`title` if it has a word of two or more letters, else "" (an identifier)."""
    return title if _WORD.search(title) else ""


def _sections(body: str) -> list[tuple[str, str]]:
    """(heading text or "", section body) pairs, in order; fenced code is not scanned."""
    out: list[tuple[str, list[str]]] = [("", [])]
    fenced = False
    for line in body.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        m = None if fenced else _HEADING.match(line)
        if m:
            out.append((m.group(2), []))
        else:
            out[-1][1].append(line)
    joined = [(h, "\n".join(lines).strip()) for h, lines in out]
    return [(h, text) for h, text in joined if h or text]


class _Count:
    """Token counts of the pieces chunking packs, each piece counted once.

    A packed candidate's count is estimated as the sum of its parts' counts minus the special
    tokens (`count("")`) they share; that is exact for a WordPiece counter, since the joining
    whitespace is never a token, and it makes packing linear in the text instead of
    re-tokenising the growing candidate for every word. Text longer than
    `CHARS_PER_TOKEN` characters per token of budget is taken not to fit without being counted,
    so no single call tokenises more than a window's worth of characters. Every emitted chunk is
    still counted in full (`exact`), so the contract holds for any counter.
    """

    def __init__(self, count: TokenCounter, budget: int) -> None:
        self.count, self.budget = count, budget
        self.base = count("")
        self.max_chars = budget * CHARS_PER_TOKEN
        self._words: dict[str, int] = {}

    def of(self, text: str) -> int:
        """Tokens of `text`, or budget + 1 (does not fit) for text over the character bound.
        Words are memoised (a long note repeats its words; each call crosses into Rust)."""
        if len(text) > self.max_chars:
            return self.budget + 1
        if len(text) > 32:
            return self.count(text)
        n = self._words.get(text)
        if n is None:
            n = self._words[text] = self.count(text)
        return n

    def joined(self, a: int, b: int, chars: int) -> int:
        """Estimated tokens of two pieces of `a` and `b` tokens joined by whitespace."""
        return self.budget + 1 if chars > self.max_chars else a + b - self.base

    def exact(self, piece: str) -> Iterator[str]:
        """`piece`, or its word-wise exact split when the estimate was off (a counter that is
        not additive over whitespace); a piece is at most `max_chars` long, so this is bounded."""
        if " " not in piece or self.count(piece) <= self.budget:
            yield piece
            return
        cur = ""
        for word in piece.split():
            cand = f"{cur} {word}".strip()
            if self.count(cand) <= self.budget:
                cur = cand
            else:
                if cur:
                    yield cur
                cur = word
        if cur:
            yield cur


def _split_long(text: str, c: _Count) -> Iterator[str]:
    """Split one over-long paragraph at sentence ends, then words, into pieces <= budget."""
    units = _SENTENCE.split(text)
    if len(units) == 1:
        units = text.split()
    cur, cur_n, emitted = "", 0, False
    for unit in units:
        n = c.of(unit)
        if len(units) > 1 and " " in unit and n > c.budget:
            if cur:
                yield from c.exact(cur)
                emitted = True
            cur, cur_n = "", 0
            for piece in _split_long(unit, c):
                emitted = True
                yield piece
            continue
        cand_n = c.joined(cur_n, n, len(cur) + 1 + len(unit)) if cur else n
        if cand_n <= c.budget:
            cur, cur_n = f"{cur} {unit}".strip(), cand_n
        else:
            if cur:
                yield from c.exact(cur)
                emitted = True
            cur, cur_n = unit, n
    if cur:
        yield from c.exact(cur)
    elif not emitted:
        yield text


def turn_speaker(body: str) -> str:
    """The speaker a dialogue turn written as plain text names: the label its body starts
    with ("user: I just canceled ..."), when no later line starts with one (one turn, not a
    pasted exchange) and no two later sentences do (a structured abstract's "Background: ...
    Methods: ... Results: ...": the first label is a section heading, not a voice); else "".
    For a note whose frontmatter names no `speaker`."""
    text = body.lstrip()
    m = _LABEL.match(text)
    if m is None or next(islice(_LINE_LABEL.finditer(text), 1, None), None) is not None:
        return ""  # no label, or a second labelled line (the scan stops there)
    if next(islice(_inline_labels(text), 1, None), None) is not None:
        return ""  # answered by two more labelled parts: headings (the scan stops there)
    return m.group(1).strip()


def _inline_labels(text: str) -> Iterator[int]:
    """Offsets of the labels that start a later sentence of `text` ("... blood. Methods: We"),
    not counting a label after a list number ("2. Camping: ...") or an initial ("by J.K.
    Rowling: ..."): one such label is an aside a speaker may make ("Exciting news: I ..."),
    two or more divide the text into labelled parts."""
    for m in _INLINE_LABEL.finditer(text):
        end = m.start(1)
        word = end
        while word > 0 and end - word < 3 and text[word - 1].isalnum():
            word -= 1
        token = text[word:end]
        start_of_word = word == 0 or not text[word - 1].isalnum()
        if start_of_word and ((len(token) <= 2 and token.isdigit())
                              or (len(token) == 1 and token.isalpha())):
            continue  # a list number or an initial ends no sentence
        yield m.start()


def speaker_sentences(title: str, body: str, speaker: str) -> list[str]:
    """One unit per sentence of a dialogue turn, each carrying its context: "title\nSpeaker:
    sentence" (the body's own leading "Speaker: " label is not repeated). Empty when the turn
    has fewer than two sentences (the whole turn is then the only unit)."""
    text = body.strip()
    if text[: len(speaker) + 1].casefold() == f"{speaker}:".casefold():
        text = text[len(speaker) + 1 :].strip()
    sentences = [s.strip() for s in _SENTENCE.split(text) if s.strip()]
    if len(sentences) < 2:
        return []
    return [f"{title}\n{speaker}: {s}".strip() for s in sentences]


def chunk_note(
    title: str,
    body: str,
    count: TokenCounter,
    max_tokens: int = 256,
    speaker: str = "",
    max_units: int = 0,
) -> tuple[str, ...]:
    """The chunks one note is embedded as (see the module docstring for the contract); with
    `max_units` > 0, only the first `max_units` of them (chunking stops there, so a huge note
    costs no more than its first units). Linear in the size of the note."""
    chunks = _chunks(title, body, count, max_tokens, speaker)
    if max_units > 0:
        return tuple(islice(chunks, max_units))
    return tuple(chunks)


def _chunks(
    title: str, body: str, count: TokenCounter, max_tokens: int, speaker: str
) -> Iterator[str]:
    title, body = informative_title(title), plain_links(body)
    whole = f"{title}\n{body}".strip()
    if _Count(count, max_tokens).of(whole) <= max_tokens:
        units = [whole or title]
        if speaker:
            units += [u for u in speaker_sentences(title, body, speaker) if u not in units]
        yield from dict.fromkeys(units)
        return
    produced = False
    for heading, text in _sections(body):
        prefix = f"{title}\n{heading}".strip() if heading else title
        c = _Count(count, max(8, max_tokens - count(prefix)))
        cur, cur_n = "", 0
        paragraphs = [p.strip() for p in _BLANK.split(text) if p.strip()] or [""]
        for para in paragraphs:
            n = c.of(para)
            cand_n = c.joined(cur_n, n, len(cur) + 2 + len(para)) if cur else n
            if cand_n <= c.budget:
                cur, cur_n = f"{cur}\n\n{para}".strip(), cand_n
                continue
            if cur:
                produced = True
                yield from (f"{prefix}\n{p}" for p in c.exact(cur))
                cur, cur_n = "", 0
            if n <= c.budget:
                cur, cur_n = para, n
            else:
                last = None  # pieces but the last are chunks; the last packs on
                for piece in _split_long(para, c):
                    if last is not None:
                        produced = True
                        yield f"{prefix}\n{last}"
                    last = piece
                cur = last or ""
                cur_n = c.of(cur)
        if cur or heading:
            produced = True
            for p in c.exact(cur) if cur else [""]:
                yield f"{prefix}\n{p}".strip()
    if not produced:
        yield whole
