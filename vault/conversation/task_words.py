"""Word classes of task talk, at the level of lemmas: a small rules lemmatiser (`lemma`), the
problem lemmas (a thing that fails, drops, gets stuck, times out ...) and the goal/problem test
of a turn (`is_goal`), used by `outcomes` and `episodes`. No model: the same text gives the same
answer with or without the `nlp` extra.

`lemma(word)` maps a folded word to its lemma by an irregular table, then by undoing the
English inflections -s/-es/-ies, -ed/-ied, -ing (with a doubled final consonant undone and a
silent e put back for a few stems: "shifting" -> shift, "stuck" -> stick, "dropped" -> drop,
"drips" -> drip, "gave" -> give). It is a stemmer good enough to compare a verb of the goal
with a verb of the outcome ("rises" / "didn't rise") and to find the lemma classes below; it is
not a dictionary, and an unknown word may come out a little wrong (both sides the same way).

A turn states a goal (`is_goal`) when one of its clauses, questions included, is

- a first-person want / try / need: "I'm trying to", "I need to", "I want to", "we have to",
  "I'd like to", "how do/can I", "help me", "I can't get", "I'm stuck", "I have a problem";
- a problem statement: a problem lemma said of a thing, not after an intent word and not
  negated ("my laptop keeps dropping the Wi-Fi", "pods are stuck in", "pip install fails
  with", "the checkout page times out", "I'm getting a ... error"); or "keep(s) V-ing"
  ("it keeps rebooting"); or a negated ability or success of a thing that is not the speaker's
  mind: "won't", "doesn't", "can't", "isn't", "hasn't" + a verb ("the printer won't print",
  "the job hasn't run since Tuesday"; "I don't know", "I don't think" are not problems).
"""

from __future__ import annotations

import re

_IRREGULAR: dict[str, str] = {}
for _base, _forms in {
    "be": "am is are was were been being 's 're", "do": "did does done doing",
    "have": "has had having", "go": "went goes gone going", "give": "gave given giving",
    "get": "got gotten getting", "stick": "stuck sticking sticks", "hang": "hung",
    "freeze": "froze frozen", "break": "broke broken", "lose": "lost", "run": "ran running",
    "come": "came", "make": "made", "keep": "kept", "rise": "rose risen rising",
    "leak": "leaked leaking leaks", "write": "wrote written writing", "see": "saw seen",
    "time": "timing", "sort": "sorted sorting sorts", "error": "erroring errored errors",
    "close": "closed closing closes", "shift": "shifts shifted shifting",
}.items():
    for _f in _forms.split():
        _IRREGULAR[_f] = _base
def lemma(word: str) -> str:
    """The lemma key of one folded word (module docstring): a word it does not know is kept,
    less a final silent "e" (so "rise", "rises" and "rising" all give "ris")."""
    w = word.split("'")[0] if word.endswith(("'s", "'re", "'ve", "'ll", "'d", "'m")) else word
    base = _IRREGULAR.get(word) or _IRREGULAR.get(w) or _regular(w)
    return base[:-1] if len(base) > 3 and base.endswith("e") else base


def _regular(w: str) -> str:
    if len(w) > 4 and w.endswith(("ies", "ied")):
        return w[:-3] + "y"
    for suffix in ("ing", "ed"):
        if len(w) > len(suffix) + 2 and w.endswith(suffix) and not w.endswith("eed"):
            stem = w[: -len(suffix)]
            if len(stem) > 2 and stem[-1] == stem[-2] and stem[-1] not in "lsz":
                return stem[:-1]  # dropped -> drop, shipping -> ship
            return stem
    if len(w) > 4 and w.endswith(("ches", "shes", "sses", "xes", "zes")):
        return w[:-2]
    if len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        return w[:-1]
    return w


def _keys(words: str) -> frozenset[str]:
    return frozenset(lemma(w) for w in words.split())


# Things going wrong, said of a thing: "the job fails", "pods are stuck", "it drops the
# connection", "the page times out" ("time" only before "out").
PROBLEM = _keys("""fail break crash drop stick hang freeze leak error crackle squeak reject
    refuse stall lag glitch corrupt overheat reboot drip flicker stutter overflow wobble""")
# Problems said in two words ("runs out of disk", "the disk fills up").
_PROBLEM_PHRASES = re.compile(r"\b(?:runs?|ran|running) out of|(?:fills?|filled|filling) up\b")
SUCCESS = _keys("work fix pass solve resolve succeed help compile sort")
FAILURE = _keys("fail break crash")
# States a thing is in when it is done well / badly ("all pods are running and healthy",
# "the tests are green" / "still slow", "worse than before").
GOOD_STATES = frozenset("healthy green stable cleanly properly smoothly".split())
BAD_STATES = frozenset("""worse slow broken wrong stuck dead down missing unusable flat same
    there""".split())
# A thing in a bad state, as a problem statement ("the search page is slow", "photos look
# washed out", "emails are landing in spam").
_BAD_GOAL = re.compile(r"^(?!(?:i|we|you|he|she|i'm|we're|you're)\b).*\b(?:is|are|was|were|"
                       r"looks?|seems?|sounds?|shows?|landing|lands?|end(?:s|ed)? up)\s+"
                       r"(?:\S+\s+){0,2}?(?:slow|broken|wrong|missing|dead|empty|blurry|"
                       r"corrupt(?:ed)?|miserable|garbled|blank|choppy|unreadable|"
                       r"washed out|(?:in|into) (?:\S+\s+){0,2}?spam)\b")
_MIND = _keys("""know think mind care like want need understand remember believe expect
    worry mean see agree feel have be wait imagine forget stop let""")
_NEG_AUX = re.compile(r"\b(?:won't|wont|doesn't|doesnt|don't|dont|can't|cant|cannot|hasn't|"
                      r"haven't|didn't|will not|does not|do not|has not|have not|did not)\s+"
                      r"(?:even\s+|always\s+|ever\s+)?([a-z]+)|\b(?:isn't|aren't|is not|are not)"
                      r"\s+([a-z]+ing)\b")
_NOT_SUBJECTS = frozenset("and so but just please that which who where some to or".split())
_WANT = re.compile(r"\b(?:i'?m trying to|i am trying to|we'?re trying to|"
                   r"(?:i|we)(?:'d| would)? (?:like|love|have) to|"
                   r"(?:i|we) (?:need|want) (?:to|an?|the|some|my|our)|"
                   r"how (?:do|can|should) (?:i|we)|"
                   r"(?:^|(?:can|could|would|will) you |please )help me|"
                   r"i can'?t get|we can'?t get|"
                   r"i'?m stuck|we'?re stuck|i have (?:a|an) (?:problem|issue)|"
                   r"i'?m getting (?:an?|this|the) [\w\s-]{0,30}error)\b")
_KEEPS = re.compile(r"\bkeeps (?:on )?(?!(?:going|trying|pushing|working|growing|improving|"
                    r"getting|coming|moving|learning|smiling|asking)\b)[a-z]+ing\b")
# A problem is said of a thing: a clause that opens on a person ("I dropped by", "we can't
# wait") or on an elided subject ("Can't wait", "Keep going") states none.
_PERSONS = frozenset("""i i'm i've i'd i'll we we're we've we'd we'll you you're you've you'd
    you'll he she they they're he's she's let's keep""".split())
_INTENT = frozenset("""to should will would could might if hope please whether unless until may
    must shall i'll we'll it'll that'll how gonna hopefully""".split())
_TIME = lemma("time")
WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")


_BE = frozenset("""is are was were be been being it's that's they're we're i'm everything's
    keeps keep kept still got get gets now""".split())
_DETERMINERS = frozenset("a an the every each another this that my your his her our their".split())
_HABIT = frozenset("usually always often generally sometimes normally typically".split())
_BREAKS_AFTER = frozenset("it this that which everything something".split())


def result_form(words: list[str], i: int) -> bool:
    """False when words[i], a verb of a lemma class, is not used as a verb reporting what
    happened: an -ing form not after a form of "be"/"keep"/"still" ("fixing cars is an art",
    "taking breaks", "a failing log"), "broken" not after one ("a broken windshield"),
    "breaks" not after "it"/"this"/"that"/"which", a "heart" right after it ("it broke my
    heart"), "passed away", "sorts" (only "sorted it/that/out" is a result), or a habit
    ("it usually works"), a contraction ("work's") or "hang out"."""
    w, before, after = words[i], words[max(0, i - 3):i], words[i + 1:i + 3]
    if _HABIT & set(before) or "heart" in after or "'" in w or (after[:1] == ["out"] and (
            w.startswith("hang") or w == "hung")):
        return False  # "my heart", "work's paying off", "hang out": no result
    if w.endswith("ing") or w == "broken":
        return bool(before) and before[-1] in _BE
    if w == "breaks":
        return bool(before) and before[-1] in _BREAKS_AFTER
    if w.startswith("pass") and after[:1] in (["away"], ["by"]):
        return False
    if w.startswith("sort"):
        return w == "sorted" and (not after or after[0] in ("it", "that", "this", "out", "now"))
    return True


def problem_at(words: list[str], i: int) -> bool:
    """True when words[i] is a problem lemma used as one ("time" only in "time(s) out")."""
    if not result_form(words, i) and not words[i].startswith("tim"):
        return False
    lem = lemma(words[i])
    if lem == _TIME:
        return i + 1 < len(words) and words[i + 1] == "out" and words[i] != "time"
    if lem == "drop":
        return words[i] != "drop"  # "drop the flag" (an instruction) / "it drops"
    return lem in PROBLEM and words[i] not in ("error", "break")  # nouns, mostly


def is_problem(clause: str) -> bool:
    """True when a folded clause states a problem of a thing (module docstring)."""
    words = WORD.findall(clause)
    if not words or words[0] in _PERSONS or words[0].endswith("n't"):
        return False
    if (_KEEPS.search(clause) or _PROBLEM_PHRASES.search(clause)
            or (_BAD_GOAL.search(clause) and not _NEG_AUX.search(clause))):
        return True
    for i in range(len(words)):
        if not problem_at(words, i) or _INTENT & set(words[:i]):
            continue
        before = words[max(0, i - 3):i]
        if any(b in ("not", "never", "no") or b.endswith("n't") for b in before):
            continue
        if _PERSONS & set(before):
            continue  # "I've been stuck inside": of the speaker, not of a thing
        if i == 0 and lemma(words[0]) == words[0]:
            continue  # "Fix the seed", "Drop the table": an instruction
        return True
    m = _NEG_AUX.search(clause)
    if not m:
        return False
    subject = clause[: m.start()].split()[-1:]
    return (lemma(m.group(1) or m.group(2)) not in _MIND and bool(subject)
            and not (_PERSONS | _NOT_SUBJECTS) & set(subject))


def is_goal(text: str) -> bool:
    """True when a folded turn states a goal: a first-person want/try/need or a problem.
    Bracketed text ("[shares a photo of a broken fence]") is a stage direction, not said."""
    text = re.sub(r"\[[^\]]*\]", " ", text)
    if _WANT.search(text):
        return True
    for sentence in re.split(r"(?<=[.!?])\s+", text):
        for clause in re.split(r"[,;:()]|\s[-–—]+\s|\bbut\b", sentence):
            if clause.strip() and is_problem(clause.strip()):
                return True
    return False


_STOP = _keys("""i me my we our you your it its they them the a an this that these those to of in
    on at for with from by and or but so as is are was were be been get got make do does did
    have has had can could will would should want need try trying going go keep keeps how
    help not no never now still again just really actually there here what when why which
    who all any every some more most very too also out up off into over after before than""")


def goal_terms(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """The lemma keys a folded goal turn wants and the ones it complains of: (wanted,
    problems). Wanted: the content words of the turn ("bake", "loaf", "ris" for "I want to
    bake a loaf that rises"; "pair" for "the headphones won't pair"); problems: its problem
    lemmas and the verb of "keep(s) V-ing" ("drop" for "keeps dropping")."""
    words = WORD.findall(text)
    problems = {lemma(words[i]) for i in range(len(words)) if problem_at(words, i)}
    problems |= {lemma(m.group(0).split()[-1]) for m in _KEEPS.finditer(text)}
    wanted = {lemma(w) for w in words} - _STOP - problems
    return frozenset(wanted), frozenset(problems)
