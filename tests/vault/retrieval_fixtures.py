"""Shared builders for the retrieval tests: an in-memory Corpus from plain note tuples."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

import pytest

from vault.retrieval import pipeline
from vault.storage.corpus import Corpus


def make_corpus(
    notes: Sequence[tuple[str, str]],
    edges: Sequence[tuple[int, int]] = (),
    *,
    aliases: Sequence[Sequence[str]] | None = None,
    archived: Sequence[bool] | None = None,
    generation: int = 1,
) -> Corpus:
    """Notes given as (title, body); ids 1..n; paths "<title>.md"."""
    n = len(notes)
    return Corpus(
        generation=generation,
        ids=tuple(range(1, n + 1)),
        paths=tuple(f"{t}.md" for t, _ in notes),
        titles=tuple(t for t, _ in notes),
        aliases=tuple(tuple(a) for a in aliases) if aliases else tuple(() for _ in notes),
        bodies=tuple(b for _, b in notes),
        frontmatter=tuple({} for _ in notes),
        content_hashes=tuple("" for _ in notes),
        edges=tuple(sorted({(a, b) for a, b in edges})),
        archived=tuple(archived) if archived else tuple(False for _ in notes),
    )


DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")
SERVICES = ("auth", "billing", "search", "payments", "gateway")
FAULTS = ("outage", "latency", "corruption", "timeouts", "crash")


def incident_reports() -> list[tuple[str, str]]:
    """engram's 125 near-duplicate incident reports (title, body)."""
    out = []
    for d in DAYS:
        for s in SERVICES:
            for f in FAULTS:
                out.append((f"report {d} {s} {f}",
                            f"On {d} the {s} service suffered {f} during the rollout."))
    return out


# A note named in the query ("Ilse") above turns that only mention her: the corpus on which the
# learned stages must lift a used turn without taking it past the named note.
NAMED_NOTES = [("Ilse", "Ilse walks by the river."),
               ("Turn 1", "Ilse: the spring walk by the river was cold and the ducks came."),
               ("Turn 2", "Ilse: spring walk, ducks."),
               ("Filler", "nothing here"),
               ("Turn 3", "the river in spring")]
NAMED_QUERY = "What did Ilse see on her spring walk by the river?"


@pytest.fixture
def conjunctive_kept(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Fusion's `long_query` (tests/vault/retrieval/test_long_query.py) held to keep the
    conjunctive channel: the learned stages' holds past a named note are tested on the ranking
    the fixture was written for, with the channel, whatever the rule's bound. (With the plain
    median of session 38, 3 content terms, NAMED_QUERY's 5 lost the channel and the named note
    "Ilse" led; the length-weighted median of session 39 is 6 and keeps it.)"""
    def kept(weights: Mapping[str, float], _query: int, _median: float
             ) -> tuple[dict[str, float], str]:
        return dict(weights), ""
    monkeypatch.setattr(pipeline, "long_query", kept)
    yield


def titles(hits: object) -> list[str]:
    """The titles of a list of hits, in order."""
    return [h.title for h in hits]  # type: ignore[attr-defined]
