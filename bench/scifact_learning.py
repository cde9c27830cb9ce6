"""A held-out learning workload from BEIR SciFact's training split (issue 31; NOTES-LRN26.md).

Writes a vault (one note per abstract: `abstracts/TITLE.md`, the abstract as its body) and a
questions file for bench/bench_learning_agents.py `--vault DIR --questions FILE`
(bench/external_vault.py's format). No learning rule was tuned on it.

- related: for each abstract judged by at least two claims that judge only it, the claim with
  the smallest id is the training question and the next one its held-out wording (a different
  claim about the same abstract, not a rewording of the first);
- unrelated: claims judging exactly one abstract that no other claim judges, asked as written.
Both are taken in id order, `--related` and `--unrelated` of them (deterministic).

Run:  python -m bench.scifact_learning --data ../shared/data/beir/scifact-train --out DIR
      then bench_learning_agents --vault DIR/vault --questions DIR/questions.json
"""

from __future__ import annotations

import argparse
import json
import re
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

_BAD = re.compile(r'[\\/:*?"<>|#^\[\]\n\r\t]+')


def note_name(title: str, doc_id: str, taken: set[str]) -> str:
    """A note path for an abstract: its title made safe for a file name (at most 100
    characters), the id appended when another abstract already took that name."""
    base = _BAD.sub(" ", title).strip(" .") or doc_id
    base = re.sub(r"\s+", " ", base)[:100].rstrip(" .")
    name = base if base.lower() not in taken else f"{base} {doc_id}"
    taken.add(name.lower())
    return f"abstracts/{name}.md"


def build(data: Path, out: Path, related: int, unrelated: int) -> dict[str, int]:
    """Writes `out/vault` and `out/questions.json` (module docstring); returns the counts."""
    claims: dict[str, str] = {}
    for line in (data / "queries.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        claims[row["_id"]] = row["text"]
    judged: dict[str, set[str]] = defaultdict(set)  # claim -> abstracts
    for line in (data / "qrels" / "train.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        qid, did, score = line.split("\t")
        if int(score) > 0:
            judged[qid].add(did)
    by_doc: dict[str, list[str]] = defaultdict(list)
    for qid in sorted(judged, key=int):
        for did in judged[qid]:
            by_doc[did].append(qid)
    single = {q: next(iter(ds)) for q, ds in judged.items() if len(ds) == 1}
    paths: dict[str, str] = {}
    taken: set[str] = set()
    (out / "vault" / "abstracts").mkdir(parents=True, exist_ok=True)
    for line in (data / "corpus.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        path = note_name(row["title"], row["_id"], taken)
        paths[row["_id"]] = path
        (out / "vault" / path).write_text(f"{row['text']}\n", encoding="utf-8")
    rel: list[dict[str, object]] = []
    for did in sorted(by_doc, key=int):
        own = [q for q in by_doc[did] if single.get(q) == did]
        if len(own) >= 2 and len(rel) < related:
            rel.append({"id": f"r{own[0]}", "question": claims[own[0]],
                        "paraphrase": claims[own[1]], "gold": [paths[did]]})
    unr: list[dict[str, object]] = []
    for qid in sorted(single, key=int):
        did = single[qid]
        if len(by_doc[did]) == 1 and len(unr) < unrelated:
            unr.append({"id": f"u{qid}", "question": claims[qid], "gold": [paths[did]]})
    about = ("BEIR SciFact train split as a learning workload (bench/scifact_learning.py): "
             "related = a claim and another claim judging the same abstract; unrelated = "
             "claims whose abstract no other claim judges.")
    (out / "questions.json").write_text(json.dumps(
        {"about": about, "related": rel, "unrelated": unr}, indent=1), encoding="utf-8")
    return {"notes": len(paths), "related": len(rel), "unrelated": len(unr)}


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, required=True, help="a BEIR folder (train qrels)")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--related", type=int, default=60)
    ap.add_argument("--unrelated", type=int, default=60)
    args = ap.parse_args(argv)
    print(json.dumps(build(args.data, args.out, args.related, args.unrelated)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
