"""bench/knowledge_paraphrase.py: the words `described` adds are held by a note other than the
question's evidence, and in most questions one of them is new to the query log (no generated
question holds it; the genre "atlas" is also a title word); the template wording's new words
are held by no note."""

from __future__ import annotations

import pytest

from bench.bench_learning_agents import paraphrase
from bench.knowledge import generate
from bench.knowledge_paraphrase import described
from vault.learning.topic import content_tokens


@pytest.mark.parametrize("seed", [15, 31, 7])
def test_described_adds_words_other_notes_hold_and_mostly_no_question_does(seed: int) -> None:
    hay = generate(seed)
    corpus = hay.corpus
    notes = [set(content_tokens(f"{t} {b}")) for t, b in zip(corpus.titles, corpus.bodies,
                                                              strict=True)]
    asked = {w for q in hay.questions for w in content_tokens(q.text)}
    new_to_log = 0
    for q in hay.questions:
        plain = set(content_tokens(paraphrase(q.text)))
        assert not any((plain - asked) & words for words in notes), q.text
        added = set(content_tokens(described(q.text, corpus, paraphrase))) - plain
        others = set().union(*(words for i, words in enumerate(notes) if i not in q.evidence))
        assert added <= others, q.text  # empty: "the atlas The Silent Atlas"
        new_to_log += bool(added - asked)
    assert new_to_log >= 0.85 * len(hay.questions)
