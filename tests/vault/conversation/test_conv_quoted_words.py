"""CONV5: words a turn quotes in the first person are someone else's: before, 'As Al said:
"I like tea."' by Bo gave Bo the fact "bo likes tea" (its value holding the quote mark and
what followed it); a quoted title ('I love "Breaking Bad"') is still the speaker's."""

from __future__ import annotations

import itertools

import pytest

from vault.conversation.statements import extract_statements

QUOTES = [('"', '"'), ("\u201c", "\u201d"), ("\u00ab", "\u00bb"), ("\u201e", "\u201c")]
SAID = ["I like tea.", "I moved to Rome", "my favourite city is Paris", "I work at Acme",
        "I'm a nurse", "I will call the plumber"]
LEADS = ["As Al said: {q}", "She told me {q} yesterday.", "{q} wrote Al [[one s-1|quoted]]",
         "My mum said {q}"]


@pytest.mark.parametrize(("quote", "said", "lead"), list(itertools.product(QUOTES, SAID, LEADS)))
def test_first_person_words_in_quotes_are_no_statement_of_the_speaker(
        quote: tuple[str, str], said: str, lead: str) -> None:
    text = lead.format(q=f"{quote[0]}{said}{quote[1]}")
    assert extract_statements(text, "Bo", ["Bo", "Al"]) == (), text


@pytest.mark.parametrize("quote", QUOTES[:1])  # a curly-quoted value keeps its marks
def test_a_quoted_title_is_still_the_speakers_and_so_is_what_follows(
        quote: tuple[str, str]) -> None:
    got = extract_statements(f"I love {quote[0]}Breaking Bad{quote[1]}. "
                             f"Al said {quote[0]}I hate it{quote[1]}. I live in Rome.",
                             "Bo", ["Bo", "Al"])
    assert [(s.subject, s.key, s.value) for s in got] == [
        ("bo", "opinion:breaking bad", "likes"), ("bo", "lives_in", "rome")]
