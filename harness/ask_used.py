"""Which notes of ask's answer set the answer used: the ones it cites, or whose content it uses.

A note is used by an answer when
- the answer cites it: a wiki-link `[[X]]` (or `[[X|shown]]`, `[[X#part]]`) whose target is the
  note's path, its path without ".md", its file name, its title or one of its aliases (case
  folded), or the answer names its path;
- or the answer repeats a run of RUN_WORDS consecutive words of the note (an extractive
  answer's sentence, a quoted phrase);
- or the answer holds at least MIN_TERMS of the note's distinctive terms: content terms of the
  answer that are not in the question and that occur in this note and in no other note of
  the answer set (a model's paraphrase keeps names, numbers and rare words; words several
  notes share, the topic's, say nothing of which one was used).
Nothing is used by an empty or not-found answer. Deterministic: the answer set's order.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import PurePosixPath
from typing import Any

from .ask_render import render_note
from .extractive import is_not_found, terms

RUN_WORDS = 5
MIN_TERMS = 2
# No `[` inside (as ask_evidence._LINK, whose comment says why: a scan per `[[` to the end).
WIKI_LINK = re.compile(r"\[\[([^\[\]|#]+)(?:[#|][^\[\]]*)?\]\]")
_WORD = re.compile(r"\w+")


def _names(note: str, record: Mapping[str, Any]) -> set[str]:
    path = PurePosixPath(note)
    bare = note[:-3] if note.lower().endswith(".md") else note
    names = {note, bare, path.name, path.name[:-3] if path.name.lower().endswith(".md")
             else path.name, str(record.get("title") or "")}
    fm = record.get("frontmatter")
    aliases = record.get("aliases") or (fm.get("aliases") if isinstance(fm, Mapping) else None)
    if isinstance(aliases, list):
        names |= {str(a) for a in aliases}
    elif isinstance(aliases, str):
        names.add(aliases)
    return {n.strip().casefold() for n in names if n and n.strip()}


def _runs(text: str) -> set[tuple[str, ...]]:
    words = _WORD.findall(text.casefold())
    return {tuple(words[i:i + RUN_WORDS]) for i in range(len(words) - RUN_WORDS + 1)}


def used_notes(answer: str, question: str,
               records: Sequence[tuple[str, Mapping[str, Any]]]) -> list[str]:
    """The notes of `records` (note, read() record; the answer set, best first) that
    `answer` used, in that order (module doc)."""
    if not answer.strip() or is_not_found(answer):
        return []
    cited = {m.group(1).strip().casefold() for m in WIKI_LINK.finditer(answer)}
    folded = answer.casefold()
    answer_runs = _runs(answer)
    asked = set(terms(question))
    wanted = set(terms(answer)) - asked
    texts = {note: render_note(record) for note, record in records}
    note_terms = {note: set(terms(text)) & wanted for note, text in texts.items()}
    spread = {t: sum(t in held for held in note_terms.values()) for t in wanted}
    used = []
    for note, record in records:
        cites = bool(_names(note, record) & cited) or note.casefold() in folded
        repeats = bool(answer_runs & _runs(texts[note]))
        rare = {t for t in note_terms[note] if spread[t] == 1}
        if cites or repeats or len(rare) >= MIN_TERMS:
            used.append(note)
    return used
