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

    python bench/bench_parsed_facts.py [--data PATH]
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
    args = ap.parse_args(argv)
    status = nlp_status(load=True)
    print("extractor:", status["extractor"], status["version"] or status["reason"])
    if status["extractor"] != "spacy":
        return 1
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


if __name__ == "__main__":
    sys.exit(main())
