"""A note learning has seen used for a question is placed just above a thin note that links to
it (learning v26, retrieval/cited.py, NOTES-LRN25.md): an answer note holding the question
word for word and a link to the page ranks above the page without learning, by more than the
prior's bound; after sessions that read the page for the question the page leads, the answer
note second. A note the query names, or one longer than what it links to, is never passed."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from vault import Ledger, Vault
from vault.retrieval.cited import Pointers, above_pointers
from vault.retrieval.csr import adjacency_of
from vault.retrieval.hits import SearchResult

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


def _page_passes_its_answer_note(tmp_path: Path, asked: str) -> SearchResult:
    """The page read for QUESTION, then searched by `asked`: it passes the answer note (a1,
    restating QUESTION and citing it) that ranked above it before any use."""
    clock = Clock()
    v, ledger = vault_with(tmp_path, clock, "answers/a1.md",
                           f"Q: {QUESTION}\n\nFrom [[Security]].\n")
    with v:
        assert titles(v, asked)[:2] == ["a1", "Security"]
        reading_sessions(v, ledger, clock, QUESTION, "Security")
        hits = v.search(asked, learn=False)
        assert [h.title for h in hits.hits][:2] == ["Security", "a1"]
        assert "1 placed above thin notes linking to them" in hits.stages["prior"]
        held_and_replayed(v, hits, "Security", asked, clock)
    ledger.close()
    return hits


def test_the_used_page_passes_a_thin_note_citing_it(tmp_path: Path) -> None:
    hits = _page_passes_its_answer_note(tmp_path, QUESTION)
    top, second = hits.hits[0], hits.hits[1]
    assert top.score > second.score and top.receipt["prior_factor"] > 1.2


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


@pytest.mark.parametrize("reworded", ["Does a Publish site support a password for visitors?",
                                      "How can readers of my Publish site be asked for a "
                                      "password?"])
def test_a_rewording_used_in_part_passes_the_pointer_too(tmp_path: Path, reworded: str) -> None:
    """Learning v27: the page read for QUESTION, asked in other words (its learned evidence
    only partly about them), passes the answer note restating the question just above it."""
    _page_passes_its_answer_note(tmp_path, reworded)


def test_partial_evidence_passes_only_the_pointers_just_above() -> None:
    """Page 4 lifted in part: pointers 3 and 2 lie just above it, then note 1 (no pointer),
    then pointer 0. It goes just above 2, never past 1; lifted wholly, just above 0. With
    note 1 between it and every pointer nothing moves."""
    final = np.array([0.9, 0.8, 0.7, 0.6, 0.5])
    ok = np.ones(5, dtype=np.bool_)
    src, dst = np.array([0, 2, 3, 4, 4, 4]), np.array([4, 4, 4, 0, 2, 3])
    links = adjacency_of(5, src, dst)
    edges = [(0, 4), (2, 4), (3, 4)]
    bodies = ["the page [[4]]", "the page and more", "the page [[4]]", "the page [[4]]",
              "the page itself, in full"]
    of = Pointers(links, edges, np.array([5, 40, 5, 5, 20]), bodies, ["the", "page"])
    page = np.array([False, False, False, False, True])
    out, moved = above_pointers(final, ~ok, ~ok, ok, of, page)
    assert moved == 1 and out[4] == np.nextafter(0.7, 1.0)
    assert list(np.argsort(-out, kind="stable")) == [0, 1, 4, 2, 3]
    assert above_pointers(final, page, ~ok, ok, of)[0][4] == np.nextafter(0.9, 1.0)
    low = np.array([0.9, 0.8, 0.7, 0.6, 0.55])
    low[1] = 0.58  # note 1 now between the page and every pointer
    assert above_pointers(low, ~ok, ~ok, ok, of, page)[1] == 0
