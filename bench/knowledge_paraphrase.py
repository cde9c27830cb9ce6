"""Held-out paraphrases whose new words some other note holds (issue 31; NOTES-LRN14.md).

bench_learning_agents.py's `paraphrase` rewords a question with words no note holds
(employer, established, birthplace, ...), so it cannot show what learning v18's gate rule costs
a real paraphrase: v18 counts a phrase with a word new to the query log against the gate
only when some note holds that word (vault/learning/topic.py). `described` adds, by one fixed
rule, what a user who knows the entity would add: the first entity's descriptor, read from its
own note's body,
- a person: their profession ("the painter Dana Reyes"),
- a work: its genre ("the memoir The Silent Harbour"),
- an organisation: its headquarters' town ("Reyes Labs in Porto"),
then rewords as `paraphrase` does. Every descriptor word is held by the entity's note and by
other notes of its kind (8 professions, 6 genres and 20 towns over ~300 entities) and by no
generated question, so it is new to the query log and held by some note: the case v18 treats
as a question word, where v17 treated it as a rewording.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from vault import Corpus

_PERSON = re.compile(r"is an? (\w+) born in")
_WORK = re.compile(r"is an? (\w+) published in")
_ORG = re.compile(r"Its headquarters are in \[?\[?([^\].]+)\]?\]?\.")


def descriptor(corpus: Corpus, title: str) -> tuple[str, str]:
    """(before, after) the name: ("the painter ", "") or ("", " in Porto"), from the note's body."""
    body = corpus.bodies[corpus.titles.index(title)]
    for pattern, before in ((_PERSON, True), (_WORK, True), (_ORG, False)):
        m = pattern.search(body)
        if m:
            return (f"the {m.group(1)} ", "") if before else ("", f" in {m.group(1)}")
    raise ValueError(f"no descriptor in the note {title!r}")


def described(text: str, corpus: Corpus, paraphrase: Callable[[str], str]) -> str:
    """`paraphrase(text)` with the first named entity described by its own note (module doc)."""
    out = paraphrase(text)
    named = [t for t in corpus.titles if t in text]
    if not named:
        raise ValueError(f"no note named in {text!r}")
    name = min(named, key=lambda t: (text.find(t), -len(t), t))
    before, after = descriptor(corpus, name)
    return out.replace(name, f"{before}{name}{after}", 1)

