"""Polarity of a predicate in a spaCy parse (the `nlp` extra): the reading that
`parsed_episodes` builds goals and outcomes on.

A *predicate* is a verb, or a copula / adjective heading a clause. For one predicate this
module answers, from dependency relations and lemmas only:

- `negated`: a `neg` child ("didn't", "never", "not"), a hedge that denies most of it
  ("hardly", "barely", "scarcely"), or "no longer";
- `hypothetical`: not said as happened: a modal without a negation ("will", "should"; "won't"
  and "can't" *are* reports), an infinitive ("to pass"), a condition ("if", "whether",
  "unless"), a question for a way ("how do I"), or any of these on a verb above it through
  xcomp / ccomp / advcl / conj / relcl / acl, or under a verb of intent (want, need, try,
  hope, plan ...); a clause (a ccomp with no "if" / "that") said before the modal's clause keeps
  its own reading ("It gets 150 Mbit/s now, my daughter can finally call");
- `imperative`: a base-form verb heading its clause with no subject and no auxiliary
  ("Pin the compiler"): an instruction, not a result;
- `subject`: its nsubj / nsubjpass, inherited through conj, or the noun an acl hangs on;
  `person` says whether that subject is a person pronoun (I, we, you, he, she, they);
- `lemma_key`: the lemma, with its particle ("give_up", "come_back", "time_out");
- `state`: the polarity of its complements (acomp / attr / oprd / advmod and their conj):
  +1 for a good state ("healthy", "fine", "properly"), -1 for a bad one ("slow", "broken",
  "worse", "too" + adjective), 0 otherwise.

The lexicons are small and general (verbs of malfunction, of success, states that are good or
bad for any thing): what a sentence says of a thing comes from the parse, not from phrasings.
Same parse -> same answers.
"""

from __future__ import annotations

from typing import Any

Token = Any  # a spaCy Token (spaCy is an optional dependency: no import at module level)

# Verbs that report a task done ("it worked", "that fixed it", "tests pass", "goal achieved").
SUCCESS = frozenset("""work fix solve resolve pass succeed help compile achieve sort_out
    manage go_through come_through accomplish""".split())
# Verbs of a thing going wrong ("fails", "crashed", "times out", "keeps dropping").
PROBLEM = frozenset("""fail break crash drop stick hang freeze leak error crackle squeak reject
    refuse stall lag glitch corrupt overheat reboot drip flicker stutter overflow wobble die
    expire complain time_out run_out fill_up break_down error_out lock_up shut_down
    cut_out drop_out fade wash_out blur bounce hurt ache itch swell bleed clog jam
    disconnect""".split())
# Acts of the speaker that end a task unsolved ("we gave up", "we rolled it back").
GAVE_UP = frozenset("give_up roll_back abandon".split())
# Verbs of a problem coming back ("the squeak came back", "the outage happened again").
RECUR = frozenset("come_back return reappear recur persist".split())
# Nouns that name a problem ("no errors", "same error", "an outage").
PROBLEM_NOUNS = frozenset("""error problem issue bug conflict crash failure outage warning
    exception complaint leak glitch noise pain""".split())
GOOD = frozenset("""healthy green stable clean cleanly proper properly smooth smoothly fine
    right correct correctly safe normal instantly""".split())
BAD = frozenset("""slow broken wrong missing dead empty blurry corrupt corrupted miserable
    garbled blank choppy unreadable late stuck worse flat unusable down dense pale
    unstable red offline unresponsive unreachable""".split())
# Mild good states: a verdict only with "now" or "again" ("we're good now", "all OK
# again"; not "it was good to see you").
MILD = frozenset("good ok okay alright better".split())
# Verbs of the mind: "I don't know", "it doesn't matter" deny nothing of a thing.
MIND = frozenset("""know think mind care like want need understand remember believe expect
    worry mean see agree feel be wait imagine forget matter seem""".split())
INTENT = frozenset("want need try hope plan wish aim intend attempt".split())
PERSONS = frozenset("i we you he she they me us him them".split())
_HEDGES = frozenset({"hardly", "barely", "scarcely", "never"})
_NOBODY = frozenset({"nobody", "nothing", "none", "noone", "neither"})
_CONDITIONS = frozenset({"if", "whether", "unless", "until", "once", "before"})
_UP = frozenset({"xcomp", "ccomp", "advcl", "conj", "relcl", "acl", "pcomp"})
_COMPLEMENTS = frozenset({"acomp", "attr", "oprd", "advmod", "advcl", "xcomp"})


def word(tok: Token) -> str:
    """The token's folded text."""
    return str(tok.text).replace("’", "'").casefold()


_PARTICLES = frozenset({"out", "up", "down", "back", "off", "through"})


def lemma_key(tok: Token) -> str:
    """The lemma, folded, with its particle: "gave up" -> "give_up"; a particle the parser
    took for a preposition counts when it follows the verb ("runs out of disk")."""
    lem = str(tok.lemma_).casefold()
    prt = [word(c) for c in tok.children if c.dep_ == "prt" or (
        c.i == tok.i + 1 and c.dep_ in ("prep", "advmod") and word(c) in _PARTICLES)]
    return f"{lem}_{prt[0]}" if prt else lem


def negated(tok: Token) -> bool:
    """A `neg` child, a denying hedge or "no longer" on `tok` (module docstring)."""
    for c in tok.children:
        if c.dep_ == "neg" or word(c) in _HEDGES:
            return True
        if c.dep_ in ("nsubj", "nsubjpass") and (word(c) in _NOBODY or any(
                word(g) == "no" for g in c.children if g.dep_ == "det")):
            return True  # "nothing arrives", "no email gets through"
        if word(c) == "longer" and any(word(g) == "no" for g in c.children):
            return True
    return False


def _modal(tok: Token) -> bool:
    """An unnegated modal, an infinitive "to" or a condition on `tok` itself."""
    kids = list(tok.children)
    if any(c.dep_ == "mark" and word(c) in _CONDITIONS for c in kids):
        return True
    if any(c.dep_ == "advmod" and word(c) == "how" for c in kids):
        return True
    for c in kids:
        if c.dep_ == "aux" and (c.tag_ == "MD" or word(c) == "to"):
            if word(c) in ("can", "ca", "could") and has_child(tok, "now", "again"):
                continue  # an ability said as it is now: "everyone can open it again"
            if not negated(tok) or word(c) == "to":
                return True
    return False


def hypothetical(tok: Token) -> bool:
    """Not said as happened (module docstring)."""
    cur, prev = tok, tok
    for _ in range(6):
        if _modal(cur):
            return True
        # under a verb of intent ("I want the build to pass"); a clause said before the
        # verb is a statement of its own ("The page is slow, I need to find out why")
        if cur.i != tok.i and str(cur.lemma_).casefold() in INTENT and prev.i > cur.i:
            return True
        if cur.dep_ not in _UP or cur.head.i == cur.i:
            return False
        if cur.dep_ == "ccomp" and cur.i < cur.head.i and not any(
                c.dep_ == "mark" for c in cur.children):
            return False  # a clause said before the next one's modal is its own statement
        prev, cur = cur, cur.head
    return False


def subject(tok: Token) -> Token | None:
    """The subject of predicate `tok` (module docstring), or None."""
    cur, joined = tok, False
    for _ in range(5):
        for c in cur.children:
            if c.dep_ in ("nsubj", "nsubjpass", "expl"):
                return c
        if cur.dep_ == "acl" and cur.head.pos_ in ("NOUN", "PROPN"):
            return cur.head
        if cur.dep_ == "ROOT" and _verb_as_noun(cur):
            return next(c for c in cur.children if c.dep_ == "compound")
        joined = joined or cur.dep_ == "conj"
        # a conjunct takes its head's subject, through a noun the parser hung it on
        # ("smells like nail polish and hardly bubbles")
        if not joined or cur.dep_ not in ("conj", "pobj", "prep") or cur.head.i == cur.i:
            return None
        cur = cur.head
    return None


def is_person(tok: Token | None) -> bool:
    """True when `tok` is a person pronoun ("I", "we", "you", "they" ...)."""
    return tok is not None and tok.pos_ == "PRON" and word(tok) in PERSONS


def imperative(tok: Token) -> bool:
    """A base-form verb heading its clause, with no subject and no auxiliary."""
    if tok.tag_ != "VB" or tok.dep_ not in ("ROOT", "conj"):
        return False
    if tok.dep_ == "conj" and not imperative(tok.head):
        return False
    return subject(tok) is None and not any(c.dep_ in ("aux", "auxpass") for c in tok.children)


def _state_word(tok: Token) -> int:
    w, lem = word(tok), str(tok.lemma_).casefold()
    if w in BAD or lem in BAD:
        return -1
    if (w in GOOD or lem in GOOD) and tok.tag_ not in ("JJR", "RBR"):
        return 1
    if any(word(c) == "too" for c in tok.children) and tok.pos_ == "ADJ":
        return -1
    return 0


def state(tok: Token) -> int:
    """Polarity of the complements of predicate `tok` (module docstring), the last said."""
    found = _state_word(tok) if tok.pos_ in ("ADJ", "ADV") else 0
    for c in tok.children:
        if c.dep_ in ("dobj", "pobj", "prep", "attr"):  # "shows empty boxes", "a dead end"
            for g in c.subtree:
                if g.dep_ == "amod" and g.head.dep_ in ("dobj", "pobj", "attr") and _state_word(
                        g) and (c.dep_ != "attr" or _state_word(g) < 0):
                    found = _state_word(g)  # an attr only for the worse: "a dead end"
        if c.dep_ in _COMPLEMENTS and c.pos_ in ("ADJ", "ADV", "VERB", "NOUN"):
            s = _state_word(c) or next((_state_word(g) for g in c.children
                                        if g.dep_ == "conj" and _state_word(g)), 0)
            if s and negated(c):
                s = -s
            found = s or found
    return found


def has_child(tok: Token, *words: str) -> bool:
    """True when a child of `tok` (or of one of its complements) is one of `words`."""
    for c in tok.children:
        if word(c) in words:
            return True
        if c.dep_ in _COMPLEMENTS and any(word(g) in words for g in c.children):
            return True
    return False


def nouns(tok: Token) -> frozenset[str]:
    """The lemmas of the nouns in the subtree of `tok` (its compounds included)."""
    return frozenset(str(t.lemma_).casefold() for t in tok.subtree
                     if t.pos_ in ("NOUN", "PROPN"))


def problem_noun(tok: Token) -> bool:
    """A noun naming a problem ("an error", "a TypeError", "an issue")."""
    return tok.pos_ in ("NOUN", "PROPN") and (str(tok.lemma_).casefold() in PROBLEM_NOUNS
                                              or word(tok).endswith(("error", "exception")))


def _verb_as_noun(tok: Token) -> bool:
    """"The dishwasher leaks from the door" parsed as one noun phrase: a plural root noun
    with a compound, in a sentence with no verb."""
    return tok.tag_ == "NNS" and any(c.dep_ == "compound" for c in tok.children) and not any(
        t.pos_ in ("VERB", "AUX") for t in tok.sent)


def predicates(sent: Any) -> list[Token]:
    """The predicates of a sentence, in text order: verbs that are not used as adjectives
    or nouns, copulas and adjectives heading a clause."""
    return [t for t in sent if _is_predicate(t)]


def _is_predicate(t: Token) -> bool:
    if t.pos_ in ("NOUN", "PROPN"):  # "The tap drips", "Opens instantly now": verbs as nouns
        return t.dep_ == "ROOT" and (any(c.dep_ in ("nsubj", "advmod") for c in t.children)
                                     or _verb_as_noun(t))
    if t.pos_ == "VERB":
        return t.dep_ not in ("amod", "compound", "aux", "auxpass")
    if t.pos_ == "AUX":
        return t.dep_ in ("ROOT", "conj", "ccomp", "advcl", "relcl")
    return t.pos_ in ("ADJ", "ADV") and t.dep_ in ("ROOT", "conj") and t.head.pos_ not in (
        "NOUN", "PROPN")
