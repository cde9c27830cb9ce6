"""A note learning has seen used for a question is placed just above a thin note that links to
it (learning v26, retrieval/cited.py, NOTES-LRN25.md): an answer note holding the question
word for word and a link to the page ranks above the page without learning, by more than the
prior's bound; after sessions that read the page for the question the page leads, the answer
note second. A note the query names, or one longer than what it links to, is never passed."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from vault import Ledger, Vault
from vault.retrieval.cited import Pointers, above_pointers
from vault.retrieval.csr import adjacency_of

from .test_ledger_facade import Clock
from .used_sessions import held_and_replayed, learning_vault, reading_sessions

QUESTION = "How do I add a password to my Publish site?"
PAGE = ("Security and privacy: a Publish site can ask visitors for a password. Open the site "
        "options, choose who may read it, and set the password; readers you invite sign in "
        "with it, everyone else sees a lock screen. Remove it to open the site again.\n")


def titles(v: Vault, query: str) -> list[str]:
    return [h.title for h in v.search(query, learn=False).hits]


def vault_with(tmp_path: Path, clock: Clock, pointer: str, text: str) -> tuple[Vault, Ledger]:
    return learning_vault(tmp_path, clock, {"Security.md": PAGE, pointer: text})


def test_the_used_page_passes_a_thin_note_citing_it(tmp_path: Path) -> None:
    clock = Clock()
    v, ledger = vault_with(tmp_path, clock, "answers/a1.md",
                           f"Q: {QUESTION}\n\nFrom [[Security]].\n")
    with v:
        assert titles(v, QUESTION)[:2] == ["a1", "Security"]
        reading_sessions(v, ledger, clock, QUESTION, "Security")
        hits = v.search(QUESTION, learn=False)
        assert [h.title for h in hits.hits][:2] == ["Security", "a1"]
        assert "1 placed above thin notes linking to them" in hits.stages["prior"]
        top, second = hits.hits[0], hits.hits[1]
        assert top.score > second.score and top.receipt["prior_factor"] > 1.2
        held_and_replayed(v, hits, "Security", QUESTION, clock)
    ledger.close()


def test_a_note_the_query_names_is_not_passed(tmp_path: Path) -> None:
    clock = Clock()
    v, ledger = vault_with(tmp_path, clock, "Publish password.md",
                           "Publish password: see [[Security]].\n")
    with v:
        assert titles(v, "Publish password")[:2] == ["Publish password", "Security"]
        reading_sessions(v, ledger, clock, "Publish password", "Security")
        hits = v.search("Publish password", learn=False)
        assert [h.title for h in hits.hits][:2] == ["Publish password", "Security"]
        assert "placed above" not in hits.stages["prior"]
    ledger.close()


def test_only_a_thinner_note_linking_to_the_page_is_passed() -> None:
    """Three notes above the lifted page 3: 0 links to it but is longer, 1 is thin but the
    link runs from the page to it, 2 is thin and links to it: the page goes just above 2
    only; with 2 named (a note asked for by its title), nothing moves."""
    final = np.array([0.9, 0.8, 0.7, 0.5])
    lifted = np.array([False, False, False, True])
    ok = np.ones(4, dtype=np.bool_)
    links = adjacency_of(4, np.array([0, 3, 2, 3, 1, 3]), np.array([3, 0, 3, 2, 3, 1]))
    edges = [(0, 3), (2, 3), (3, 1)]
    bodies = ["the page [[3]]", "the page", "the page [[3]]", "the page itself, in full"]
    of = Pointers(links, edges, np.array([40, 5, 5, 20]), bodies, ["the", "page"])
    out, moved = above_pointers(final, lifted, ~ok, ok, of)
    assert moved == 1 and out[3] == np.nextafter(0.7, 1.0)
    assert list(np.argsort(-out, kind="stable")) == [0, 1, 3, 2]
    named = np.array([False, False, True, False])
    assert above_pointers(final, lifted, named, ok, of)[1] == 0
    other = Pointers(links, edges, of.terms, bodies, ["another", "question"])
    assert above_pointers(final, lifted, ~ok, ok, other)[1] == 0  # 2 does not restate it
