"""The wiki-link graph as undirected adjacency lists, and the one breadth-first search over it.

`neighbors` (the facade) and spreading activation (learning) both walk the graph with
`hops_from`, so "within k links" means the same thing everywhere: undirected, self loops
dropped, neighbours visited in ascending order (a total order, so results never depend on
set or dict order).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence

Adjacency = Mapping[int, Sequence[int]]


def undirected(edges: Sequence[tuple[int, int]]) -> dict[int, list[int]]:
    """Adjacency lists (sorted, deduplicated, no self loops) from directed (src, dst) id pairs."""
    adj: dict[int, set[int]] = {}
    for a, b in edges:
        if a == b:
            continue
        adj.setdefault(a, set()).add(b)
        adj.setdefault(b, set()).add(a)
    return {k: sorted(v) for k, v in sorted(adj.items())}


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
        if dist[cur] >= max_hops:
            continue  # before the read: a packed graph builds the list it returns
        links = adjacency.get(cur, ())
        if 0 < max_degree < len(links):
            continue
        for nxt in sorted(links):
            if nxt not in dist:
                dist[nxt] = dist[cur] + 1
                queue.append(nxt)
    return dist
