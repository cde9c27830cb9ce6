"""Fact extraction measured by hand-checked samples of LoCoMo (issue 16, "facts measured").

- Precision: `bench/data/fact_sample.tsv` holds 100 statements that the extractor produced on
  LoCoMo (every 4.67th of the 467 found at the time the sample was drawn, in conversation and
  turn order), each with a verdict written by a person who read the turn: *correct* (a true,
  informative fact, preference, relation or plan of the speaker), *trivial* (true to the text
  but says nothing durable: "I'll let you know"), *wrong* (garbled, wrong object or subject,
  hedged). Strict precision = correct / judged; lenient = (correct + trivial) / judged. Each
  row is re-checked against today's extractor: a row it no longer produces is *dropped*, and
  the precision over the rows it still produces is printed too (a subset of the sample: read
  it as an estimate, not as a fresh sample).
- Recall: `bench/data/fact_recall_sample.tsv` holds 40 turns (every 147th of LoCoMo's 5,882)
  labelled by hand with whether the turn states a durable fact, preference or plan of the
  speaker (of any kind, not only the pattern table's). Recall = labelled turns where the
  extractor finds at least one statement / labelled turns (an upper bound: the statement
  found is not re-judged).
- Coverage: the share of LoCoMo turns with at least one statement; confirmations are counted
  once per session (`facts.build_facts`).

    python bench/bench_facts.py [--data PATH] [--json OUT]
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from vault import build_events, build_facts, extract_statements
from vault import fact_sentence as sentence
from vault import load_conversations as load

HERE = Path(__file__).resolve().parent
DEFAULT_DATA = "../shared/data/locomo/locomo10.json"  # relative to the repository root


def _rows(name: str) -> list[dict[str, str]]:
    with (HERE / "data" / name).open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=DEFAULT_DATA)
    ap.add_argument("--json", default="")
    args = ap.parse_args(argv)
    convs = load(Path(args.data).read_text(encoding="utf-8"), "locomo")
    found: dict[tuple[str, str], list[str]] = {}
    turns = with_fact = 0
    confirmations = Counter[str]()
    for conv in convs:
        events = build_events(conv)
        speakers = tuple(dict.fromkeys(e.speaker for e in events))
        for ev in events:
            sts = extract_statements(ev.text, ev.speaker, speakers)
            found[(conv.conversation_id, ev.turn_id)] = [
                sentence(s.subject, s.key, s.value) for s in sts]
            turns += 1
            with_fact += bool(sts)
        for r in build_facts(events):
            confirmations[str(min(r.fact.confirmations, 3))] += 1
    sample = _rows("fact_sample.tsv")
    verdicts = Counter(r["verdict"] for r in sample)
    kept = [r for r in sample if r["fact"] in found.get((r["conversation"], r["turn"]), [])]
    kv = Counter(r["verdict"] for r in kept)

    def prec(c: Counter[str]) -> dict[str, float]:
        n = sum(c.values())
        return {"judged": n, "strict": round(c["correct"] / n, 4) if n else 0.0,
                "lenient": round((c["correct"] + c["trivial"]) / n, 4) if n else 0.0}

    labelled = _rows("fact_recall_sample.tsv")
    positive = [r for r in labelled if r["states_fact"] == "yes"]
    hit = [r for r in positive if found.get((r["conversation"], r["turn"]))]
    spurious = [r for r in labelled if r["states_fact"] == "no"
                and found.get((r["conversation"], r["turn"]))]
    report: dict[str, Any] = {
        "sample": {**prec(verdicts), "verdicts": dict(sorted(verdicts.items()))},
        "still_extracted": {**prec(kv), "verdicts": dict(sorted(kv.items())),
                            "dropped": len(sample) - len(kept),
                            "dropped_verdicts": dict(sorted(
                                (verdicts - kv).items()))},
        "recall": {"labelled_turns": len(labelled), "stating_a_fact": len(positive),
                   "found": len(hit), "recall": round(len(hit) / len(positive), 4),
                   "found_in_turns_stating_nothing": len(spurious)},
        "coverage": {"turns": turns, "turns_with_a_statement": with_fact,
                     "share": round(with_fact / turns, 4)},
        "facts_by_confirmations": dict(sorted(confirmations.items())),
    }
    s, k, r = report["sample"], report["still_extracted"], report["recall"]
    print(f"fact sample (100 judged at draw time): strict precision {s['strict']:.3f}, "
          f"lenient {s['lenient']:.3f}  {s['verdicts']}")
    print(f"rows the extractor still produces: {k['judged']} (dropped {k['dropped']}: "
          f"{k['dropped_verdicts']}): strict {k['strict']:.3f}, lenient {k['lenient']:.3f}")
    print(f"recall on {r['labelled_turns']} labelled turns: {r['found']}/{r['stating_a_fact']} "
          f"= {r['recall']:.3f} (statements found in {r['found_in_turns_stating_nothing']} "
          "turns labelled as stating nothing)")
    c = report["coverage"]
    print(f"coverage: {c['turns_with_a_statement']}/{c['turns']} turns = {c['share']:.3f}; "
          f"facts by confirmations (3 = 3+): {report['facts_by_confirmations']}")
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2, sort_keys=True), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
