"""The last learned step (learned_stages.py): a note whose lift is wholly about the query is
placed just above a thin note that restates the query and links to it.

A note p is a pointer to d for a query when (1) p links to d (a wiki or markdown link from p
to d), (2) p holds fewer content terms than d (conjunctive.py `terms`: title, aliases, tags
and body) and (3) p's body, the links' targets left out, is chiefly the query: more than half
of its content terms (stemmed, repeats counted) are the query's. Such a note says less than
what it cites and what it says is the question, so what it matches of the query describes d,
as anchor text describes the page it points to (Brin & Page 1998; Craswell, Hawking &
Robertson 2001, "Effective site finding using link anchor information", SIGIR: a page found
by the text of the links to it). It is the note an agent or a person writes to say where an
answer is ("Q: how do I ...? From [[the page]]"). Learning-free it ranks above the page it
cites, often by far (its few terms are nearly all the query's), and no prior bounded at x1.2
passes it (NOTES-LRN23.md: 1.21-2.88 times the page's score on the Obsidian help vault).

The rule (learning v26): when learning has evidence wholly about the query that d was used for
it (`whole` with q(d) > 0: the v24 licence, a lift any learning-free order may yield to), d is
placed just above the highest pointer to it, by the smallest score above the pointer's. The
pointer keeps its place and score. It acts only with learned evidence for the query, so a vault
without it ranks as before; a note named by the query (`holders`: a map of content asked for
by its title) or one whose own lift is wholly about the query (used for it too) is never passed.
The one number, "more than half", is what "chiefly" means; nothing was fitted.

Learning v27: a note whose learned score on the query is positive but not wholly about it
(`partial`: a rewording of the question it was used for, another claim about the same page)
passes the pointers to it too, but only a run of them lying just above it, nothing else ranked
between: the licence hold (scope.py `hold_unlicensed`, Joachims 2002) keeps such a lift below
the notes the learning-free ranking put above it, and a pointer is no competitor but a
description of the note (its anchor text), so passing it compares the note with nothing it
was not already compared with. Measured on BEIR SciFact's training claims as a held-out
learning workload (bench/scifact_learning.py, NOTES-LRN26.md): under v26 the citing agent's
two answer notes for a claim stood just above the abstract, third, for the other claim about
it in 37 of 60 questions at its first asking.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..notes.markdown_scan import scan_body
from ..notes.text import content_terms, stems, tokenize
from .csr import Csr

F64 = npt.NDArray[np.float64]
Mask = npt.NDArray[np.bool_]


def links_to(edges: Sequence[tuple[int, int]], src: int, dst: int) -> bool:
    """Whether the sorted (source, target) pairs `edges` hold src -> dst."""
    i = bisect_left(edges, (src, dst))
    return i < len(edges) and tuple(edges[i]) == (src, dst)


@dataclass(frozen=True)
class Pointers:
    """What the step reads of the corpus: `links` the symmetric adjacency (the neighbours to
    try), `edges` the sorted (source, target) pairs, `terms` each note's content-term count,
    `bodies` the notes' bodies, `query` the query's tokens."""

    links: Csr
    edges: Sequence[tuple[int, int]]
    terms: npt.ArrayLike
    bodies: Sequence[str]
    query: Sequence[str]


def restates(body: str, query: frozenset[str]) -> bool:
    """Whether more than half of `body`'s content terms (stemmed, the links' targets left out)
    are among the stems `query`."""
    cut, at = [], 0
    for site in sorted(scan_body(body).sites, key=lambda s: s.target_start):
        if site.target_start >= at:
            cut.append(body[at:site.target_start])
            at = site.target_end
    words = stems(content_terms(tokenize("".join(cut) + body[at:])))
    return 2 * sum(w in query for w in words) > len(words)


def above_pointers(final: F64, lifted: Mask, holders: Mask, eligible: Mask, of: Pointers,
                   partial: Mask | None = None) -> tuple[F64, int]:
    """(`final` with every note of `lifted` placed just above the highest pointer to it that
    scores at least as high, and every note of `partial` just above the highest pointer to it
    with only pointers to it between them, how many moved); module docstring. The pointers'
    scores are read before any move, the movers in index order."""
    links, edges = of.links, of.edges
    part = np.zeros_like(lifted) if partial is None else partial & ~lifted
    movers = np.flatnonzero((lifted | part) & eligible & (final > 0))
    if movers.size == 0 or links.nnz == 0:
        return final, 0
    t = np.asarray(of.terms, dtype=np.int64).ravel()
    query = frozenset(stems(content_terms(of.query)))
    csr = links.tocsr()
    ranked: F64 | None = None  # the eligible scores, sorted when a partial mover needs them
    out, moved = final.copy(), 0
    for d in movers.tolist():
        nb = csr.indices[csr.indptr[d]: csr.indptr[d + 1]]
        nb = nb[eligible[nb] & ~holders[nb] & ~lifted[nb] & (t[nb] < t[d])
                & (final[nb] >= final[d])]
        tops = sorted(nb.tolist(), key=lambda p: (-float(final[p]), p))
        top = None
        if not part[d]:
            top = next((p for p in tops if links_to(edges, p, d)
                        and restates(of.bodies[p], query)), None)
        elif tops:  # evidence in part: only a run of pointers just above d, nearest first
            ranked = np.sort(final[eligible]) if ranked is None else ranked
            for k, p in enumerate(reversed(tops), start=2):
                if not (links_to(edges, p, d) and restates(of.bodies[p], query)
                        and _between(ranked, final[d], final[p]) == k):
                    break
                top = p
        if top is not None:
            out[d], moved = np.nextafter(final[top], np.inf), moved + 1
    return out, moved


def _between(ranked: F64, low: float, high: float) -> int:
    """How many of the sorted scores `ranked` lie in [low, high]."""
    return int(np.searchsorted(ranked, high, "right") - np.searchsorted(ranked, low, "left"))
