"""A development benchmark of linked knowledge notes: bridge and comparison questions.

    generate(seed) -> Haystack   (deterministic for a seed: random.Random(seed) only)

The vault: entity notes of four kinds, people, organisations, places and works, whose bodies
name other entities, as a wiki-link ("[[Halvorsen Labs]]") with probability LINK_P and as plain
text otherwise (so a bridge is not always a link), plus meeting and review notes, distractors
that name several entities at once and share the questions' surface words ("founded",
"population", "born", "published"); they make dense link clusters around popular entities.
Names overlap on purpose: first names and surnames repeat across people, and organisation
names reuse surnames, so a name's single tokens match many notes.

Questions (evidence = the corpus positions of the notes that hold the facts):
- bridge: the question names one entity; the answer is in a note reached through it,
  "In which year was the organisation that Dana Reyes works for founded?"
  evidence {Dana Reyes, her employer};
- comparison: the question names two entities, often unlinked, "Who was born earlier, Dana
  Reyes or Ilse Marr?", evidence {both}. A fraction of entities are isolated (no links to or
  from them), the case the link stages used to bury.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from vault import Corpus

from .datasets import Haystack, Question

FIRST = ("Dana Ilse Tomas Mira Olek Sana Jonah Petra Ravi Lena Hugo Anya Felix Noor Ines Kai "
         "Marta Omar Yuki Bram").split()
LAST = ("Reyes Marr Okafor Lindqvist Haddad Brandt Sato Novak Castell Aalto Moreau Quist Vidal "
        "Halvorsen Ferro Tanaka").split()
PLACES = ("Porto Vellmar Oskarby Tiranet Lumen Ferrisburg Caldera Northwick Aramis Belhaven "
          "Kestrel Dunmore Saltash Orwen Marisol Hollin Brega Cassel Varn Elmsby").split()
ORG_KIND = ("Labs", "Press", "Works", "Group", "Institute")
WORK_ADJ = "Silent Amber Last Hollow Distant Broken Quiet Paper Iron Glass".split()
WORK_NOUN = "Harbour Orchard Lantern River Archive Winter Garden Signal Atlas Bridge".split()
PROFESSIONS = "engineer painter historian chemist architect composer surveyor editor".split()
GENRES = "novel atlas monograph symphony treatise memoir".split()
LINK_P = 0.6
ISOLATED_P = 0.25


@dataclass
class _Vault:
    rng: random.Random
    titles: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    bodies: list[str] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)
    facts: list[dict[str, Any]] = field(default_factory=list)
    edges: set[tuple[int, int]] = field(default_factory=set)
    isolated: set[int] = field(default_factory=set)

    def add(self, kind: str, title: str, facts: dict[str, Any]) -> int:
        self.titles.append(title)
        self.paths.append(f"{kind}/{title}.md")
        self.bodies.append("")
        self.kinds.append(kind)
        self.facts.append(facts)
        return len(self.titles) - 1

    def ref(self, src: int, dst: int) -> str:
        """`dst` named in `src`'s body: a wiki-link unless either end is isolated."""
        if src in self.isolated or dst in self.isolated or self.rng.random() >= LINK_P:
            return self.titles[dst]
        self.edges.add((min(src, dst), max(src, dst)))
        return f"[[{self.titles[dst]}]]"

    def corpus(self) -> Corpus:
        n = len(self.titles)
        return Corpus(
            generation=2_000_000, ids=tuple(range(1, n + 1)), paths=tuple(self.paths),
            titles=tuple(self.titles), aliases=tuple(() for _ in range(n)),
            bodies=tuple(self.bodies), frontmatter=tuple({"type": k} for k in self.kinds),
            content_hashes=tuple("" for _ in range(n)), edges=tuple(sorted(self.edges)),
            archived=tuple(False for _ in range(n)),
        )


def _entities(v: _Vault) -> dict[str, list[int]]:
    rng = v.rng
    out: dict[str, list[int]] = {"place": [], "org": [], "person": [], "work": []}
    for name in PLACES:
        out["place"].append(v.add("place", name, {"population": rng.randrange(20, 900) * 1000}))
    orgs = sorted({f"{rng.choice(LAST)} {rng.choice(ORG_KIND)}" for _ in range(40)})
    for name in orgs:
        out["org"].append(v.add("org", name, {"founded": rng.randrange(1850, 2010)}))
    people = sorted({f"{rng.choice(FIRST)} {rng.choice(LAST)}" for _ in range(140)})
    for name in people:
        out["person"].append(v.add("person", name, {"born": rng.randrange(1920, 2000),
                                                    "job": rng.choice(PROFESSIONS)}))
    works = sorted({f"The {rng.choice(WORK_ADJ)} {rng.choice(WORK_NOUN)}" for _ in range(70)})
    for name in works:
        out["work"].append(v.add("work", name, {"year": rng.randrange(1950, 2020),
                                                "genre": rng.choice(GENRES)}))
    for kind in ("person", "work", "org"):
        v.isolated.update(i for i in out[kind] if rng.random() < ISOLATED_P)
    return out


def _bodies(v: _Vault, ents: dict[str, list[int]]) -> None:
    rng = v.rng
    for i in ents["place"]:
        v.bodies[i] = (f"{v.titles[i]} is a harbour town on the coast with a population of "
                       f"{v.facts[i]['population']}.")
    for i in ents["org"]:
        hq = rng.choice(ents["place"])
        v.facts[i]["hq"] = hq
        v.bodies[i] = (f"{v.titles[i]} is an organisation founded in {v.facts[i]['founded']}. "
                       f"Its headquarters are in {v.ref(i, hq)}.")
    for i in ents["person"]:
        f = v.facts[i]
        f["place"], f["org"] = rng.choice(ents["place"]), rng.choice(ents["org"])
        friend = rng.choice(ents["person"])
        v.bodies[i] = (f"{v.titles[i]} is a {f['job']} born in {f['born']} in "
                       f"{v.ref(i, f['place'])}. They work for {v.ref(i, f['org'])}. "
                       f"A longtime friend of {v.ref(i, friend)}.")
    for i in ents["work"]:
        f = v.facts[i]
        f["author"], f["publisher"] = rng.choice(ents["person"]), rng.choice(ents["org"])
        v.bodies[i] = (f"{v.titles[i]} is a {f['genre']} published in {f['year']}. It was "
                       f"written by {v.ref(i, f['author'])} and published by "
                       f"{v.ref(i, f['publisher'])}.")


def _distractors(v: _Vault, ents: dict[str, list[int]], n: int) -> None:
    """Meeting and review notes: several entities each, the questions' words, no facts."""
    rng = v.rng
    popular = [i for kind in ("person", "org", "work") for i in ents[kind]
               if i not in v.isolated]
    for j in range(n):
        p1, p2 = rng.sample(popular, 2)
        org, place = rng.choice(ents["org"]), rng.choice(ents["place"])
        i = v.add("meeting", f"Meeting {j:03d}", {})
        v.bodies[i] = (f"{v.ref(i, p1)} and {v.ref(i, p2)} met at {v.ref(i, org)} in "
                       f"{v.ref(i, place)} to talk about who founded the archive, where the "
                       f"authors were born, the population survey and what was published "
                       f"that year.")


def _questions(v: _Vault, ents: dict[str, list[int]], n_bridge: int, n_comp: int
               ) -> list[Question]:
    rng, t, f = v.rng, v.titles, v.facts
    qs: list[Question] = []
    bridge = (
        ("person", "org", "In which year was the organisation that {a} works for founded?"),
        ("person", "place", "What is the population of the town where {a} was born?"),
        ("work", "author", "In which year was the author of {a} born?"),
        ("work", "publisher", "In which year was the publisher of {a} founded?"),
    )
    for j in range(n_bridge):
        kind, key, text = bridge[j % len(bridge)]
        a = rng.choice(ents[kind])
        qs.append(Question(f"bridge-{j:03d}", text.format(a=t[a]), "bridge",
                           frozenset({a, f[a][key]})))
    comparison = (
        ("person", "Who was born earlier, {a} or {b}?"),
        ("work", "Which was published first, {a} or {b}?"),
        ("org", "Which organisation was founded earlier, {a} or {b}?"),
    )
    for j in range(n_comp):
        kind, text = comparison[j % len(comparison)]
        a, b = rng.sample(ents[kind], 2)
        qs.append(Question(f"comparison-{j:03d}", text.format(a=t[a], b=t[b]), "comparison",
                           frozenset({a, b})))
    return qs


def generate(seed: int = 15, *, distractors: int = 220, bridge: int = 200,
             comparison: int = 160) -> Haystack:
    """The vault and its questions (module docstring); the same seed gives the same bytes."""
    v = _Vault(random.Random(seed))
    ents = _entities(v)
    _bodies(v, ents)
    _distractors(v, ents, distractors)
    qs = _questions(v, ents, bridge, comparison)
    return Haystack(f"knowledge-{seed}", v.corpus(), tuple(qs))
