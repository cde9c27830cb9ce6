"""What the ask loop knows about a question and the notes it gathered (harness/ask.py).

Term groups. A question's content is a list of term groups: each capitalised name run
("Dana Reyes", "Halvorsen Labs") whose content terms are not all stop words is ONE group of
its terms; every other content term (harness.extractive.terms: stop words dropped,
suffix-folded) is a group of one. A note covers a group when its title or body holds every
term of the group.

Bridge entities of a note: the names it mentions that the question does not, in order: NDM
entities of its frontmatter (`entities: ["[[key]]", ...]`, as vault/conversation writes
them), then capitalised name runs of its body; the note's own title, names inside the
question and names made only of stop words are skipped.

Gain. A note found from a parent note p (through p's links or a sub-query built from p's
bridge entities) is worth what it adds: gain(d | G) = |{g in G : d covers g}| / |G|, where G
is the set of groups p left uncovered (Rocchio-style feedback restricted to the question's
own terms; the gap idea follows self-ask, Press et al. 2023).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .extractive import terms

NAME = re.compile(r"\b[A-Z][\w'’-]*(?:\s+[A-Z][\w'’-]*)*")
_FRONTMATTER = re.compile(r"\A---\r?\n.*?\r?\n---\r?\n?", re.DOTALL)
# No part of a link holds `[` (Obsidian allows none in a note's name): with `[` allowed, each `[[`
# of a note of unclosed links was scanned to the note's end, one C call holding the GIL: 8 KiB
# of `[[` took 2 s, 4 MiB days (session 42, SBX18). Each scan now stops at the next `[`.
_LINK = re.compile(r"\[\[([^\[\]|#]+)(?:#[^\[\]|]*)?(?:\|([^\[\]]+))?\]\]")
_POSSESSIVE = re.compile(r"['’]s$")


@dataclass(frozen=True)
class Group:
    """One content term group of the question: its words as written and its folded terms."""

    surface: str
    terms: frozenset[str]


def term_groups(question: str) -> list[Group]:
    """The question's term groups in order of appearance (module docstring), deduplicated."""
    found: list[tuple[int, Group]] = []
    named: set[str] = set()
    for m in NAME.finditer(question):
        words = [w for w in m.group(0).split() if terms(w)]
        if not words:
            continue
        text = _POSSESSIVE.sub("", " ".join(words))
        group = Group(text, frozenset(terms(text)))
        found.append((m.start(), group))
        named.update(group.terms)
    for m in re.finditer(r"[\w'’-]+", question):
        for t in terms(m.group(0)):
            if t not in named:
                found.append((m.start(), Group(m.group(0), frozenset({t}))))
    out: list[Group] = []
    seen: set[frozenset[str]] = set()
    for _, group in sorted(found, key=lambda pair: pair[0]):
        if group.terms and group.terms not in seen:
            seen.add(group.terms)
            out.append(group)
    return out


def body_of(record: Mapping[str, Any]) -> str:
    """A read() result's body without its frontmatter."""
    text = str(record.get("text") or record.get("body") or "")
    return _FRONTMATTER.sub("", text, count=1)


def note_terms(record: Mapping[str, Any]) -> frozenset[str]:
    """Folded content terms of a note's title and body (what coverage is checked against)."""
    return frozenset(terms(str(record.get("title") or "") + "\n" + body_of(record)))


def covered(groups: Sequence[Group], have: frozenset[str]) -> list[Group]:
    """The groups whose every term is in `have`."""
    return [g for g in groups if g.terms <= have]


def gain(groups: Sequence[Group], have: frozenset[str]) -> float:
    """gain(d | G): the share of `groups` the note's terms cover (0 for no groups)."""
    return len(covered(groups, have)) / len(groups) if groups else 0.0


def _entity_names(frontmatter: Any) -> list[str]:
    if not isinstance(frontmatter, Mapping):
        return []
    raw = frontmatter.get("entities")
    items = raw if isinstance(raw, list) else []
    out: list[str] = []
    for item in items:
        m = _LINK.search(str(item))
        name = (m.group(2) or m.group(1).rsplit("/", 1)[-1]) if m else str(item)
        name = name.removesuffix(".md").strip()
        if name:
            out.append(name)
    return out


def bridge_names(record: Mapping[str, Any], question: str, known: set[str]) -> list[str]:
    """Bridge entities of a note (module docstring); `known` are casefolded names to skip."""
    asked = {t for g in term_groups(question) for t in g.terms}
    body = _LINK.sub(lambda m: m.group(2) or m.group(1), body_of(record))
    names = _entity_names(record.get("frontmatter")) + NAME.findall(body)
    out: list[str] = []
    seen = set(known) | {str(record.get("title") or "").casefold()}
    for raw in names:
        words = [w for w in raw.split() if terms(w)]
        name = _POSSESSIVE.sub("", " ".join(words))
        own = set(terms(name))
        if not own or own <= asked or name.casefold() in seen:
            continue
        seen.add(name.casefold())
        out.append(name)
    return out
