"""Spreading activation: how one query (or read, or write) warms notes through the link graph.

For each seed note s with utility u_s in [0, 1] (a hit's utility is 1/(rank+1); a read or a
write has utility 1), breadth-first search over the undirected link graph gives each note v
within `max_hops` (2) its hop distance k from s, and

    boost_s(v) = cap * u_s * damping^k                (damping 0.6; k = 0 is the seed itself)
    boost(v)   = min(cap, 1 - prod_s (1 - boost_s(v)))  (probabilistic OR over seeds; cap 0.05)

so one query adds at most `cap` to any note, whatever the number of seeds or paths, and the
damping always acts: a neighbour gets 0.6 of its seed's boost, a second-hop note 0.36. (The
seed's rule read as min(cap, u_s * damping^k) would leave damping inert for any seed with
u_s >= 0.14: every note within two hops would get the full cap.) Hubs (notes with more than
`spread_max_degree` links) receive activation but do not pass it on. The stored activation
then accumulates as 1 - (1 - a_decayed)(1 - boost) (formulas.py). The result is a list sorted
by note id, so the log and every replay see the same order.

Source: the spreading-activation rule of seed 003 ("Computation is the missing bedrock of
agentic memory": boost = utility · 0.6^hop, at most 2 hops, capped per note per query), after
Collins & Loftus (1975), "A spreading-activation theory of semantic processing".
"""

from __future__ import annotations

from collections.abc import Sequence

from ..storage.linkgraph import Adjacency, hops_from
from .formulas import LearningParams, clip


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
            b = params.activation_cap * u * params.damping**k
            if b > 0.0:
                miss[note] = miss.get(note, 1.0) * (1.0 - b)
    out = []
    for note in sorted(miss):
        boost = min(params.activation_cap, 1.0 - miss[note])
        if boost > 0.0:
            out.append((note, boost))
    return out
