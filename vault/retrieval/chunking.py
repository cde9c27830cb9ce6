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
against 0.448 for whole turns, and speaker-prefixed sentences 0.571 (BENCHMARKS.md). Notes
without a speaker keep one unit per window, so ordinary vaults pay nothing extra.
"""

from __future__ import annotations

import re
from collections.abc import Callable

TokenCounter = Callable[[str], int]

_HEADING = re.compile(r"^(#{1,6})\s+(.*\S)\s*$")
_BLANK = re.compile(r"\n\s*\n")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_LINK = re.compile(r"!?\[\[([^\]|#]*)(?:#[^\]|]*)?(?:\|([^\]]*))?\]\]")
_WORD = re.compile(r"[^\W\d_]{2,}")


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


def _split_long(text: str, budget: int, count: TokenCounter) -> list[str]:
    """Split one over-long paragraph at sentence ends, then words, into pieces <= budget."""
    units = _SENTENCE.split(text)
    if len(units) == 1:
        units = text.split()
    pieces: list[str] = []
    cur = ""
    for unit in units:
        if len(units) > 1 and " " in unit and count(unit) > budget:
            if cur:
                pieces.append(cur)
            cur = ""
            pieces.extend(_split_long(unit, budget, count))
            continue
        cand = f"{cur} {unit}".strip()
        if count(cand) <= budget:
            cur = cand
        else:
            if cur:
                pieces.append(cur)
            cur = unit
    if cur:
        pieces.append(cur)
    return pieces or [text]


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
    title: str, body: str, count: TokenCounter, max_tokens: int = 256, speaker: str = ""
) -> tuple[str, ...]:
    """The chunks one note is embedded as (see the module docstring for the contract)."""
    title, body = informative_title(title), plain_links(body)
    whole = f"{title}\n{body}".strip()
    if count(whole) <= max_tokens:
        units = [whole or title]
        if speaker:
            units += [u for u in speaker_sentences(title, body, speaker) if u not in units]
        return tuple(dict.fromkeys(units))
    chunks: list[str] = []
    for heading, text in _sections(body):
        prefix = f"{title}\n{heading}".strip() if heading else title
        budget = max(8, max_tokens - count(prefix))
        cur = ""
        paragraphs = [p.strip() for p in _BLANK.split(text) if p.strip()] or [""]
        for para in paragraphs:
            cand = f"{cur}\n\n{para}".strip()
            if count(cand) <= budget:
                cur = cand
                continue
            if cur:
                chunks.append(f"{prefix}\n{cur}")
                cur = ""
            if count(para) <= budget:
                cur = para
            else:
                pieces = _split_long(para, budget, count)
                chunks.extend(f"{prefix}\n{p}" for p in pieces[:-1])
                cur = pieces[-1]
        if cur or heading:
            chunks.append(f"{prefix}\n{cur}".strip())
    return tuple(chunks) or (whole,)
