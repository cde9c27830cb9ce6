"""A note's own text holding a question's new words spares its topic gate only when a logged
phrase of the question is in its bag (v23, learning/topic.py, NOTES-LRN18.md). On the Obsidian
help vault a question about a neighbouring page ("How do I preview a linked note by hovering
over the link?") matched nothing a trained page was used for but a new pairing of the vault's
two commonest words ("link note", v11); its own words ("preview", "hovering") are in that
page's text too, so v19 left them out of its gate, and the gate of one generic pairing was 1:
the trained page rose above the page the question is about (NOTES-LRN17.md, u02)."""

from __future__ import annotations

from pathlib import Path

import pytest

from vault import LEDGER_FILE, Ledger, Vault
from vault.learning.expansion import query_words
from vault.learning.formulas import LearningParams
from vault.learning.replay import learned_of
from vault.learning.state import LearnedState, NoteState
from vault.learning.topic import held_words, query_terms
from vault.learning.usage import Learned

from .test_ledger_facade import Clock

TRAINED = "How do I add links between notes in my vault?"
NEIGHBOUR = "How do I preview a linked note by hovering over the link?"


def test_a_generic_pairing_alone_does_not_open_the_gate_of_a_page_holding_the_new_words(
        tmp_path: Path) -> None:
    clock = Clock()
    (tmp_path / ".rmh").mkdir()
    ledger = Ledger.open(tmp_path / ".rmh" / LEDGER_FILE, clock=clock)
    with Vault.open(tmp_path, usage=ledger) as v:
        v.write("Internal links.md", "Add links between notes with double brackets. "
                "Hovering over a link shows a preview of the linked note.\n")
        v.write("Page preview.md", "Page preview shows a note when hovering over "
                "its link, with a modifier key.\n")
        for name in ("Folders", "Tags", "Search"):
            v.write(f"{name}.md", f"{name} organise each note in a vault.\n")
        for s in range(3):
            ledger.start_session(f"s{s}", clock.t)
            v.search(TRAINED, session=f"s{s}")
            v.read("Internal links", session=f"s{s}")
            clock.t += 60.0
            ledger.end_session(f"s{s}", clock.t)
        assert ledger.state.notes[v.resolve("Internal links")].q > 0.5

        def factor(question: str) -> float:
            hits = {h.title: h for h in v.search(question, learn=False).hits}
            return float(hits["Internal links"].receipt["prior_factor"])

        trained = factor(TRAINED)
        assert trained > 1.0
        # v19 + v11 gave it the trained question's whole lift (gate 1); now it is diluted by
        # the question's own words, as on every other note (v18)
        assert 1.0 <= factor(NEIGHBOUR) < trained
        # a question that keeps a logged phrase ("add links") and adds a word the page holds
        # keeps the whole lift, as v19 has it (the Ferrisburg case, test_prior_note_holds.py)
        assert factor("How do I add links to a preview?") == trained
        live = v.search(NEIGHBOUR, learn=False).hits
        replayed = v.search(NEIGHBOUR, as_of=clock.t).hits
        assert [(h.title, h.receipt["prior_factor"]) for h in live] == \
            [(h.title, h.receipt["prior_factor"]) for h in replayed]
    ledger.close()


def test_the_free_part_weighs_a_word_by_how_few_notes_hold_it() -> None:
    """v23 (replay.py `free_query`): the topic-free part q (1 - g) c reads the question's words
    by their rarity in the vault too. "How do I exclude a folder from syncing?" shares only
    "sync" with the questions a Sync page was used for; when most notes hold "sync" that says
    little of which note the question is about (NOTES-LRN17.md, cites' u42, gate 0 and free
    part 0.14), when one note does it says as much as before."""
    used = "How do I set up sync on a new phone?"
    state = LearnedState(searches=6, query_df={t: 2 for t in query_terms(used)},
                         word_df={w: 2 for w in query_words(used)},
                         notes={7: NoteState(q=0.7, used=6.0,
                                             use_terms={t: 2 for t in query_terms(used)},
                                             use_words={w: 2 for w in query_words(used)})})
    asked = "How do I exclude a folder from syncing?"

    def free(sync: int) -> float:  # "sync" in `sync` of 50 notes, the other words in one
        def count(tok: str) -> int:
            return sync if tok.startswith("sync") else 1
        held = held_words(asked, lambda tokens: [count(t) for t in tokens],
                          lambda tokens: [frozenset(range(count(t))) for t in tokens], 50)
        return free_of_note(learned_of(state, [7], 0.0, LearningParams(), asked, held))

    rare, common = free(1), free(45)
    assert rare > 0.0  # one shared word: the free part acts (v8)
    assert 0.0 < common < rare / 2  # most notes hold the shared word: it says little
    # without the vault's counts (a held mapping of ids only) every word keeps its weight
    bare = {w: frozenset({1}) for w in query_words(asked)}
    assert free_of_note(learned_of(state, [7], 0.0, LearningParams(), asked, bare)) == \
        pytest.approx(free(1))


def free_of_note(learned: Learned) -> float:
    assert learned.free is not None
    return float(learned.free[0])
