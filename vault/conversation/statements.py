"""Deterministic statement extraction: what a turn asserts, as (subject, key, value) triples.

No model is asked. A turn is cut into sentences (questions are skipped: they state nothing),
sentences into clauses (at , ; : and dashes); date expressions are removed first ("I moved to
Rome last month" states where, `clocks` states when). In each clause the first pattern that
matches wins (table below, in order); a clause hedged before the match ("if", "unless",
"maybe", "perhaps", "probably", "might", "wish", "hope", "would", "should", "could",
"whether") states nothing.

=========================================  ===============  ==========  ======================
pattern (first person: subject = speaker)  key              kind        typed relation
=========================================  ===============  ==========  ======================
I don't like/love/enjoy X                  opinion:X        preference  -     (value dislikes)
I like/love/enjoy/adore/prefer X           opinion:X        preference  -     (value likes)
I hate/dislike/detest/can't stand X        opinion:X        preference  -     (value dislikes)
I'm a (big) fan of X                       opinion:X        preference  -     (value likes)
my favourite T is X                        favourite:T      preference  -
I live in / moved to / relocated to X      lives_in         fact        -
I work at/for X, I got a job at X          works_at         fact        -
my boss/manager is X, X is my boss         reports_to       relation    reports_to
my T is X, X is my T                       role:T           fact        -
I'm a/an X                                 is_a             fact        -
S works on / owns / uses / depends on /    works_on, ...    relation    the same name
  relies on / reports to / is affected by
  / replaces / supersedes X (S = "I" or a
  phrase of at most 4 words opening the
  clause)
I will / I'll / I'm going to / I plan to X commitment       commitment  -
=========================================  ===============  ==========  ======================

Objects are cut at the first clause word ("and", "but", "because", "which", ...), trailing
fillers ("now", "too", "a lot", ...) are dropped, and an object that is a pronoun, empty, or
longer than MAX_OBJECT_WORDS words is refused (precision over recall). Values are normalised
like entity rows (`entities.normalise`: casefold, determiners dropped, "my X" -> "alice's x"),
commitments only casefolded. Words quoted in the first person ('Al said "I like tea."') are
someone else's and state nothing of the speaker. A commitment loses leading and trailing
adverbs ("definitely", "always", "just", ...) and must keep two words ("I'll always cherish"
states nothing); a social formula ("I'll let you know", "keep you posted", "do my best", "give
it a try", ...) is no commitment. Same text and speakers -> same statements, in text order.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..notes.clocks import untimed
from .entities import normalise

MAX_OBJECT_WORDS = 6
MAX_COMMITMENT_WORDS = 10
FUNCTIONAL_ROLES = frozenset(
    "name wife husband partner spouse girlfriend boyfriend birthday job age hometown".split()
)
_BOSS = frozenset({"boss", "manager", "supervisor"})
_ROLE_STOP = frozenset(
    """point plan guess problem question goal dream hope advice idea answer opinion thought
    bad fault pleasure turn favourite favorite own way life day week time first last
    mistake""".split()
)
_PRONOUNS = frozenset(
    """it that this them you him her those these everything something anything nothing all
    one what how when why where which who whatever there here us me myself yourself""".split()
)
_LEAD = frozenset(
    """oh yeah yes well and but so also actually honestly now hey wow haha lol plus anyway btw
    ok okay um hmm then still really""".split()
)
_PREPOSITIONS = frozenset("of to in on at for with from by about into like".split())
_NOT_SUBJECT = _PRONOUNS | frozenset(
    "i we they he she it's my your our their his its can could will would should must to".split())
_DETERMINERS = frozenset("a an the my our your his her their this that some".split())
_COPULAS = frozenset("is are was were am be been has had".split())
_NOT_A = frozenset("bit little lot tad huge big great".split())
_RELATIVE = frozenset("what which whatever whom".split())
_REFUSED_ACTS = frozenset("not never be say admit tell have".split())
_HEDGES = frozenset(
    "if unless maybe perhaps probably might wish hope would should could whether".split())
# Social formulas that promise nothing about the speaker's life (issue 16: read in the
# LoCoMo fact sample, where they were a third of all commitments; the list is generic chat).
_PLEASANTRY = re.compile(
    r"^(?:let you know|keep you (?:posted|updated|in the loop)|(?:do|try) my best|"
    r"give (?:it|this|that|these) a (?:try|go|shot)|check (?:it|this|that) out|"
    r"(?:stay|get|keep) in touch|catch up|hit you up|reach out|keep my fingers crossed|"
    r"keep (?:that|it|this) in mind|make sure to keep you)\b")
_COMMIT_ADVERBS = frozenset(
    "always definitely surely certainly just really totally also soon".split())
_FILLERS = (
    "a lot", "so much", "very much", "these days", "right now", "as well", "now", "too",
    "lately", "anymore", "though", "soon", "again", "also", "already", "really", "a bit",
)
_CUT = re.compile(
    r"\s(?:and|but|because|since|so|when|while|which|who|that|if|though|although|as|until|"
    r"before|after|where|cause|cuz|lol|haha|over|rather than|instead of|like|such as|"
    r"especially|including)\s.*$"
)
_ADV = r"(?:(?:really|absolutely|totally|just|also|still|actually|truly|so|do|now|definitely) )*"
_REL_VERBS = {
    "works on": "works_on", "work on": "works_on", "is working on": "works_on",
    "am working on": "works_on", "owns": "owns", "own": "owns", "uses": "uses", "use": "uses",
    "am using": "uses", "depends on": "depends_on", "depend on": "depends_on",
    "relies on": "depends_on", "rely on": "depends_on", "reports to": "reports_to",
    "report to": "reports_to", "is affected by": "affected_by", "was affected by": "affected_by",
    "replaces": "supersedes", "replaced": "supersedes", "supersedes": "supersedes",
    "superseded": "supersedes",
}
_CONTRACTIONS = (
    ("i'm", "i am"), ("i'll", "i will"), ("i've", "i have"), ("i'd", "i would"),
    ("can't", "cannot"), ("don't", "do not"), ("didn't", "did not"), ("won't", "will not"),
    ("gonna", "going to"),
)
_VERBS = "|".join(sorted(map(re.escape, _REL_VERBS), key=lambda v: (-len(v), v)))
# (name, regex) over a folded clause with contractions expanded; the first match wins.
_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (n, re.compile(p)) for n, p in (
        ("dislike", r"\bi (?:do not|did not|never) (?:really )?(?:like|love|enjoy) (?P<obj>.+)"),
        ("like", r"\bi " + _ADV + r"(?:like|love|enjoy|adore|prefer) (?P<obj>.+)"),
        ("dislike", r"\bi " + _ADV + r"(?:hate|dislike|detest|cannot stand) (?P<obj>.+)"),
        ("like", r"\bi am (?:a )?(?:big |huge |great )?fan of (?P<obj>.+)"),
        ("like", r"\bi (?:am|have been) " + _ADV + r"(?:into|passionate about|enjoying|"
                 r"loving) (?P<obj>.+)"),
        ("favourite", r"\bmy (?:absolute |all-time )?favou?rite (?P<topic>[\w'-]+(?: [\w'-]+)?)"
                      r" (?:is|are) (?P<obj>.+)"),
        ("lives_in", r"\bi (?:" + _ADV + r"live|am living|have lived|(?:just |recently )?"
                     r"(?:moved|relocated)|have (?:just )?moved) (?:in|to) (?P<obj>.+)"),
        ("works_at", r"\bi (?:" + _ADV + r"work|am working|started working|got a job|"
                     r"have a job) (?:at|for) (?P<obj>.+)"),
        ("rel", r"^(?P<subj>i|[\w'-]+(?: [\w'-]+){0,3}) " + _ADV + "(?P<verb>" + _VERBS
                + r") (?P<obj>.+)$"),
        ("my_t_is", r"^my (?P<topic>[\w'-]+) (?:is|'s) (?P<obj>.+)$"),
        ("x_is_my", r"^(?P<obj>[\w'-]+(?: [\w'-]+){0,2}) is my (?P<topic>[\w'-]+)$"),
        ("is_a", r"\bi am (?:a|an) (?P<obj>.+)"),
        ("commitment", r"\bi (?:will|am going to|plan to|promise to|intend to) (?P<obj>.+)"),
    )
)


@dataclass(frozen=True)
class Statement:
    """One assertion of a turn: subject and value are normalised keys; `said` is the clause."""

    subject: str
    key: str
    value: str
    kind: str  # "preference" | "fact" | "relation" | "commitment"
    relation: str | None
    first_person: bool
    said: str

    @property
    def predicate(self) -> str:
        return self.key.split(":", 1)[0]

    @property
    def topic(self) -> str:
        return self.key.split(":", 1)[1] if ":" in self.key else ""


def functional(key: str) -> bool:
    """Keys that hold one value at a time; two values for one subject is a conflict."""
    pred, _, topic = key.partition(":")
    if pred == "role":
        return topic in FUNCTIONAL_ROLES
    return pred in {"opinion", "favourite", "lives_in", "works_at", "reports_to"}


def _fold(text: str) -> str:
    words = text.replace("’", "'").replace("‘", "'").casefold().split()
    out = " ".join(words)
    for short, long in _CONTRACTIONS:
        out = re.sub(rf"\b{re.escape(short)}\b", long, out)
    return out


def _strip_lead(clause: str) -> str:
    words = clause.split()
    while words and words[0].strip("!,.") in _LEAD:
        words = words[1:]
    return " ".join(words)


def _object(raw: str, limit: int, commitment: bool = False) -> str | None:
    text = _CUT.sub("", f" {raw.strip()} ").strip(" .!\"'")
    changed = True
    while changed:
        changed = False
        for f in _FILLERS:
            if text.endswith(" " + f) or text == f:
                text, changed = text[: len(text) - len(f)].rstrip(), True
    words = text.split()
    if not commitment and words and words[0] == "to":
        words = words[1:]
    if commitment:  # "keep working at it" -> "keep working"; "a mug just" -> "a mug"
        while len(words) > 1 and (words[-1] in _PRONOUNS or words[-1] in _PREPOSITIONS
                                  or words[-1] in _COMMIT_ADVERBS):
            words = words[:-1]
        while words and words[0] in _COMMIT_ADVERBS:  # "definitely keep" -> "keep"
            words = words[1:]
        if _PLEASANTRY.match(" ".join(words)):
            return None
    if not words or len(words) > limit or words[0] in _PRONOUNS or words[-1] in _PREPOSITIONS:
        return None
    if words[0] in _COPULAS:
        return None
    # "I will do that", "I'm going to the gym" (a place, not an act), "I will not": no
    if commitment and (len(words) < 2 or words[0] in _DETERMINERS or words[0] in _REFUSED_ACTS):
        return None
    return " ".join(words)


# Quoted words in the first person ('Al said "I like tea."'): someone else's words, no
# statement of the speaker's (CONV5: they were the quoting speaker's fact, "bo likes tea")
_QUOTED_FIRST_PERSON = re.compile(
    r"[\"“„«]\s*(?:i|i'm|i'll|i've|i'd|im|my|me|we|we're|our)\b[^\"“”„«»]*(?:[\"”»“]|$)",
    re.I)


def _clauses(text: str) -> list[str]:
    text = text.replace("’", "'").replace("‘", "'")
    text = untimed(_QUOTED_FIRST_PERSON.sub(" . ", text), names=False)
    out: list[str] = []
    for sentence in re.split(r"(?<=[.!?])\s+|\n+", text):
        sentence = sentence.strip()
        if not sentence or sentence.endswith("?"):
            continue
        for clause in re.split(r"[,;:()]|\s[-–—]+\s|!|\.(?:\s|$)", sentence):
            folded = _strip_lead(_fold(clause))
            if folded:
                out.append(folded)
    return out


def _one(clause: str, speaker: str, addressee: str, caps: frozenset[str]) -> Statement | None:
    for name, pat in _PATTERNS:
        m = pat.search(clause)
        if m is None or (_HEDGES | _RELATIVE) & set(clause[: m.start()].split()):
            continue
        st = _statement(name, m, clause, speaker, addressee, caps)
        if st is not None:
            return st
    return None


def _statement(name: str, m: re.Match[str], clause: str, speaker: str, addressee: str,
               caps: frozenset[str]) -> Statement | None:
    me = normalise(speaker)
    is_commit = name == "commitment"
    obj = _object(m.group("obj"), MAX_COMMITMENT_WORDS if is_commit else MAX_OBJECT_WORDS,
                  is_commit)
    if obj is None:
        return None
    first = obj.split()[0]
    if name in ("my_t_is", "x_is_my") and first not in caps and first not in {"a", "an", "the"}:
        return None  # "my job is stressful": only names and determined nouns are values
    if name == "is_a" and (first in _NOT_A or "fan" in obj.split()):
        return None
    value = obj if is_commit else normalise(obj, speaker=speaker, addressee=addressee)
    if not value:
        return None
    topic = m.groupdict().get("topic") or ""
    if name in ("like", "dislike"):
        return Statement(me, f"opinion:{value}", name + "s", "preference", None, True, clause)
    if name == "favourite":
        return Statement(me, f"favourite:{normalise(topic)}", value, "preference", None,
                         True, clause)
    if name in ("lives_in", "works_at", "is_a"):
        return Statement(me, name, value, "fact", None, True, clause)
    if name in ("my_t_is", "x_is_my"):
        if topic in _ROLE_STOP:
            return None
        if topic in _BOSS:
            return Statement(me, "reports_to", value, "relation", "reports_to", True, clause)
        return Statement(me, f"role:{normalise(topic)}", value, "fact", None, True, clause)
    if name == "rel":
        subj = m.group("subj")
        if subj != "i" and set(subj.split()) & _NOT_SUBJECT:
            return None
        rel = _REL_VERBS[m.group("verb")]
        subject = me if subj == "i" else normalise(subj, speaker=speaker, addressee=addressee)
        if not subject:
            return None
        return Statement(subject, rel, value, "relation", rel, subj == "i", clause)
    return Statement(me, "commitment", value, "commitment", None, True, clause)


def extract_statements(
    text: str, speaker: str, speakers: Sequence[str] = ()
) -> tuple[Statement, ...]:
    """Every statement of one turn said by `speaker`, in text order (at most one per clause)."""
    others = [s for s in speakers if s != speaker]
    addressee = others[0] if len(others) == 1 else ""
    found: list[Statement] = []
    caps = frozenset(_fold(w) for w in re.findall(r"(?<![\w'])[A-Z][\w'-]*", text))
    for clause in _clauses(text):
        st = _one(clause, speaker, addressee, caps)
        if st is not None and st not in found:
            found.append(st)
    return tuple(found)
