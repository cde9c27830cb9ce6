"""Outcomes of a task, read at the level of lemmas: "worked", "works", "fixed", "sorted it",
"did the trick", "went through", "running and healthy now" / "still failed", "gave up",
"still times out", "didn't help" — not a list of surface strings.

A turn is cut into clauses (sentences, then at , ; : and dashes); questions state no outcome.
In a clause, each word is mapped to a lemma key (`task_words.lemma`: a rules lemmatiser, no
model). Lemma classes (`task_words`): success (work, fix, solve, sort, pass, succeed,
resolve, compile, help), failure (fail, break, crash), problems (drop, stick, hang, freeze,
time out, leak ...), good states (healthy, green, stable, cleanly, properly, smoothly) and
bad states (worse, slow, broken, wrong, down, unusable ...). A word
counts when it reports a result, not an intent or an activity:

- not after an intent or modal word in the clause ("to", "trying", "need", "want", "should",
  "will", "would", "could", "might", "can", "if", "hope", "let's", "please", "how"):
  "get the build to pass" is the goal, not its outcome;
- not a clause-opening base form ("Fix the seed as well.": an instruction), nor an -ing
  form right after a determiner ("compare a failing log with a passing one");
- "work" not followed by an activity preposition after a person ("I'm working on the
  parser", "I work at"); "helped" only right after "that", "it", "this", "which"; "work"
  only as "works"/"worked" or "it's working", unless negated ("doesn't work");
- negated by "not", "n't", "never", "no longer", "still not" in the three words before it: a
  negated success is a failure ("didn't work", "still not fixed"), a negated problem a
  success ("no longer drops", "hasn't crashed since").

Phrases: "did the trick", "that did it", "went through", "is through", "up and running",
"back to normal", "without errors", "no more conflicts" (success), "no luck", "gave up",
"same error/thing/problem", "went down", "rolled ... back", "made no difference" (failure),
each not after a negation or an intent ("don't give up", "haven't gone through the photos",
"looking forward to the day it is back to normal"). A word with "you" just before it is a
diagnosis, not a result ("you are passing the wrong flag"). "still" followed by a negation,
a bad state or a problem lemma is a failure
("still times out", "still not there"); a problem lemma with "again" or "keeps" is one too
("crashed again"). A good state counts after a form of "be", "run", "look", "seem", "go"
or with "now" ("all pods are running and healthy now", "the tests are green"); a bad state
is a failure only with "now", or "worse" ("it is slow now", "it drips worse than before").
With the goal turn's terms (`goal_terms`, given for the user's turns), a wanted word
negated after a thing is a failure ("it didn't rise" after "I want a loaf that rises"; not
"I can't wait"), and a wanted word with "now" after it a success ("it shifts cleanly now"
after "get the gears to shift"). Word forms that report nothing are skipped
(`task_words.result_form`: "fixing cars is an art", "a broken windshield", "it usually
works", "passed away").

A clause with several keeps the last one said ("it failed at first but works now" is a
success). A turn's outcome is its last clause's outcome that has one. Same text -> same
answer.
"""

from __future__ import annotations

import re

from .task_words import (
    BAD_STATES,
    FAILURE,
    GOOD_STATES,
    SUCCESS,
    WORD,
    lemma,
    problem_at,
    result_form,
)

Terms = tuple[frozenset[str], frozenset[str]]
_NO_TERMS: Terms = (frozenset(), frozenset())
_WORK, _HELP = lemma("work"), lemma("help")
# "help" reports a result only after "that/it/this/which" ("that helped"); unnegated
# elsewhere it is an act ("I helped my friend move").
_RESULT_SUBJECTS = frozenset({"that", "it", "this", "which"})
_STATE = frozenset({"it's", "is", "are", "now", "that's", "everything's"})
_INTENT = frozenset("""to trying try need needs want wants wanted should will would could might
    can if hope let's lets please how whether unless until may must shall i'll we'll you'll
    it'll that'll they'll he'll she'll going gonna hopefully""".split())
_NEGATION = frozenset({"not", "never", "no", "cannot", "nothing"})
_PERSONS = frozenset("""i we you they he she i'm we're you're they're he's she's am are is
    was were been i've we've""".split())
_ACTIVITY = frozenset("on at for with in out through hard late from as".split())
_LINKS = frozenset("""is are was were be been being it's that's they're we're everything's
    all run runs ran look looks looked seem seems seemed went goes go now""".split())
_FAILED_PHRASES = re.compile(r"\b(?:no luck|gave up|give up|giving up|same (?:error|thing|"
                             r"problem|issue|result)|still (?:getting|seeing)|no dice|didn'?t go|"
                             r"went wrong|went down|rolled (?:\w+ ){0,2}back|no (?:real )?"
                             r"(?:change|difference)|made no (?:real )?difference)\b")
_SUCCESS_PHRASES = re.compile(r"\b(?:(?:did|done) the trick|(?:went|gone) through|(?:is|are|was|"
                              r"were) through|up and running|that (?:did|was) it|back to normal|"
                              r"without (?:any |a single )?(?:errors?|problems?|issues?|a hitch)|"
                              r"no (?:more )?(?:errors|conflicts|problems|issues|crashes))\b")

def _fold(text: str) -> str:
    return " ".join(text.replace("’", "'").replace("‘", "'").casefold().split())


def clauses(text: str) -> list[str]:
    """The clauses of `text` that are not questions, folded."""
    out: list[str] = []
    for sentence in re.split(r"(?<=[.!?])\s+|\n+", _fold(text)):
        sentence = sentence.strip()
        if not sentence or sentence.endswith("?"):
            continue
        out += [c.strip() for c in re.split(r"[,;:()]|\s[-–—]+\s|\bbut\b", sentence)
                if c.strip()]
    return out


def _negated(before: str) -> bool:
    """True when the last three words of `before` hold a negation."""
    return any(b in _NEGATION or b.endswith("n't") or b in ("gonna", "won")
               for b in WORD.findall(before)[-3:])


def _intent(before: str) -> bool:
    """True when `before` holds an intent word ("looking forward to the day it is back to
    normal", "hopefully no more errors")."""
    return bool((_INTENT | {"forward"}) & set(WORD.findall(before)))


def _word_outcome(words: list[str], i: int, terms: Terms) -> str | None:
    """What words[i] says of the task in its clause, or None (module docstring)."""
    w, key = words[i], lemma(words[i])
    before = words[max(0, i - 3):i]
    if _INTENT & set(words[:i]):
        return None
    if i == 0 and w in (key, key + "e"):
        return None  # "Fix the seed as well.": an instruction, not a result
    if (key in SUCCESS or key in FAILURE or w in ("broken", "breaks")) and not (
            result_form(words, i) or w == "working"):
        return None  # "fixing cars is an art", "a failing log", "it usually works"
    negated = any(b in _NEGATION or b.endswith("n't") for b in before)
    if {"you", "you're", "you've"} & set(before):
        return None  # "you are passing the server's locale": a diagnosis, not a result
    wanted, problems = terms
    if key in SUCCESS:
        if (key == _WORK and i + 1 < len(words) and words[i + 1] in _ACTIVITY
                and _PERSONS & set(before)):  # "I work at", "I haven't worked with"
            return None
        if key == _HELP and not negated and not (
                w == "helped" and before and before[-1] in _RESULT_SUBJECTS):
            return None
        if key == _WORK and not negated and (w == "work" or (
                w == "working" and not (before and before[-1] in _STATE))):
            return None  # "hard work", "thinking of working with": no result
        return "failure" if negated else "success"
    if key in FAILURE and not negated and w != "break":  # "a break from": a noun
        return "failure"
    problem = problem_at(words, i) or key in problems
    if "still" in before and (problem or w in BAD_STATES or any(
            b in _NEGATION or b.endswith("n't") for b in words[i:i + 1])):
        return "failure"
    if problem:
        if negated:
            return "success"  # "no longer drops", "hasn't crashed since"
        if {"again", "keep", "keeps", "kept"} & set(words):
            return "failure"
    if w in GOOD_STATES and not negated and ((before and before[-1] in _LINKS)
                                            or "now" in words[i:]):
        return "success"
    if (w in BAD_STATES - {"same", "there"} and "now" in words[i:]) or w == "worse":
        return "failure"  # "it drips worse than before", "it's slow now"
    if key in wanted and key not in problems and len(key) > 2:
        neg = next((k for k in range(i - 1, max(-1, i - 3), -1) if words[k] in ("not", "never")
                    or words[k].endswith("n't")), None)
        if neg is not None and words[neg] not in ("can't", "cannot") and (
                neg == 0 or words[neg - 1] not in _PERSONS):
            return "failure"  # "it didn't rise" after "a loaf that rises"
        if "now" in words[i + 1:] and not _PERSONS & set(before):
            return "success"  # "it shifts cleanly now" after "get the gears to shift"
    return None


def clause_outcome(clause: str, terms: Terms = _NO_TERMS) -> str | None:
    """"success", "failure" or None for one folded clause (module docstring); `terms` are
    the goal turn's (`task_words.goal_terms`)."""
    words = WORD.findall(clause)
    found: str | None = None
    failed = _FAILED_PHRASES.search(clause)
    if failed and not _negated(clause[: failed.start()]) and not _intent(clause[: failed.start()]):
        found = "failure"  # "gave up", not "don't give up"
    done = _SUCCESS_PHRASES.search(clause)
    if done and not _negated(clause[: done.start()]) and not _intent(clause[: done.start()]):
        found = "success"  # "haven't gone through the photos yet": no result
    for i in range(len(words)):
        said = _word_outcome(words, i, terms)
        if said is not None:
            found = said
    return found


def outcome(text: str, terms: Terms = _NO_TERMS) -> str | None:
    """The outcome a turn reports: its last clause with one, else None."""
    result: str | None = None
    for c in clauses(text):
        o = clause_outcome(c, terms)
        if o is not None:
            result = o
    return result
