"""A learned lift passes a note the learning-free ranking put above it only when it is wholly
about the question (v24, retrieval/scope.py `hold_unlicensed`, NOTES-LRN21.md): a note used
for a question about watering Maria's garden fence shares a logged phrase ("garden fence")
with a question about the colour she painted it, so its gate on that question is partial and
its lift (x1.07) used to put it above the page about paint colours that ranks first without
learning. A note used for the question itself still rises past the page."""

from __future__ import annotations

from pathlib import Path

from vault import Ledger, Vault

from .test_ledger_facade import Clock
from .used_sessions import held_and_replayed, learning_vault, reading_sessions

WATER = "When does Maria water the garden fence?"
PAINT = "What colour did Maria paint the garden fence?"


def vault_with(tmp_path: Path, clock: Clock) -> tuple[Vault, Ledger]:
    return learning_vault(tmp_path, clock, {
        "Garden.md": "Maria waters the garden fence every morning before work, then walks "
                     "the old dog along the river.\n",
        "Paint colour.md": "Which paint colour to choose: the paint colour chart for a "
                           "garden.\n"})


def sessions(v: Vault, ledger: Ledger, clock: Clock, question: str) -> None:
    """Three sessions that were shown only "Garden" for `question` and read it."""
    reading_sessions(v, ledger, clock, question, "Garden", shown=["Garden"])


def order(v: Vault, question: str) -> list[str]:
    return [h.title for h in v.search(question, learn=False).hits][:2]


def test_a_lift_from_another_question_keeps_the_learning_free_order(tmp_path: Path) -> None:
    clock = Clock()
    v, ledger = vault_with(tmp_path, clock)
    with v:
        assert order(v, PAINT) == ["Paint colour", "Garden"]
        sessions(v, ledger, clock, WATER)
        hits = v.search(PAINT, learn=False)
        assert [h.title for h in hits.hits][:2] == ["Paint colour", "Garden"]
        learned = ledger.learned([v.resolve("Garden"), v.resolve("Paint colour")], query=PAINT,
                                 held=v._held_in(v.corpus(), PAINT))
        assert learned.prior[0] > 0 and learned.prior[1] == 0  # lifted, and the page is not
        assert learned.whole is not None and not learned.whole[0]  # partly about PAINT
        assert "1 held below notes ranked above them without learning" in hits.stages["prior"]
        got = {h.title: h for h in hits.hits}
        assert got["Garden"].score < got["Paint colour"].score
        held_and_replayed(v, hits, "Garden", PAINT, clock)
        assert order(v, WATER)[0] == "Garden"  # its own question: lifted as before
    ledger.close()


def test_a_note_used_for_the_question_itself_still_passes(tmp_path: Path) -> None:
    clock = Clock()
    v, ledger = vault_with(tmp_path, clock)
    with v:
        sessions(v, ledger, clock, PAINT)
        learned = ledger.learned([v.resolve("Garden")], query=PAINT,
                                 held=v._held_in(v.corpus(), PAINT))
        assert learned.whole is not None and learned.whole[0]
        hits = v.search(PAINT, learn=False)
        assert [h.title for h in hits.hits][:2] == ["Garden", "Paint colour"]
        assert "held below notes" not in hits.stages["prior"]
        replayed = v.search(PAINT, as_of=clock.t).hits
        assert [(h.title, h.score) for h in hits.hits] == [(h.title, h.score) for h in replayed]
    ledger.close()
