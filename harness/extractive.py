"""The offline sub-reasoner: answer a question from a slice by extracting its best sentences.

With no LLM endpoint configured, `rlm_call` still returns a useful, deterministic value: the
sentences of the slice that best match the question, in the order the slice gives them, behind
the label `[extractive]` so no caller mistakes them for a model's answer. When no sentence
shares a content term with the question the answer is `[extractive] NOT FOUND`, the same
sentinel the LLM prompt asks a model to use.

Scoring is Okapi BM25 with each sentence of the slice as a document (Robertson & Zaragoza,
"The Probabilistic Relevance Framework: BM25 and Beyond", 2009):

    idf(t)  = ln((N - n_t + 0.5) / (n_t + 0.5) + 1)
    s(q, d) = sum_{t in q} idf(t) * f(t,d) * (k1 + 1) / (f(t,d) + k1 * (1 - b + b * |d| / avgdl))

with k1 = 1.2, b = 0.75, terms from the vault's tokenizer (`vault.tokenize`, stop words removed)
and a light suffix folding so "meetings" matches "meeting". An answer-type prior multiplies a
positive score by ANSWER_TYPE_BOOST when the sentence holds what the question asks for (a date
or number for when/how many, a capitalised name for who). Ties break by sentence position.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence

from vault import content_terms, tokenize

LABEL = "[extractive]"
NOT_FOUND = "NOT FOUND"
K1 = 1.2
B = 0.75
MAX_SENTENCES = 3
MIN_TOKENS = 3  # shorter lines (headings, labels) are context, never an answer
# Lines a rendered slice adds about a note (harness/ask.py render_note): context, not answers.
_METADATA = re.compile(r"^(?:source|date):\s", re.IGNORECASE)
RELATIVE_FLOOR = 0.3  # keep a sentence only if it scores >= 30% of the best one
ANSWER_TYPE_BOOST = 1.25

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])")
_LINE_MARKUP = re.compile(r"^\s*(?:[#>]+|[-*+]|\d+[.)])\s+")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s")
_BLOCK_ID = re.compile(r"(?:^|\s)\^[A-Za-z0-9-]+\s*$")  # Obsidian's ` ^id`: not shown, no words
_NUMBER = re.compile(r"\d")
_MONTHS = frozenset(
    (
        "january", "february", "march", "april", "may", "june", "july", "august",
        "september", "october", "november", "december", "monday", "tuesday", "wednesday",
        "thursday", "friday", "saturday", "sunday", "yesterday", "today", "tomorrow",
    )
)
_NAME = re.compile(r"(?<!^)(?<![.!?]\s)\b[A-Z][a-z]+")


def _words(text: str) -> list[str]:
    """Case-folded word runs of `text`, stop words kept (answer-type and length checks)."""
    return _WORD.findall(text.casefold())


def _fold(term: str) -> str:
    """Fold common English suffixes so inflections meet (deliberately crude, deterministic).

    A final "e" goes too, so "cause", "caused" and "causes" (or "restore", "restores") meet.
    """
    for suffix in ("ing", "ies", "es", "ed", "s"):
        if len(term) > len(suffix) + 3 and term.endswith(suffix):
            term = term[: -len(suffix)] + ("y" if suffix == "ies" else "")
            break
    return term[:-1] if len(term) > 4 and term.endswith("e") else term


def terms(text: str) -> list[str]:
    """Content terms of `text`: tokens minus stop words, suffix-folded, in order."""
    return [_fold(t) for t in content_terms(tokenize(text))]


def split_sentences(text: str) -> list[str]:
    """Sentences of `text`: each non-empty line, split after . ! ? before a capital or digit.

    Markdown line markup (headings, bullets, quotes, numbered items) is stripped.
    """
    return [sentence for sentence, _ in _sentences(text)]


def _sentences(text: str) -> list[tuple[str, bool]]:
    """(sentence, from a heading line) for each sentence of `text`, in order.

    A line that continues a sentence wrapped in its paragraph (no markup of its own, a lower-case
    start, under a non-blank line that is no heading and ends no sentence) joins it, as Markdown
    renders a hard-wrapped paragraph; a line per item or per speaker stays its own.
    """
    lines: list[tuple[str, bool]] = []
    joinable = False
    for raw in text.splitlines():
        raw = _BLOCK_ID.sub("", raw)
        heading = bool(_HEADING.match(raw))
        line = _LINE_MARKUP.sub("", raw).strip()
        if not line:
            joinable = False
            continue
        if (joinable and not heading and line == raw.strip() and line[:1].islower()
                and not lines[-1][0].endswith((".", "!", "?", ":", ";"))):
            lines[-1] = (lines[-1][0] + " " + line, False)
        else:
            lines.append((line, heading))
        joinable = not heading and not line.startswith("```")
    out: list[tuple[str, bool]] = []
    for line, heading in lines:
        out.extend((part.strip(), heading) for part in _SENTENCE_END.split(line) if part.strip())
    return out


def bm25_scores(docs: Sequence[Sequence[str]], query: Iterable[str]) -> list[float]:
    """BM25 score of each tokenised doc for the query terms (formula in the module doc)."""
    n = len(docs)
    if n == 0:
        return []
    avgdl = sum(len(d) for d in docs) / n or 1.0
    df: Counter[str] = Counter()
    for d in docs:
        df.update(set(d))
    q_terms = list(dict.fromkeys(query))  # dedupe, keep first-appearance order
    scores: list[float] = []
    for d in docs:
        tf = Counter(d)
        norm = K1 * (1.0 - B + B * len(d) / avgdl)
        s = 0.0
        for t in q_terms:
            f = tf.get(t, 0)
            if f:
                idf = math.log((n - df[t] + 0.5) / (df[t] + 0.5) + 1.0)
                s += idf * f * (K1 + 1.0) / (f + norm)
        scores.append(s)
    return scores


def _answer_type_ok(question: str, sentence: str) -> bool:
    q = question.casefold()
    if q.startswith("when") or "what date" in q or "what year" in q or "how long" in q:
        low = set(_words(sentence))
        return bool(_NUMBER.search(sentence)) or bool(low & _MONTHS)
    if "how many" in q or "how much" in q:
        return bool(_NUMBER.search(sentence))
    if q.startswith("who") or "whom" in q:
        return bool(_NAME.search(sentence))
    return False


def rank_sentences(slice_text: str, question: str) -> list[tuple[int, float, str]]:
    """(position, score, sentence) for every sentence with a positive score, best first.

    A heading (a note's title, which a rendered slice repeats above a body that often opens
    with the same `# Title`) names a topic and answers nothing: headings rank only when no
    body sentence scores. A sentence the slice repeats ranks once, at its first position.
    """
    pairs = _sentences(slice_text)
    scores = bm25_scores([terms(s) for s, _ in pairs], terms(question))
    body: list[tuple[int, float, str]] = []
    headings: list[tuple[int, float, str]] = []
    seen: set[str] = set()
    for i, (score, (sentence, heading)) in enumerate(zip(scores, pairs, strict=True)):
        if score <= 0.0 or len(_words(sentence)) < MIN_TOKENS:
            continue
        if _METADATA.match(sentence):
            continue
        key = " ".join(_words(sentence))
        if key in seen:
            continue
        seen.add(key)
        if _answer_type_ok(question, sentence):
            score *= ANSWER_TYPE_BOOST
        (headings if heading else body).append((i, score, sentence))
    ranked = body or headings
    ranked.sort(key=lambda r: (-r[1], r[0]))
    return ranked


def extract_answer(slice_text: str, question: str, *, max_words: int | None = None) -> str:
    """The labelled extractive answer: up to MAX_SENTENCES best sentences, in slice order.

    Deterministic: the same slice and question always give the same string. With `max_words`
    the answer body is cut to that many words (an ellipsis marks the cut).
    """
    ranked = rank_sentences(slice_text, question)
    if not ranked:
        return f"{LABEL} {NOT_FOUND}"
    best = ranked[0][1]
    kept = [r for r in ranked[:MAX_SENTENCES] if r[1] >= RELATIVE_FLOOR * best]
    kept.sort(key=lambda r: r[0])
    body = " ".join(r[2] if r[2][-1] in ".!?…" else r[2] + "." for r in kept)
    if max_words is not None:
        words = body.split()
        if len(words) > max_words:
            body = " ".join(words[: max(1, max_words)]) + " …"
    return f"{LABEL} {body}"


def is_not_found(answer: str) -> bool:
    """True when an answer (extractive or model) is the NOT FOUND sentinel."""
    text = answer.strip()
    if text.startswith(LABEL):
        text = text[len(LABEL) :].strip()
    return text.rstrip(".").upper() == NOT_FOUND
