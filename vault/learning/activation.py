"""Spreading activation: how one query (or read, or write) warms notes through the link graph.

For each seed note s with utility u_s in [0, 1] (a hit's utility is 1/(rank+1); a read or a
write has utility 1), breadth-first search over the undirected link graph gives each note v
within `max_hops` (2) its hop distance k from s, and

    boost_s(v) = u_s * damping^k                      (damping 0.6; k = 0 is the seed itself)
    boost(v)   = min(cap, 1 - prod_s (1 - boost_s(v)))  (probabilistic OR over seeds; cap 0.05)

so one query adds at most `cap` to any note, whatever the number of seeds or paths. Hubs
(notes with more than `spread_max_degree` links) receive activation but do not pass it on.
The stored activation then accumulates as 1 - (1 - a_decayed)(1 - boost) (vault/learning.py).
The result is a list sorted by note id, so the log and every replay see the same order.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence

from .formulas import LearningParams, clip

Adjacency = Mapping[int, Sequence[int]]


def hops_from(
    seed: int, adjacency: Adjacency, max_hops: int, max_degree: int = 0
) -> dict[int, int]:
    """Hop distance from `seed` to every note within `max_hops` (BFS, neighbours by id).

    A hub (more than `max_degree` links, when max_degree > 0) is reached but not crossed:
    activation through a note linked to everything would warm everything equally.
    """
    dist = {seed: 0}
    queue = deque([seed])
    while queue:
        cur = queue.popleft()
        links = adjacency.get(cur, ())
        if dist[cur] >= max_hops or 0 < max_degree < len(links):
            continue
        for nxt in sorted(links):
            if nxt not in dist:
                dist[nxt] = dist[cur] + 1
                queue.append(nxt)
    return dist


def spread(
    seeds: Sequence[tuple[int, float]], adjacency: Adjacency, params: LearningParams
) -> list[tuple[int, float]]:
    """The capped boost per note for one query's seeds (module docstring); sorted by note id."""
    miss: dict[int, float] = {}  # prod_s (1 - boost_s(v))
    best_utility: dict[int, float] = {}
    for note, u in seeds:  # one seed per note: its best utility
        u = clip(u, 0.0, 1.0)
        if u > best_utility.get(note, 0.0):
            best_utility[note] = u
    for seed in sorted(best_utility):
        u = best_utility[seed]
        for note, k in hops_from(
            seed, adjacency, params.max_hops, params.spread_max_degree
        ).items():
            b = u * params.damping**k
            if b > 0.0:
                miss[note] = miss.get(note, 1.0) * (1.0 - b)
    out = []
    for note in sorted(miss):
        boost = min(params.activation_cap, 1.0 - miss[note])
        if boost > 0.0:
            out.append((note, boost))
    return out


def undirected(edges: Sequence[tuple[int, int]]) -> dict[int, list[int]]:
    """Adjacency lists (sorted, deduplicated, no self loops) from directed (src, dst) id pairs."""
    adj: dict[int, set[int]] = {}
    for a, b in edges:
        if a == b:
            continue
        adj.setdefault(a, set()).add(b)
        adj.setdefault(b, set()).add(a)
    return {k: sorted(v) for k, v in sorted(adj.items())}
