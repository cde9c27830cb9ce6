"""The prompt hook's fast path: memory for a prompt from the hooks' index, no vault opened.

The same rule as `prompt_memory` over `build_context` (harness/hooks_memory.py), on the
hooks' FTS5 index (harness/hooks_index.py): the `k` best notes by BM25 for the prompt's
content words; a note is shown only when it covers at least `min_share` of the prompt's
content terms weighted by their idf (`vault.term_coverage`, as the search judges relevance:
search tokens less stop words and date words, by stem, so "can you tell me what you think"
connects nothing, and a term memory never uses weighs most: "over the moon" covers little of
"How many moons does Jupiter have?"; the floor under which nothing is relevant), never a
turn of the current session's own conversation; a recalled conversation turn brings the turn
before it (in dialogue an answer often depends on the line before, NDM step 6). A prompt
that asks for a time and nothing else is answered by the notes dated in it instead. Lines go
best covered first (the index's BM25 order breaks ties; the turn before just ahead of its
turn), each naming its note and date, cut to the word budget from the end; a note's text is
its passage with the most prompt terms.
"""

from __future__ import annotations

import re
from collections.abc import Set as AbstractSet
from datetime import UTC, date, datetime
from pathlib import Path

from vault import asked_alone, content_stems, term_coverage, topic_terms

from .hooks import cap_words, fence
from .hooks_index import Reader, Row, reading, spaced, used_lately

PASSAGE_WORDS = 50
MAX_TERMS = 48  # a prompt's first distinct content terms the floor weighs (a lookup each)
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


def words_of(text: str) -> list[str]:
    """The words of `text` (casefolded, in order; "_" parts words, as in `vault.tokenize`
    and the index's unicode61; a spaceless script's run as its bigrams, `hooks_index.spaced`)
    that hold a content term: the FTS query."""
    return [t for w in re.findall(r"[^\W_]+", text.casefold()) for t in spaced(w)
            if content_stems(t)]


def passage(body: str, wanted: AbstractSet[str], words: int = PASSAGE_WORDS) -> str:
    """The run of sentences, from the one holding most of `wanted`, within `words` words."""
    sentences = [s.strip() for s in _SENTENCE.split(body) if s.strip()]
    if not sentences:
        return ""
    best = max(range(len(sentences)),
               key=lambda i: (len(wanted & content_stems(sentences[i])), -i))
    out: list[str] = []
    for s in sentences[best:]:
        if len(out) + len(s.split()) > words:
            if not out:
                out = s.split()[:words]
            break
        out += s.split()
    return ("… " if best else "") + " ".join(out)


def _line(row: Row, wanted: AbstractSet[str]) -> str:
    if row.tier == "L0":
        return f"- {row.path}: [{row.date}] {row.speaker}: {' '.join(row.body.split())}"
    if row.tier == "episodic":  # goal, tried, outcome, lesson: the whole summary
        return f"- {row.path} [{row.date}]: {' '.join(row.body.split())}"
    return f"- {row.path} [{row.date}]: {passage(row.body, wanted)}"


def recall(root: Path, prompt: str, words: int, *, k: int, min_share: float,
           own_conversation: str = "", today: date | None = None) -> tuple[str, list[str]]:
    """(fenced memory text, the notes shown) for `prompt`; ("", []) when nothing is relevant.
    A prompt that asks for a time and nothing else (`vault.asked_alone`: "what did we work on
    yesterday?") is answered by the notes dated in that time, read against `today` (default:
    the clock's UTC day), oldest first."""
    wanted, raw = content_stems(prompt), words_of(prompt)
    day = datetime.now(UTC).date() if today is None else today
    spans = [(r.start.isoformat(), r.end.isoformat()) for r in asked_alone(prompt, day)]
    if not spans and (not wanted or not raw):
        return "", []
    terms = topic_terms(prompt)[:MAX_TERMS]
    chosen: list[Row] = []
    with reading(root) as index:  # one connection for the whole prompt
        if index is not None:
            chosen = _chosen(index, spans, raw, terms, k, min_share, own_conversation)
    lines = cap_words([_line(r, wanted) for r in chosen], words)
    if not lines:
        return "", []
    return fence(lines, "Memory for this prompt"), [r.path for r in chosen[: len(lines)]]


def _chosen(index: Reader, spans: list[tuple[str, str]], raw: list[str], terms: list[str],
            k: int, min_share: float, own_conversation: str) -> list[Row]:
    """`recall`'s notes in the order shown, each recalled turn after the turn before it."""
    n, dfs = index.frequencies(terms) if not spans else (0, [])
    chosen: list[Row] = []
    seen: set[str] = set()
    rows = index.dated(spans, k) if spans else index.search(raw, k)
    if not spans:  # the floor, then the best covered first (ties: the index's BM25 order)
        covered = [(term_coverage(terms, dfs, n, [f"{r.title} {r.described} {r.body}"]), i)
                   for i, r in enumerate(rows)]
        rows = [rows[i] for c, i in sorted(covered, key=lambda ci: (-ci[0], ci[1]))
                if c >= min_share]
    for row in rows:
        if own_conversation and row.conversation == own_conversation:
            continue
        if row.tier == "L0" and row.previous and row.previous not in seen:
            before = index.by_path(row.previous)
            if before is not None:
                chosen.append(before)
                seen.add(before.path)
        if row.path not in seen:
            chosen.append(row)
            seen.add(row.path)
    return chosen


USED_SHOWN = 5
RELATED_SHOWN = 5


def brief(root: Path, cwd: str, words: int) -> str:
    """The session-start brief: the notes used lately (cited or read in earlier hook
    sessions, most recent first) and the notes most related to the working folder's name
    (the hooks' index; each must hold one of its words); "" when there is neither."""
    lines: list[str] = []
    folder = Path(cwd).name if cwd else ""
    wanted = content_stems(folder.replace("-", " ").replace("_", " "))
    raw = words_of(folder)
    used: list[str] = []
    related: list[Row] = []
    with reading(root) as index:  # one connection for the whole brief
        if index is not None:
            used = [n for n in used_lately(root) if index.by_path(n) is not None][:USED_SHOWN]
            related = [r for r in index.search(raw, RELATED_SHOWN * 2)
                       if wanted & content_stems(f"{r.path} {r.title} {r.described} {r.body}")
                       ][:RELATED_SHOWN]
    if used:
        lines.append("Used lately: " + "; ".join(used))
    if related:
        lines.append(f"Related to {folder}:")
        lines += [_line(r, wanted) for r in related]
    lines = cap_words(lines, words)
    return fence(lines, "Memory brief") if lines else ""
