"""`python -m bench.beir_sample SRC OUT`: a smaller BEIR collection from a larger one, for
machines that cannot embed the whole corpus.

Kept: every document judged (any score) by any query of `--split` in SRC, plus `--others` of
the remaining documents, chosen by the smallest SHA-256 of their id (deterministic, no seed,
independent of file order). Documents stay in SRC's file order (bench/beir.py breaks ties by
that order). Queries: those of the split, optionally only the first or second half by query
id (numeric ids in numeric order, else text order), so a collection can be measured on the
half that a parameter was not chosen on. The output's qrels file keeps SRC's split name
unless `--out-split` renames it. Prints what was kept as one JSON line.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path


def _qid_key(qid: str) -> tuple[int, int, str]:
    return (0, int(qid), "") if qid.isdigit() else (1, 0, qid)


def sample(src: Path, out: Path, split: str, others: int, half: str,
           out_split: str) -> dict[str, int]:
    """Write the sampled collection to `out` (module docstring); return the counts."""
    lines = (src / "qrels" / f"{split}.tsv").read_text(encoding="utf-8").splitlines()
    header, judged = lines[0], [ln.split("\t") for ln in lines[1:] if ln.strip()]
    qids = sorted({j[0] for j in judged}, key=_qid_key)
    if half != "all":
        mid = len(qids) // 2
        qids = qids[:mid] if half == "first" else qids[mid:]
    keep_q = set(qids)
    judged_docs = {j[1] for j in judged}  # every judged doc of the split stays a distractor too
    docs = [ln for ln in (src / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
            if ln.strip()]
    ids = [str(json.loads(ln)["_id"]) for ln in docs]
    rest = sorted((hashlib.sha256(i.encode("utf-8")).hexdigest(), i) for i in ids
                  if i not in judged_docs)
    keep_d = judged_docs | {i for _, i in rest[:others]}
    out.mkdir(parents=True, exist_ok=True)
    (out / "qrels").mkdir(exist_ok=True)
    kept_docs = [ln for ln, i in zip(docs, ids, strict=True) if i in keep_d]
    (out / "corpus.jsonl").write_text("\n".join(kept_docs) + "\n", encoding="utf-8")
    qs = [ln for ln in (src / "queries.jsonl").read_text(encoding="utf-8").splitlines()
          if ln.strip() and str(json.loads(ln)["_id"]) in keep_q]
    (out / "queries.jsonl").write_text("\n".join(qs) + "\n", encoding="utf-8")
    rels = [header] + ["\t".join(j) for j in judged if j[0] in keep_q]
    (out / "qrels" / f"{out_split}.tsv").write_text("\n".join(rels) + "\n", encoding="utf-8")
    return {"documents": len(kept_docs), "judged_documents": len(judged_docs & set(ids)),
            "queries": len(qs), "judgements": len(rels) - 1}


def main() -> None:
    p = argparse.ArgumentParser(prog="python -m bench.beir_sample", description=__doc__)
    p.add_argument("src", type=Path)
    p.add_argument("out", type=Path)
    p.add_argument("--split", default="test")
    p.add_argument("--out-split", default=None)
    p.add_argument("--others", type=int, default=0, help="unjudged documents to keep")
    p.add_argument("--half", choices=("all", "first", "second"), default="all")
    a = p.parse_args()
    print(json.dumps(sample(a.src, a.out, a.split, a.others, a.half, a.out_split or a.split)))


if __name__ == "__main__":
    main()
