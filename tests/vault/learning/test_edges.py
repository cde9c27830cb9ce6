"""WeightedEdges: normalisation, re-keying to positions, against obvious dict twins."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from vault.learning.edges import WeightedEdges


def test_build_orients_sorts_and_drops_self_loops() -> None:
    e = WeightedEdges.build([5, 1, 3, 2], [2, 4, 3, 9], [0.1, 0.2, 0.3, 0.4])
    assert e.triples() == [(1, 4, 0.2), (2, 5, 0.1), (2, 9, 0.4)]


def test_duplicates_and_ragged_arrays_are_errors() -> None:
    with pytest.raises(ValueError, match="duplicate"):
        WeightedEdges.build([1, 2], [2, 1], [0.5, 0.5])
    with pytest.raises(ValueError, match="equal length"):
        WeightedEdges(np.zeros(2, np.int64), np.zeros(1, np.int64), np.zeros(2))


def test_empty() -> None:
    assert len(WeightedEdges.empty()) == 0 and WeightedEdges.of([]).triples() == []
    assert len(WeightedEdges.of([(1, 2, 1.0)]).to_positions([])) == 0


def test_to_positions_follows_the_given_order_and_exclusions() -> None:
    e = WeightedEdges.of([(10, 20, 0.5), (20, 30, 0.25), (30, 40, 1.0)])
    got = e.to_positions([40, 30, 20], excluded=[40]).triples()
    assert got == [(1, 2, 0.25)]  # 10 is unknown, 40 excluded; (30, 20) -> positions (1, 2)


pairs = st.dictionaries(
    st.tuples(st.integers(0, 30), st.integers(0, 30)).filter(lambda t: t[0] < t[1]),
    st.floats(0.0, 1.0),
    max_size=40,
)


@given(pairs, st.lists(st.integers(0, 35), unique=True, max_size=30), st.sets(st.integers(0, 30)))
def test_to_positions_matches_a_dict_twin(
    edges: dict[tuple[int, int], float], ids: list[int], excluded: set[int]
) -> None:
    e = WeightedEdges.of((a, b, w) for (a, b), w in edges.items())
    pos = {note: k for k, note in enumerate(ids) if note not in excluded}
    want = sorted(
        (min(pos[a], pos[b]), max(pos[a], pos[b]), w)
        for (a, b), w in edges.items()
        if a in pos and b in pos
    )
    assert e.to_positions(ids, excluded).triples() == want
