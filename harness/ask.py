"""The recursive query loop behind `ask(question, budget=10)`: passes that earn their keep.

Value. Pass 1 searches the question, POOL * k hits deep (its hits are the candidate pool):
value(d) = score(d) / score(top hit). A note found from a parent note p, through p's links or
a sub-query built from p's bridge entities, is worth
    value(d) = DECAY * value(p) * gain(d | gap(p)) * score(d) / score(top hit of that query),
gap(p) = the question's term groups p does not cover (harness/ask_evidence.py; the link
case has no search score and takes 1 for the last factor). A note reached several ways keeps
its best such value and the pass and query that gave it; feedback evidence adds to it.

Relevance feedback (pass 1). For each of the FEEDBACK_FROM best pass-1 hits p, the query
"<question> <the FEEDBACK_TERMS words of p rarest in the vault>" (words the question lacks,
held by at least one other note; rarity = the index's document frequency): pseudo-relevance
feedback (Rocchio 1971; RM3, Abdul-Jaleel et al. 2004) per feedback note, so that each query
follows one aspect of what was found. Each of its k hits adds
    FEEDBACK_WEIGHT * value(p) * score(d) / score(top hit of that query)
to the note's value: evidence adds up (CombSUM, Fox & Shaw 1994), so a note the question
ranked deep that several aspects find again overtakes one only the question found.

One pass runs its queries (pass 1: the question, then its feedback queries), each a search
followed by one hop along the links of its best hits (SPREAD_FROM, up to MAX_LINKED
neighbours read each; not from feedback queries). Sub-queries for the next pass come from
what was found, deterministically, best parent first: for each of the pass's new relevant
notes p with a gap, "<bridge entity> <gap words>" for up to NAMES_PER_NOTE bridge entities of
p; then the groups no gathered note covers, as one query (weight UNCOVERED_WEIGHT in place of
value(p)). With a model configured, prompts/ask_subquestions.md may add up to
MAX_SUBQUESTIONS (run first; one extra sub-call). At most QUERIES_PER_PASS run per pass; a
query asked before is not asked again.

Stop rule. A pass whose queries add (or raise) no note to value >= FLOOR ends the loop
("no new notes"), before its answer call: nothing new was learned. After each other pass the
ORIGINAL question is answered over the answer set with one sub-call, and the pass is resolved
when every term group is covered by one of the RESOLVE_TOP most valuable notes (with a model,
also the answer is not NOT FOUND) ("resolved"). Else: no query left, MAX_PASSES passes, or the
exec's rlm budget spent.

Answer set: the search's head, its first budget // KEEP_PER hits in its order, leads (a
single search's best hits are not traded for recursion); the other slots go to the most
valuable remaining notes, pass-1 hits or notes found by recursion with value >= FLOOR, by
value (ties: discovery order), each with its pass and query, so it compares with
search(question, k=budget) at equal size. Without a broker (the benchmarks) no sub-call is
made and the notes are the same as offline. Trace entries have one fixed schema
(`TraceEntry`); a pass's answer, resolution and sub-questions sit on its last entry.
Constants: BENCHMARKS.md says which were set on which data (bench/knowledge.py seed 15 and
the first five LoCoMo conversations).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypedDict

from .ask_evidence import gain, term_groups
from .ask_queries import feedback_queries, model_subquestions, next_queries
from .ask_render import render_note, render_notes
from .ask_state import (
    FEEDBACK_FROM,
    FEEDBACK_TERMS,
    FEEDBACK_WEIGHT,
    FLOOR,
    KEEP_PER,
    MAX_LINKED,
    POOL,
    RESOLVE_TOP,
    SPREAD_FROM,
    Found,
    Gathered,
    LoopParams,
    Query,
    Searchable,
)
from .ask_used import used_notes
from .extractive import is_not_found
from .llm import Broker, ExecBudget, RlmBudgetExceeded, RlmError

__all__ = [
    "FEEDBACK_FROM",
    "FEEDBACK_TERMS",
    "FEEDBACK_WEIGHT",
    "FLOOR",
    "KEEP_PER",
    "POOL",
    "RESOLVE_TOP",
    "AskResult",
    "Found",
    "LoopParams",
    "Searchable",
    "TraceEntry",
    "ask",
    "render_note",
    "render_notes",
]


TraceEntry = TypedDict("TraceEntry", {
    "pass": int, "query": str, "origin": str, "parent": str | None, "hits": list[str],
    "new_notes": list[str], "via_links": list[str], "answer": str | None,
    "resolved": bool | None, "missing_terms": list[str], "sub_questions": list[str],
    "relevant": bool,
})
# The answer when the question's own search finds nothing relevant (retrieval/relevance.py):
# no notes are gathered and no sub-call is made.
NOTHING_RELEVANT = "Nothing in memory is relevant to this question."


@dataclass(frozen=True)
class AskResult:
    """The answer, the answer set (best first), the per-search trace and why it stopped."""

    question: str
    answer: str
    resolved: bool
    found: tuple[Found, ...]
    trace: tuple[TraceEntry, ...]
    stop: str
    usage: Mapping[str, Any] = field(default_factory=dict)
    used: tuple[str, ...] = ()  # the answer set's notes the answer used (harness.ask_used)

    @property
    def notes(self) -> tuple[str, ...]:
        return tuple(f.note for f in self.found)

    def to_json(self) -> dict[str, Any]:
        return {"question": self.question, "answer": self.answer, "resolved": self.resolved,
                "notes": list(self.notes), "found": [f.to_json() for f in self.found],
                "trace": [dict(t) for t in self.trace], "stop": self.stop,
                "usage": dict(self.usage), "used": list(self.used)}


def _names(record: Mapping[str, Any], entity: str) -> bool:
    """Whether the note is the entity's own note: its title or an alias is the entity."""
    names = [str(record.get("title") or ""), *(str(a) for a in record.get("aliases") or [])]
    return entity.casefold() in {n.casefold() for n in names}


def _entry(pass_no: int, q: Query) -> TraceEntry:
    return {"pass": pass_no, "query": q.text, "origin": q.origin, "parent": q.parent,
            "hits": [], "new_notes": [], "via_links": [], "answer": None, "resolved": None,
            "missing_terms": [], "sub_questions": [], "relevant": True}


def _run_query(g: Gathered, q: Query, pass_no: int, k: int, entry: TraceEntry) -> list[str]:
    """Search one query, value its hits, spread from its best ones; the notes that rose."""
    result = g.library.search(q.text, k)
    if q.origin == "question" and result.get("relevant") is False:
        entry["relevant"] = False  # nothing about the question: gather nothing
        return []
    hits = [(str(h["note"]), float(h.get("score") or 0.0)) for h in result["hits"]]
    top = max((s for _, s in hits), default=0.0)
    rose: list[str] = []
    for note, score in hits:
        entry["hits"].append(note)
        if note not in g.best:
            entry["new_notes"].append(note)
        if q.origin == "question" and note not in g.direct:
            g.direct.append(note)
        rel = score / top if top > 0 else 0.0
        have = g.read(note)
        if q.origin == "feedback":
            if g.add(note, FEEDBACK_WEIGHT * q.weight * rel, pass_no, q.text):
                rose.append(note)
            continue
        value = rel if q.origin == "question" else (
            g.p.decay * q.weight * gain(q.gap, have) * rel)
        if q.origin == "bridge" and not _names(g.records[note], q.entity):
            value = 0.0  # a bridge query finds the note of its entity, not its namesakes
        if g.offer(note, value, pass_no, q.text):
            rose.append(note)
    parents = [n for n, _ in hits if n in g.best and g.best[n].value >= g.p.floor
               and n not in g.spread][:SPREAD_FROM] if g.p.links and q.origin != "feedback" else []
    for parent in parents:
        g.spread.add(parent)
        gap, weight = g.gap(parent), g.best[parent].value
        if not gap:
            continue
        for other in g.library.neighbors(parent, 1)[:MAX_LINKED]:
            other = str(other)
            value = g.p.decay * weight * gain(gap, g.read(other))
            if value <= 0:
                continue
            if other not in g.best and other not in entry["via_links"]:
                entry["via_links"].append(other)
            if g.offer(other, value, pass_no, f"link from {parent}"):
                rose.append(other)
    return rose


def ask(question: str, library: Searchable, broker: Broker | None = None,
        calls: ExecBudget | None = None, *, budget: int = 10, k: int | None = None,
        params: LoopParams | None = None) -> AskResult:
    """Run the loop (module doc): at most `budget` notes; `k` hits per search (default budget).

    `calls` is the exec's rlm budget (one answer sub-call per pass, one more for model-made
    sub-questions); with `broker` None the loop only retrieves (answer "").
    """
    if budget < 1:
        raise ValueError("budget must be >= 1")
    depth = budget if k is None else k
    p = params or LoopParams()
    g = Gathered(library, term_groups(question), p)
    queue = [Query(question, "question", None, tuple(g.groups), 1.0)]
    asked = {question.casefold()}
    trace: list[TraceEntry] = []
    answer, resolved, stop = "", False, "max passes"
    model = broker is not None and broker.provider.name != "extractive"
    for pass_no in range(1, p.max_passes + 1):
        if not queue:
            stop = "no sub-questions left"
            break
        rose: list[str] = []
        for q in queue:
            trace.append(_entry(pass_no, q))
            rose += _run_query(g, q, pass_no, depth * p.pool if q.origin == "question" else depth,
                               trace[-1])
        if pass_no == 1 and p.feedback:
            for q in feedback_queries(g, question, asked):
                trace.append(_entry(pass_no, q))
                rose += _run_query(g, q, pass_no, depth, trace[-1])
        last = trace[-1]
        if not trace[0]["relevant"]:
            answer, stop = (NOTHING_RELEVANT if broker is not None else ""), "nothing relevant"
            break
        if not rose:
            stop = "no new notes"
            break
        top = g.answer_set(budget)
        missing = g.missing()
        last["missing_terms"] = [grp.surface for grp in missing]
        if broker is not None and calls is not None:
            slice_text = render_notes([g.records[f.note] for f in top],
                                      broker.limits.slice_max_chars)
            try:
                answer = broker.call(slice_text, question, calls)
            except RlmBudgetExceeded:
                stop = "budget spent"
                break
            last["answer"] = answer
        resolved = g.resolved() and not (model and is_not_found(answer))
        last["resolved"] = resolved
        if resolved:
            stop = "resolved"
            break
        if pass_no == p.max_passes:
            break
        subs: list[str] = []
        if model and broker is not None and calls is not None:
            titles = [str(g.records[f.note].get("title", "")) for f in top]
            try:
                subs = model_subquestions(broker, calls, question, answer, titles)
            except RlmBudgetExceeded:
                stop = "budget spent"
                break
            except RlmError:
                subs = []
        queue = next_queries(g, question, rose, asked, subs)
        last["sub_questions"] = [q.text for q in queue]
    usage = calls.report() if calls is not None else {}
    found = tuple(g.answer_set(budget))
    used = used_notes(answer, question, [(f.note, g.records[f.note]) for f in found])
    return AskResult(question=question, answer=answer, resolved=resolved, found=found,
                     trace=tuple(trace), stop=stop, usage=usage, used=tuple(used))
