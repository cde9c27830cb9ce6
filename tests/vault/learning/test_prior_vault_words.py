"""Through the facade (v18, learning/topic.py, NOTES-LRN13.md): a turn used for one question
about two people is lifted on a question about them whose other words the log never held
only in the share of that question it was used for when some note holds those words, and
wholly when no note does (a rewording)."""

from __future__ import annotations

from pathlib import Path

import pytest

from vault import LEDGER_FILE, Ledger, Vault

from .test_ledger_facade import Clock

CASES = [("James", "Samantha", "discover at McGee's bar", "McGee's bar, where they both"
          " discovered they love the live jazz"),
         ("Evan", "Sam", "avoid injuries while weightlifting", "To avoid injuries while"
          " weightlifting, start light"),
         ("Calvin", "Dave", "release the album in Tokyo", "The album was released in Tokyo")]


@pytest.mark.parametrize(("a", "b", "asked", "answer"), CASES)
def test_a_lift_built_on_another_question_about_the_same_people_acts_on_its_share(
        tmp_path: Path, a: str, b: str, asked: str, answer: str) -> None:
    clock = Clock()
    (tmp_path / ".rmh").mkdir()
    ledger = Ledger.open(tmp_path / ".rmh" / LEDGER_FILE, clock=clock)
    with Vault.open(tmp_path, usage=ledger) as v:
        v.write("Used.md", f"{a} and {b} took a cooking class and made an omelette.\n")
        v.write("Answer.md", f"{a} told {b}: {answer}.\n")
        v.write("Other.md", "The weather was grey all week.\n")
        for s in range(3):
            ledger.start_session(f"s{s}", clock.t)
            v.search(f"What did {a} and {b} make at the cooking class?", session=f"s{s}")
            v.read("Used", session=f"s{s}")
            clock.t += 60.0
            ledger.end_session(f"s{s}", clock.t)
        q = ledger.state.notes[v.resolve("Used")].q
        assert q > 0.5  # read in three sessions

        def factor(question: str) -> float:
            hits = v.search(question, learn=False).hits
            return float(next(h for h in hits if h.title == "Used").receipt["prior_factor"])

        # the question's own words are in a note: the names are a small share of it
        assert factor(f"What did {a} and {b} {asked}?") - 1.0 < 0.2 * q / 2  # v16: x1.12
        # a rewording in words no note holds keeps the whole lift, as before
        assert factor(f"What did {a} and {b} cook up at the culinary workshop?") == \
            pytest.approx(1.0 + 0.2 * q)
    ledger.close()
