"""Facts from the parse (subject–verb–object, `vault/conversation/parsed_statements.py`) measured
on hand labels (issue 29). Needs the `nlp` extra.

- Precision: `bench/data/fact_parsed_sample.tsv` holds the parsed statements found on LoCoMo
  at one point of session 10, every 19th from the 19th ("tuning": read while the refusals for
  modals, demonstratives and "try" were added) and every 19th from the 9th ("held-out":
  labelled after the last change; nothing changed after). Verdicts as in bench_facts.py:
  correct (true and informative), trivial (true, says nothing durable), wrong. A row today's
  extractor no longer produces is dropped. precision = (correct + trivial) / produced;
  informative = correct / produced.
- Recall: the 22 turns of `bench/data/fact_recall_sample.tsv` labelled as stating a durable
  fact: the share where the pattern table plus the parse find at least one statement (the
  statement found is not re-judged: an upper bound), and with the pattern table alone.

`--heldout-e`: session 11's held-out set instead. `bench/data/fact_heldout_e.tsv` holds 87
LoCoMo turns (the 43 of `entity_heldout_e.tsv` and 44 more, every 131st from the 105th), each
labelled states_fact yes/no with the objects of the facts it states (28 yes), committed before
the extractor ran on them. Recall: yes-turns where a statement's value matches a gold object
(same last word, or one's words end the other's), and where any statement is found (the upper
bound of the other recall; an opinion's object is the topic in its key, `_object_of`: since
session 13, E3). Precision: every statement produced on the 87 turns, judged once
after the run in `bench/data/fact_heldout_e_verdicts.tsv` (correct / trivial / wrong, as above;
the extractor was not changed after); statements without a verdict are listed.

`--heldout-s12`: session 12's blind set, measured the same way: `fact_heldout_s12.tsv` (the 40
turns of `entity_heldout_s12.tsv`, 11 fact-bearing, committed before any run on them) and
`fact_heldout_s12_verdicts.tsv` (every statement main db46d84 and the session's branch produce
on them, judged once after the one run).

`--heldout-s12b`: a second session-12 blind set (helper E2), measured the same way:
`fact_heldout_s12b.tsv` holds 40 LoCoMo turns of conversations 1-4 (conv-26, conv-30, conv-41,
conv-42 in file order, concatenated: every 71st turn from the 30th, then every 71st from the
66th, skipping every turn of any other label file), 21 fact-bearing, labelled and committed
before any extractor ran on them; `fact_heldout_s12b_verdicts.tsv` judges every statement
main 442b45c and the E2 branch produce on them, once, after the one run.

Session 13 (helper E3) tuned on all three sets above and appended a verdict for every new
statement its branch produces on them (NOTES-E3.md); they are no longer held out.

`--heldout-s13`: session 13's blind set (helper WB), measured the same way:
`fact_heldout_s13.tsv` holds 40 LoCoMo turns of conversations 5-10 (conv-43, 44, 47, 48, 49, 50
in file order, sessions in numeric order, turns concatenated: every 93rd turn from index 42,
skipping every turn of any other label file), 24 fact-bearing, labelled and committed before any
extractor ran on them (the labeller read no extractor code or notes);
`fact_heldout_s13_verdicts.tsv` judges every statement main 1a06dec and the E3 branch produce
on them, once, after the one run (by the lead).

`--heldout-s14`: a second session-13 blind set (helper WB2): 40 LoCoMo turns of all ten
conversations (every 139th turn from index 23, skipping labelled turns), 16 fact-bearing;
`fact_heldout_s14_verdicts.tsv` judges every statement main 1a06dec, f365fb1 and the E4 branch
produce on them, once, after the one run (by the lead). Since then gold objects and values are
compared without a plural -s (`_singular`: these labels say "cats" where statements say "cat").

Session 14 (helper F5) tuned on every set above, s13 and s14 included (none is held out now),
and appended a verdict for every new statement its branch produces on them (NOTES-F5.md).
Its out-of-sample check: every statement the branch adds or drops on the user turns (first
1,500 characters) of 200 LongMemEval oracle questions (every 2nd of the first 400), judged once
in `fact_spotcheck_f5.tsv` (now = added / removed; a removed one is judged as it was).

`--heldout-s15`: session 14's blind set (helper WB6): 40 LoCoMo turns of all ten conversations
(every 123rd turn from index 11 in file order, skipping labelled turns), 12 fact-bearing,
labelled and committed before any extractor ran on them; `fact_heldout_s15_verdicts.tsv`
judges every statement main d20ebda and the F5 branch produce on them (the same 16), once,
after the one run (by the lead). The unjudged lines name the turn's speaker; a "has" of
"your X" is the addressee's (Statement.subject).

`--heldout-s16`: session 15's blind set (helper W6): 40 LoCoMo turns of all ten conversations
(every 127th turn from index 47 in file order, skipping labelled turns), 15 fact-bearing,
labelled and committed before any extractor ran on them (docs/measurements/session15/NOTES-W6.md);
`fact_heldout_s16_verdicts.tsv` judges every statement main and the F6 branch produce on them,
once, after the one run (by the lead).

    python bench/bench_parsed_facts.py [--data PATH] [--heldout-e | --heldout-s12 | --heldout-s12b
                                        | --heldout-s13 | --heldout-s14 | --heldout-s15
                                        | --heldout-s16]
"""

from __future__ import annotations

import argparse
import csv
import sys
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from vault import extract_statements, nlp_status, turn_statements
from vault import load_conversations as load

HERE = Path(__file__).resolve().parent
DEFAULT_DATA = "../shared/data/locomo/locomo10.json"


def _rows(name: str) -> list[dict[str, str]]:
    with (HERE / "data" / name).open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=DEFAULT_DATA)
    ap.add_argument("--heldout-e", action="store_true", help="session 11's held-out turns")
    ap.add_argument("--heldout-s12", action="store_true", help="session 12's blind turns")
    ap.add_argument("--heldout-s12b", action="store_true", help="session 12's second blind set")
    ap.add_argument("--heldout-s13", action="store_true", help="session 13's blind set")
    ap.add_argument("--heldout-s14", action="store_true", help="session 13's second blind set")
    ap.add_argument("--heldout-s15", action="store_true", help="session 14's blind set")
    ap.add_argument("--heldout-s16", action="store_true", help="session 15's blind set")
    args = ap.parse_args(argv)
    status = nlp_status(load=True)
    print("extractor:", status["extractor"], status["version"] or status["reason"])
    if status["extractor"] != "spacy":
        return 1
    if args.heldout_e:
        return _heldout_e(args.data)
    if args.heldout_s16:
        return _heldout_e(args.data, "fact_heldout_s16")
    if args.heldout_s15:
        return _heldout_e(args.data, "fact_heldout_s15")
    if args.heldout_s14:
        return _heldout_e(args.data, "fact_heldout_s14")
    if args.heldout_s13:
        return _heldout_e(args.data, "fact_heldout_s13")
    if args.heldout_s12b:
        return _heldout_e(args.data, "fact_heldout_s12b")
    if args.heldout_s12:
        return _heldout_e(args.data, "fact_heldout_s12")
    sample, recall = _rows("fact_parsed_sample.tsv"), _rows("fact_recall_sample.tsv")
    wanted = {(r["conversation"], r["turn"]) for r in sample + recall}
    turns = {}
    for conv in load(Path(args.data).read_text(encoding="utf-8"), "locomo"):
        for t in conv.turns():
            if (conv.conversation_id, t.turn_id) in wanted:
                turns[(conv.conversation_id, t.turn_id)] = (t.text, t.speaker, conv.speakers)
    for split in ("tuning", "held-out"):
        rows = [r for r in sample if r["split"] == split]
        kept = []
        for r in rows:
            text, speaker, speakers = turns[(r["conversation"], r["turn"])]
            now = {(s.key, s.value) for s in turn_statements(text, speaker, speakers)}
            if (r["key"], r["value"]) in now:
                kept.append(r["verdict"])
        n = len(kept) or 1
        print(f"{split:8} labelled {len(rows)}, still produced {len(kept)}: precision "
              f"{(kept.count('correct') + kept.count('trivial')) / n:.3f}, informative "
              f"{kept.count('correct') / n:.3f}, wrong {kept.count('wrong')}")
    yes = [r for r in recall if r["states_fact"] == "yes"]
    both = rules = 0
    for r in yes:
        text, speaker, speakers = turns[(r["conversation"], r["turn"])]
        both += bool(turn_statements(text, speaker, speakers))
        rules += bool(extract_statements(text, speaker, speakers))
    print(f"recall   {len(yes)} fact-bearing turns: rules {rules}/{len(yes)} = "
          f"{rules / len(yes):.3f}; rules + parse {both}/{len(yes)} = {both / len(yes):.3f}")
    return 0


def _object_of(key: str, value: str) -> str:
    """What a statement is about: an opinion's object is in its key ("opinion:fashion trend"
    = likes), every other statement's in its value."""
    pred, _, topic = key.partition(":")
    return topic if pred == "opinion" else value


def _singular(word: str) -> str:
    """`word` without a plural -s / -es (labels say "cats", the extractor keys "cat")."""
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "xes", "sses")):
        return word[:-2]
    return word[:-1] if word.endswith("s") and not word.endswith("ss") else word


def _matches(value: str, gold: str) -> bool:
    v, g = [_singular(w) for w in value.split()], [_singular(w) for w in gold.split()]
    if not v or not g:
        return False
    short, long_ = (v, g) if len(v) <= len(g) else (g, v)
    return v[-1] == g[-1] or long_[-len(short):] == short


def _heldout_e(data: str, name: str = "fact_heldout_e") -> int:
    rows = _rows(f"{name}.tsv")
    wanted = {(r["conversation"], r["turn"]) for r in rows}
    turns = {}
    for conv in load(Path(data).read_text(encoding="utf-8"), "locomo"):
        for t in conv.turns():
            if (conv.conversation_id, t.turn_id) in wanted:
                turns[(conv.conversation_id, t.turn_id)] = (t.text, t.speaker, conv.speakers)
    verdicts_path = HERE / "data" / f"{name}_verdicts.tsv"
    verdicts = {(r["conversation"], r["turn"], r["key"], r["value"]): r["verdict"]
                for r in (_rows(verdicts_path.name) if verdicts_path.exists() else [])}
    judged: list[str] = []
    unjudged: list[tuple[str, ...]] = []
    hits = {"rules + parse": [0, 0], "rules": [0, 0]}  # [matched, any]
    yes = [r for r in rows if r["states_fact"] == "yes"]
    for r in rows:
        key = (r["conversation"], r["turn"])
        text, speaker, speakers = turns[key]
        both = turn_statements(text, speaker, speakers)
        for st in both:
            v = verdicts.get((*key, st.key, st.value))
            if v is None:
                unjudged.append((*key, speaker, st.key, st.value, f"subject={st.subject}",
                                 " ".join(text.split())))
            else:
                judged.append(v)
        if r["states_fact"] != "yes":
            continue
        gold = [g for g in r["objects"].split("|") if g]
        for name, sts in (("rules + parse", both),
                          ("rules", extract_statements(text, speaker, speakers))):
            hits[name][0] += any(_matches(_object_of(s.key, s.value), g)
                                 for s in sts for g in gold)
            hits[name][1] += bool(sts)
    for name, (matched, anything) in hits.items():
        print(f"recall   {name:13} {len(yes)} fact-bearing turns: a gold object found "
              f"{matched}/{len(yes)} = {matched / len(yes):.3f}; any statement "
              f"{anything}/{len(yes)} = {anything / len(yes):.3f}")
    n = len(judged) or 1
    print(f"precision {len(judged)} statements judged on {len(rows)} turns: precision "
          f"{(judged.count('correct') + judged.count('trivial')) / n:.3f}, informative "
          f"{judged.count('correct') / n:.3f}, wrong {judged.count('wrong')}; "
          f"{len(unjudged)} without a verdict")
    for u in unjudged:
        print("unjudged\t" + "\t".join(u))
    return 0


if __name__ == "__main__":
    sys.exit(main())
