"""Deterministic entity extraction and normalisation (the rows of NDM's incidence matrix).

NDM (seed 000, step 1): "Names are normalised before they become rows, so 'the vase' and
'vase' share a row, while 'my vase' said by Alice and 'my vase' said by Bob do not."

Kinds: "name" (capitalised words in any position, see below), "thing" (the words after a
determiner or possessive: "the pottery class"; every possessive phrase, "Alice's vase", is a
thing, never a person), "date" (a resolved expression from `clocks`, keyed by its absolute
label), "number".

A capitalised word is a name when it stands mid-sentence, or, at the start of a sentence, when
the conversation gives evidence (`name_lexicon`): the same word capitalised mid-sentence
elsewhere, a speaker's name, a supplied entity, or a word that is not a common word
(`common_words.COMMON`, stop words, weekdays, months) and is never written in lower case in
the conversation ("Carla is my teacher." with no "carla" anywhere). A sentence-initial
capitalised word followed by a mid-sentence one ("Riverside Market opened") starts a name run
unless it is a common word.

Normalisation (`normalise`): NFKC + casefold, determiners dropped, last word singularised
unless it was written capitalised with no determiner (a plural proper name stays: "Payments"
-> "payments"; "The Vases" -> "vase");
possessives are keyed by their owner: "my X" -> "<speaker>'s x", "your X" -> "<addressee>'s
x", "Alice's X" -> "alice's x". Same text, speaker and lexicon -> same entities, in text order.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date

from ..notes.clocks import MONTHS, WEEKDAYS, TimeRef, resolve
from ..notes.text import STOPWORDS
from .common_words import COMMON

KINDS: tuple[str, ...] = ("speaker", "name", "thing", "date", "number")
DETERMINERS = frozenset("the a an my our your his her their its".split())
_OWN = frozenset({"my", "our"})
# Nouns too vague to be a row on their own ("a lot", "the time").
STOP_NOUNS = frozenset(
    """lot lots bit thing things stuff time times way ways day days week weeks month months year
    years one ones kind sort couple few while moment minute minutes hour hours today tonight
    morning evening night weekend same other others""".split()
)
# Verbs and adverbs that end a noun phrase after its head ("the build passes now").
PHRASE_STOP = frozenset(
    """is are was were be been has have had does did do passes works fails runs breaks crashes
    went got made took gave came said told inside outside anytime super so very pretty quite
    still first now just already again also finally really even only never always too then
    there here today yesterday tomorrow soon later instead anyway though""".split()
)
# Words that say which, never what: a phrase of these alone is no row ("a second raised bed":
# the participle ends the phrase after "second"; "the first was better").
ORDINALS = frozenset(
    """first second third fourth fifth sixth seventh eighth ninth tenth last next latter
    former""".split()
)
# Particles of a phrasal verb: one ends the phrase, and so does the word before it, a verb
# ("the aphids come back", "the kids grow up", "the cat ran away").
PARTICLES = frozenset("back away around along up down out off over".split())
_TITLE_STOP = (
    frozenset(
        """i i'm i'll i've i'd hey hi hello wow oh ok okay yes no yeah thanks thank sure great
    awesome well so and but also haha lol omg congrats congratulations please sorry cool nice
    good amazing""".split()
    )
    | STOPWORDS
)
_WEEKDAY_MONTH = frozenset(WEEKDAYS + MONTHS)
_TOKEN = re.compile(r"[^\W_](?:[\w'’\-]*[^\W_])?|[.!?;:,\"()\[\]&/]")
_POSSESSIVE = re.compile(r"^(.+?)['’]s$")
_NUMBER = re.compile(r"(?<![\w.])\$?\d+(?:[.,]\d+)?%?(?!\w|[.,]\d)")


@dataclass(frozen=True)
class Entity:
    """One row of B: its normalised key, the text as first written, and its kind."""

    key: str
    text: str
    kind: str


def _fold(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().replace("’", "'").split())


def singular(word: str) -> str:
    """A plain English singular for the last word of a key ("kids" -> "kid", "class" stays)."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("sses", "shes", "ches", "xes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is", "'s")):
        return word[:-1]
    return word


def normalise(phrase: str, *, speaker: str = "", addressee: str = "") -> str:
    """The row key of a phrase: see the module docstring. "" when nothing is left."""
    written = [w.strip('.,!?;:"()[]') for w in phrase.split()]
    written = [w for w in written if w]
    # A capitalised last word with no determiner before it is a proper name ("Payments");
    # "The Vases" is a title-cased common noun.
    proper = (bool(written) and written[-1][:1].isupper()
              and _fold(written[0]) not in DETERMINERS)
    words = [w.strip('.,!?;:"()[]') for w in _fold(phrase).split()]
    words = [w for w in words if w]
    owner = ""
    if words and words[0] in _OWN and speaker:
        owner, words = _fold(speaker), words[1:]
    elif words and words[0] == "your" and addressee:
        owner, words = _fold(addressee), words[1:]
    elif words and words[0] in DETERMINERS:
        words = words[1:]
    if len(words) >= 2 and not owner:
        m = _POSSESSIVE.match(words[0])
        if m:
            owner, words = m.group(1), words[1:]
    if not words:
        return ""
    if not proper:
        words[-1] = singular(words[-1])
    core = " ".join(words)
    return f"{owner}'s {core}" if owner else core


def name_lexicon(
    texts: Iterable[str], speakers: Iterable[str] = (), names: Iterable[str] = ()
) -> frozenset[str]:
    """Casefolded words that the conversation shows to be names (module docstring).

    Speakers' names and the words of supplied capitalised `names`; capitalised words seen
    mid-sentence; capitalised sentence-initial words that are not common words and never
    appear in lower case in `texts`. A sentence-initial word counts as a name only if this
    lexicon holds it (or it starts a title-case run).
    """
    found = {_fold(s) for s in speakers}
    for n in names:
        for w in n.split():
            w = _POSSESSIVE.sub(r"\1", w.strip('.,!?;:"()[]'))
            if w[:1].isupper() and _fold(w) not in _TITLE_STOP:
                found.add(_fold(w))
    lower: set[str] = set()
    initial: set[str] = set()
    for text in texts:
        prev = "."
        for tok in _TOKEN.findall(text):
            base = _POSSESSIVE.sub(r"\1", tok)
            folded = _fold(base)
            if base[:1].islower():
                lower.add(folded)
            elif base[:1].isupper() and folded not in _TITLE_STOP and folded not in _WEEKDAY_MONTH:
                if prev not in '.!?"])':
                    found.add(folded)
                elif "'" not in folded and folded not in COMMON and not _verbal(folded):
                    initial.add(folded)
            prev = tok
    return frozenset(found | (initial - lower))


def _verbal(folded: str) -> bool:
    """A gerund or past form ("Pinning", "Learned"): no name on sentence-initial evidence."""
    return len(folded) > 5 and folded.endswith(("ing", "ed"))


def _is_name_word(tok: str, initial: bool, lexicon: frozenset[str]) -> bool:
    base = _POSSESSIVE.sub(r"\1", tok)
    folded = _fold(base)
    if not base[:1].isupper() or folded in _TITLE_STOP or folded in _WEEKDAY_MONTH:
        return False
    return folded in lexicon or not initial


def extract(
    text: str,
    *,
    speaker: str,
    addressee: str = "",
    lexicon: frozenset[str] = frozenset(),
    anchor: date | None = None,
    speakers: Sequence[str] = (),
    refs: Sequence[TimeRef] | None = None,
) -> tuple[Entity, ...]:
    """The entities of one turn, deduplicated by key, in order of first appearance.

    `anchor` (the turn's date) enables date entities; `refs` passes the turn's expressions
    already resolved against it (`clocks.resolve(text, anchor)`), so they are not resolved
    twice. `speakers` marks names that are speakers (kind "speaker": hubs that collisions
    ignore).
    """
    if refs is None:
        refs = resolve(text, anchor) if anchor is not None else ()
    found = list(date_entities(refs))
    spoken = {_fold(s) for s in speakers}
    rest = text
    for ref in refs:
        rest = rest.replace(ref.expr, " , ", 1)
    toks = _TOKEN.findall(rest)
    i = 0
    prev = "."
    while i < len(toks):
        tok = toks[i]
        initial = prev in '.!?"()]'
        low = _fold(tok)
        run = (initial and not _is_name_word(tok, True, lexicon) and i + 1 < len(toks)
               and _starts_run(tok) and _is_name_word(toks[i + 1], False, lexicon))
        if run or _is_name_word(tok, initial, lexicon):
            j = i
            parts: list[str] = []
            while j < len(toks) and (
                (run and j == i) or _is_name_word(toks[j], initial and j == i, lexicon)
            ):
                parts.append(toks[j])
                if _POSSESSIVE.match(toks[j]):
                    break
                j += 1
            name = " ".join(_POSSESSIVE.sub(r"\1", p) for p in parts)
            key = _fold(name)
            found.append(Entity(key, name, "speaker" if key in spoken else "name"))
            if _POSSESSIVE.match(parts[-1]):
                phrase = _phrase(toks, i + len(parts))
                if phrase:
                    full = f"{key}'s {' '.join(phrase)}"
                    found.append(Entity(normalise(full), f"{name}'s {' '.join(phrase)}", "thing"))
            i += len(parts)
            prev = parts[-1]
            continue
        if low in DETERMINERS:
            phrase = _phrase(toks, i + 1)
            if phrase:
                written = f"{tok} {' '.join(phrase)}"
                key = normalise(written, speaker=speaker, addressee=addressee)
                if key:
                    found.append(Entity(key, written, "thing"))
                # Capitalised words inside the phrase are still read as names.
                i += 1
                prev = tok
                continue
        i += 1
        prev = tok
    for m in _NUMBER.finditer(rest):
        found.append(Entity(m.group(0).replace(",", ""), m.group(0), "number"))
    return dedupe(found)


def _starts_run(tok: str) -> bool:
    """A sentence-initial capitalised word that may open a title-case run."""
    base = _POSSESSIVE.sub(r"\1", tok)
    folded = _fold(base)
    return (base[:1].isupper() and "'" not in folded and folded not in _TITLE_STOP
            and folded not in COMMON and folded not in _WEEKDAY_MONTH and not _verbal(folded))


def _phrase(toks: Sequence[str], start: int) -> list[str]:
    """Up to three content words from `start`; [] if the head is a vague noun."""
    words: list[str] = []
    lower_seen = False
    for at, tok in enumerate(toks[start : start + 3], start):
        low = _fold(tok)
        if not tok[:1].isalpha() or low in STOPWORDS or low in _WEEKDAY_MONTH:
            break
        if tok[:1].isupper() and lower_seen:  # "my teacher Carla": the name ends the phrase
            break
        if words and (low in PHRASE_STOP or (len(low) > 4 and low.endswith(("ed", "ing")))):
            break  # "the build still failed", "the build passes now": a verb or adverb ends it
        if words and (low in PARTICLES or (at + 1 < len(toks)
                                           and _fold(toks[at + 1]) in PARTICLES)):
            break  # "the aphids come back": a phrasal verb ends it
        lower_seen = lower_seen or tok[:1].islower()
        words.append(low)
        if low in STOP_NOUNS:  # "the time flew": a vague noun ends the phrase
            break
    while words and (words[-1] in STOP_NOUNS or words[-1] in ORDINALS):
        words.pop()
    return words


def date_entities(refs: Iterable[TimeRef]) -> tuple[Entity, ...]:
    """One "date" entity per resolved expression, keyed by its absolute label."""
    return tuple(Entity(r.label, r.expr, "date") for r in refs)


def dedupe(entities: Iterable[Entity]) -> tuple[Entity, ...]:
    """First occurrence of each key wins; order of first appearance kept."""
    seen: dict[str, Entity] = {}
    for e in entities:
        if e.key and e.key not in seen:
            seen[e.key] = e
    return tuple(seen.values())


def supplied(
    names: Sequence[str], *, speaker: str, addressee: str = "", speakers: Sequence[str] = ()
) -> tuple[Entity, ...]:
    """Entities given by the caller for a turn, normalised by the same rules."""
    spoken = {_fold(s) for s in speakers}
    out = []
    for n in names:
        key = normalise(n, speaker=speaker, addressee=addressee)
        if key in spoken:
            kind = "speaker"
        elif "'s " in key or not n.strip()[:1].isupper():
            kind = "thing"  # "Alice's vase" is a thing owned by a person, never a person
        else:
            kind = "name"
        out.append(Entity(key, n, kind))
    return dedupe(out)
