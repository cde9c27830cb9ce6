"""Reports a task's turn makes without a verb of success or failure, and goals a person
states about their own experience, from a spaCy parse (the `nlp` extra); used by
`parsed_episodes`.

- `completion`: a thing said done ("Migration done", "the upgrade is complete"): a
  participle or adjective of completion (done, complete, finished) whose subject is a thing
  (not a person: "I'm done" is no result), unnegated. Active past ("the report finished")
  is an event, not a verdict on the task; "done" is never an active past, but "has done
  wonders" (an object) and "get stuff done" (a modifier) say nothing done.
- `comparative`: better / worse said against an earlier state ("much better than before",
  "worse than ever", "better now") or as a verbless fragment ("Much better."): +1 / -1,
  else 0. Only the comparatives of good and bad themselves: whether "faster" is good
  depends on the thing.
- `stuck_speaker`: the speaker stuck ("I'm stuck with Friday"): a failure when no success
  follows.
- `lapse`: the speaker keeps doing what no one wants ("I keep forgetting the words", "we
  keep losing data"): keep + V-ing of a verb of malfunction or of a lapse (forget, lose,
  miss ...). "I keep practising" is persistence, no problem.
- `still_after_act`: "I moved the domain and my friends still see the old site": a clause
  with "still", unnegated and not good, hung on the speaker's own past act: the act has not
  taken effect yet.
Same parse -> same answers.
"""

from __future__ import annotations

from .parsed_polarity import PROBLEM, Token, has_child, negated, state, subject, word

_COMPLETE = frozenset({"done", "complete", "completed", "finished"})
_FIRST = frozenset({"i", "we"})
_PERSONS = frozenset({"i", "we", "you", "he", "she", "they", "me", "us", "him", "them"})
_EARLIER = frozenset({"before", "ever", "then", "yesterday", "earlier", "previously",
                      "last"})
# Lapses of a person: kept doing, they are a problem ("I keep forgetting", "keep losing").
LAPSE = frozenset("""forget lose miss oversleep mess_up mix_up fall_behind slip trip
    procrastinate""".split())


def _first(tok: Token | None) -> bool:
    return tok is not None and word(tok) in _FIRST


def completion(tok: Token) -> bool:
    """`tok` says a thing is done (module docstring)."""
    if word(tok) not in _COMPLETE or negated(tok) or (
            tok.tag_ not in ("VBN", "JJ") and word(tok) != "done"):  # "Import done" as VBD
        return False
    if tok.dep_ in ("acl", "amod", "relcl") or any(c.dep_ == "dobj" for c in tok.children):
        return False  # "get stuff done", "it's done wonders": no thing said done
    subj = subject(tok)
    if subj is None and tok.dep_ == "acomp":
        subj = subject(tok.head)
    if subj is None or word(subj) in _PERSONS:
        return False
    return subj.pos_ != "PRON" or word(subj) in ("it", "that", "this")


def comparative(tok: Token) -> int:
    """+1 / -1 for better / worse said against before, now or as a fragment, else 0."""
    if tok.tag_ not in ("JJR", "RBR") or negated(tok):
        return 0
    lem = str(tok.lemma_).casefold()
    sign = 1 if lem in ("good", "well") else -1 if lem in ("bad", "badly", "ill") or word(
        tok) == "worse" else 0
    if not sign:
        return 0
    than = [c for c in tok.children if word(c) == "than"]
    earlier = any(word(g) in _EARLIER or g.tag_ in ("VBD",) for c in than for g in c.subtree)
    fragment = tok.dep_ == "ROOT" and not any(t.pos_ in ("VERB", "AUX") for t in tok.sent)
    now = has_child(tok, "now") or (tok.dep_ in ("acomp", "advmod") and has_child(tok.head, "now"))
    return sign if earlier or fragment or now else 0


def stuck_speaker(tok: Token) -> bool:
    """"I'm stuck (with ...)", "we're stuck": the speaker stuck, unnegated."""
    return word(tok) == "stuck" and _first(subject(tok)) and not negated(tok)


def lapse(tok: Token) -> str | None:
    """The lapse the speaker keeps making (module docstring): its lemma, or None."""
    if str(tok.lemma_).casefold() != "keep" or not _first(subject(tok)) or negated(tok):
        return None
    for c in tok.children:
        if c.dep_ == "xcomp" and c.tag_ == "VBG":
            lem = str(c.lemma_).casefold()
            return lem if lem in LAPSE or lem in PROBLEM else None
    return None


def still_after_act(tok: Token) -> bool:
    """A "still" clause on the speaker's own past act (module docstring)."""
    if not has_child(tok, "still") or negated(tok) or state(tok) > 0:
        return False
    head = tok.head
    return tok.dep_ in ("conj", "advcl") and head.tag_ == "VBD" and _first(subject(head))
