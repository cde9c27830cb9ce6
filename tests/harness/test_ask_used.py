"""ask's "notes used" (harness.ask_used): the notes the answer cites or whose content it uses,
never a note that only shares the topic's words; generated notes for the content rule."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from harness.ask_used import used_notes


def rec(note: str, text: str, **extra: Any) -> tuple[str, dict[str, Any]]:
    title = note.rsplit("/", 1)[-1].removesuffix(".md")
    return note, {"note": note, "title": title, "text": text, "frontmatter": {}, **extra}


OUTAGE = rec("Incidents/auth outage.md",
             "On Monday the [[Auth Service]] suffered an expired certificate during the "
             "rollout. [[Carla]] rotated the certificate. #incident")
AUTH = rec("Services/Auth Service.md", "Issues tokens. Rotates signing keys every 30 days.")
CARLA = rec("People/Carla.md", "Carla maintains the [[Auth Service]] and the on-call rota.")
DELAY = rec("Incidents/billing delay.md",
            "On Tuesday the [[Billing Service]] suffered a queue backlog during the rollout. "
            "#incident")
BOB = rec("People/Bob.md", "Bob runs the Monday incident review. Works with [[Carla]].",
          aliases=["Robert"])
SET = [OUTAGE, AUTH, CARLA, DELAY, BOB]


def test_an_extractive_answer_uses_its_sentences_and_its_links_only() -> None:
    answer = ("[extractive] On Monday the [[Auth Service]] suffered an expired certificate "
              "during the rollout. [[Carla]] rotated the certificate.")
    used = used_notes(answer, "Who rotated the certificate?", SET)
    assert used == [OUTAGE[0], AUTH[0], CARLA[0]]  # answer-set order; topic words alone: no


def test_citations_by_path_title_alias_and_section_link() -> None:
    q = "who?"
    assert used_notes("Ask [[robert]].", q, SET) == [BOB[0]]
    assert used_notes("See [[Billing delay#Timeline|the delay]].", q, SET) == [DELAY[0]]
    assert used_notes("Per People/Carla.md, yes.", q, SET) == [CARLA[0]]


def test_a_paraphrase_keeps_a_notes_distinctive_words() -> None:
    answer = "Every month the signing keys get rotated; tokens come from it."
    assert used_notes(answer, "How often are keys rotated?", SET) == [AUTH[0]]


def test_no_answer_uses_nothing() -> None:
    assert used_notes("", "q", SET) == []
    assert used_notes("I could not find that in the notes.", "q", SET) == []


WORD = st.text(alphabet="abcdefghij", min_size=4, max_size=7)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(WORD, min_size=6, max_size=12), min_size=2, max_size=5),
       st.integers(min_value=0, max_value=4))
def test_a_copied_run_is_used_and_a_disjoint_note_is_not(
        bodies: list[list[str]], pick: int) -> None:
    pick %= len(bodies)
    records = [rec(f"n{i}.md", " ".join(words)) for i, words in enumerate(bodies)]
    answer = " ".join(bodies[pick][:6])
    used = used_notes(answer, "zzzz", records)
    assert records[pick][0] in used
    said = set(bodies[pick][:6])
    for i, words in enumerate(bodies):
        if not said & set(words):
            assert records[i][0] not in used
