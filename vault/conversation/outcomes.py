"""Outcomes of a task, read at the level of lemmas: "worked", "works", "fixed", "passes now",
"still failed", "didn't help" — not a list of surface strings.

A turn is cut into clauses (sentences, then at , ; : and dashes); questions state no outcome.
In a clause, each word is mapped to a lemma by a small inflection table (`LEMMAS`: work,
fix, pass, solve, resolve, succeed, help, compile, build / fail, break, crash, error). A
success lemma counts when it reports a result, not an intent or an activity:

- not after an intent or modal word in the clause ("to", "trying", "need", "want", "should",
  "will", "would", "could", "might", "can", "if", "hope", "let's", "please", "how"):
  "get the build to pass" is the goal, not its outcome;
- not a clause-opening base form ("Fix the seed as well.": an instruction);
- "work" not followed by an activity preposition after a person ("I'm working on the
  parser", "I work at"; "that worked for all three files" is a result);
  "helped" only right after "that", "it", "this", "which" ("that helped"); "work" only as
  "works"/"worked" or "it's working" (the noun "hard work" and "thinking of working with"
  report nothing), unless negated ("doesn't work");
- negated by "not", "n't", "never", "no longer", "still not" in the three words before it,
  it is a failure ("didn't work", "doesn't pass", "still not fixed").

A failure lemma counts the same way ("the build still failed", "it keeps crashing"), and so
does "no luck", "gave up" and "same error". A clause with both keeps the last one said
("it failed at first but works now" is a success). A turn's outcome is its last clause's
outcome that has one. Same text -> same answer.
"""

from __future__ import annotations

import re

LEMMAS: dict[str, str] = {}
for _lemma, _forms in {
    "work": "work works worked working",
    "fix": "fix fixes fixed fixing",
    "pass": "pass passes passed passing",
    "solve": "solve solves solved solving",
    "resolve": "resolve resolves resolved resolving",
    "succeed": "succeed succeeds succeeded succeeding",
    "help": "help helps helped helping",
    "compile": "compiles compiled",
    "fail": "fail fails failed failing",
    "break": "breaks broke broken breaking",
    "crash": "crash crashes crashed crashing",
}.items():
    for _f in _forms.split():
        LEMMAS[_f] = _lemma
SUCCESS = frozenset({"work", "fix", "pass", "solve", "resolve", "succeed", "help", "compile"})
# "help" reports a result only after "that/it/this/which" ("that helped"); unnegated
# elsewhere it is an act ("I helped my friend move").
_RESULT_SUBJECTS = frozenset({"that", "it", "this", "which"})
_STATE = frozenset({"it's", "is", "are", "now", "that's", "everything's"})
FAILURE = frozenset({"fail", "break", "crash"})
_INTENT = frozenset("""to trying try need needs want wants wanted should will would could might
    can if hope let's lets please how whether unless until may must shall""".split())
_NEGATION = frozenset({"not", "never", "no", "cannot", "nothing"})
_PERSONS = frozenset("""i we you they he she i'm we're you're they're he's she's am are is
    was were been i've we've""".split())
_ACTIVITY = frozenset("on at for with in out through hard late from as".split())
_FAILED_PHRASES = re.compile(r"\b(?:no luck|gave up|same error|still (?:getting|seeing)"
                             r"|no dice|didn'?t go|went wrong)\b")
_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")


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


def clause_outcome(clause: str) -> str | None:
    """"success", "failure" or None for one folded clause (module docstring)."""
    words = _WORD.findall(clause)
    found: str | None = "failure" if _FAILED_PHRASES.search(clause) else None
    for i, w in enumerate(words):
        lemma = LEMMAS.get(w)
        if lemma is None:
            continue
        before = words[max(0, i - 3):i]
        if _INTENT & set(words[:i]):
            continue
        if i == 0 and w == lemma:  # "Fix the seed as well.": an instruction, not a result
            continue
        if (lemma == "work" and i + 1 < len(words) and words[i + 1] in _ACTIVITY
                and _PERSONS & set(before)):  # "I work at", "I haven't worked with"
            continue
        negated = any(b in _NEGATION or b.endswith("n't") for b in before)
        if lemma == "help" and not negated and not (
                w == "helped" and before and before[-1] in _RESULT_SUBJECTS):
            continue
        if lemma == "work" and not negated and (w == "work" or (
                w == "working" and not (before and before[-1] in _STATE))):
            continue  # "hard work", "thinking of working with": no result
        if lemma in SUCCESS:
            found = "failure" if negated else "success"
        elif not negated:
            found = "failure"
    return found


def outcome(text: str) -> str | None:
    """The outcome a turn reports: its last clause with one, else None."""
    result: str | None = None
    for c in clauses(text):
        o = clause_outcome(c)
        if o is not None:
            result = o
    return result
