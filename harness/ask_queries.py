"""Where the ask loop's next queries come from (harness/ask.py docstring): pass 1's
relevance-feedback round, the bridge-entity and uncovered-terms sub-queries of later passes,
and, with a model configured, its sub-questions.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from string import Template

import prompts
from vault import content_terms, tokenize

from .ask_evidence import body_of, bridge_names
from .ask_state import (
    FEEDBACK_FROM,
    FEEDBACK_TERMS,
    MAX_SUBQUESTIONS,
    NAMES_PER_NOTE,
    QUERIES_PER_PASS,
    SPREAD_FROM,
    UNCOVERED_WEIGHT,
    Gathered,
    Query,
)
from .llm import Broker, ExecBudget, SubRequest
from .llm_provider import TRUNCATED


def feedback_queries(g: Gathered, question: str, asked: set[str]) -> list[Query]:
    """Pass 1's feedback round (module docstring): one query per best pass-1 hit, the
    question plus the hit's FEEDBACK_TERMS rarest words that the question lacks and that some
    other note holds (a word only the hit holds cannot find another note)."""
    own = set(tokenize(question))
    parents = [p for p in g.direct[:FEEDBACK_FROM] if g.best[p].value >= g.p.floor]
    words = {p: list(dict.fromkeys(t for t in content_terms(tokenize(body_of(g.records[p])))
                                   if t not in own and not t.isdigit())) for p in parents}
    every = list(dict.fromkeys(w for p in parents for w in words[p]))
    df = dict(zip(every, g.library.document_frequency(every), strict=True)) if every else {}
    out: list[Query] = []
    for parent in parents:
        mine = words[parent]
        rare = sorted((df[w], i) for i, w in enumerate(mine) if df[w] > 1)[:FEEDBACK_TERMS]
        if not rare:
            continue
        text = f"{question} {' '.join(mine[i] for _, i in sorted(rare, key=lambda r: r[1]))}"
        if text.casefold() in asked:
            continue
        asked.add(text.casefold())
        out.append(Query(text, "feedback", parent, tuple(g.groups), g.best[parent].value))
    return out


def next_queries(g: Gathered, question: str, rose: Sequence[str], asked: set[str],
                  model: Sequence[str]) -> list[Query]:
    """The next pass's queries (module docstring), best first, unasked, at most QUERIES_PER_PASS."""
    known = {str(r.get("title") or "").casefold() for r in g.records.values()}
    scored: list[tuple[float, int, Query]] = []
    for i, text in enumerate(model):
        scored.append((2.0, i, Query(text, "model", None, tuple(g.groups), 1.0)))
    parents = sorted(dict.fromkeys(rose), key=lambda n: (-g.best[n].value, n))[:SPREAD_FROM]
    parents = parents if g.p.bridges else []
    for parent in parents:
        gap, value = g.gap(parent), g.best[parent].value
        if not gap:
            continue
        words = " ".join(grp.surface for grp in gap)
        for name in bridge_names(g.records[parent], question, known)[:NAMES_PER_NOTE]:
            pri = value * len(gap) / max(1, len(g.groups))
            scored.append((pri, len(scored), Query(f"{name} {words}", "bridge", parent, gap,
                                                    value, name)))
    missing = g.missing()
    if missing and g.p.uncovered:
        text = " ".join(grp.surface for grp in missing)
        pri = UNCOVERED_WEIGHT * len(missing) / max(1, len(g.groups))
        scored.append((pri, len(scored), Query(text, "uncovered", None, tuple(missing),
                                                UNCOVERED_WEIGHT)))
    out: list[Query] = []
    for _, _, q in sorted(scored, key=lambda t: (-t[0], t[1])):
        if q.text.casefold() not in asked and len(out) < QUERIES_PER_PASS:
            asked.add(q.text.casefold())
            out.append(q)
    return out


def model_subquestions(
    broker: Broker, budget: ExecBudget, question: str, answer: str, titles: Sequence[str]
) -> list[str]:
    """Sub-questions written by the model (prompts/ask_subquestions.md); [] for NONE."""
    listing = "\n".join(f"- {t}" for t in titles)
    user = Template(prompts.load("ask_subquestions")).substitute(
        question=question, answer=answer, titles=listing, limit=MAX_SUBQUESTIONS,
        fence=hashlib.sha256(listing.encode("utf-8")).hexdigest()[:16],
    )
    reply = broker.run(SubRequest(prompts.load("rlm_system"), user), budget)
    if reply.endswith(TRUNCATED):  # cut at max_tokens: its last line is a partial question
        reply = reply.removesuffix(TRUNCATED).rpartition("\n")[0]
    # A line of the prompt's own text (the question, with or without "Question: ", the
    # partial answer, an instruction, a fence) is an echo, which small local models write
    # back, not a query: searched, it finds what was already found (pass 2 of a NEWUSER11 run
    # searched "Partial answer so far: ..."). A title is still a query (a name to follow).
    echoed = {_line(ln).casefold() for ln in (*user.splitlines(), question,
                                               *answer.splitlines())
              if ln.strip() and not ln.startswith("- ")}
    queries = [_line(ln) for ln in reply.splitlines()]
    return [q for q in queries
            if q and q.upper() != "NONE" and q.casefold() not in echoed][:MAX_SUBQUESTIONS]


def _line(line: str) -> str:
    """A reply's (or the prompt's) line without its list marker and edge white space."""
    return re.sub(r"^\s*(?:[-*•]|\d+[.)])\s*", "", line).strip()
