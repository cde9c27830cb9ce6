"""A note's own text holding a question's new words spares its topic gate only when a logged
phrase of the question is in its bag (v23, learning/topic.py, NOTES-LRN18.md). On the Obsidian
help vault a question about a neighbouring page ("How do I preview a linked note by hovering
over the link?") matched nothing a trained page was used for but a new pairing of the vault's
two commonest words ("link note", v11); its own words ("preview", "hovering") are in that
page's text too, so v19 left them out of its gate, and the gate of one generic pairing was 1:
the trained page rose above the page the question is about (NOTES-LRN17.md, u02)."""

from __future__ import annotations

from pathlib import Path

from .test_ledger_facade import Clock
from .used_sessions import learning_vault, reading_sessions

TRAINED = "How do I add links between notes in my vault?"
NEIGHBOUR = "How do I preview a linked note by hovering over the link?"


def test_a_generic_pairing_alone_does_not_open_the_gate_of_a_page_holding_the_new_words(
        tmp_path: Path) -> None:
    clock = Clock()
    v, ledger = learning_vault(tmp_path, clock, {
        "Internal links.md": "Add links between notes with double brackets. Hovering over a "
                             "link shows a preview of the linked note.\n",
        "Page preview.md": "Page preview shows a note when hovering over its link, with a "
                           "modifier key.\n"})
    with v:
        reading_sessions(v, ledger, clock, TRAINED, "Internal links")
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
