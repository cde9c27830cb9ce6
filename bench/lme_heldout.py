"""`python -m bench.lme_heldout ORACLE SUBSET OUT`: LongMemEval-S-shaped haystacks for the
questions nobody tuned on.

rmh's conversational defaults were chosen on the 50 questions of the LongMemEval-S subset
(`longmemeval_s_subset50.json`). The oracle file (`longmemeval_oracle.json`) holds all 500
questions of LongMemEval (Wu et al. 2024, "LongMemEval: benchmarking chat assistants on
long-term interactive memory") with only their evidence sessions. This builds, for each of the
other 450 questions (abstention questions kept out, as `rmh bench longmemeval` drops them), a
haystack in LongMemEval-S's own layout and scale, so `rmh bench longmemeval --data OUT`
measures it unchanged:

- its evidence sessions, as in the oracle file, with their dates;
- `--distractors` (default 50; LongMemEval-S has ~48 per question) sessions from the subset's
  haystacks whose ids are evidence for no question (ShareGPT, UltraChat and simulated-user
  sessions: the same pool LongMemEval-S draws its fillers from; 34 of the 2,240 hold another
  question's evidence conversation under a filler id, as LongMemEval-S's own haystacks do, so
  a question's own is skipped: no haystack holds its evidence twice), chosen per question by the
  smallest SHA-256 of (question id, session id), and each re-dated to a time inside the
  question's own window (from 10 days before its first evidence session to the question's
  date), placed by the same hash, so that dates tell evidence from filler no better than in
  LongMemEval-S;
- the sessions in date order (ties by session id), as LongMemEval-S orders them.

`--salt S` (default none) puts S before the question id in both hashes: another draw of
fillers and of their dates for the same questions, a second proxy on which a choice made on
the first can be checked (with no salt the bytes are those of earlier sessions).

Questions: all 450, or `--sample N` of them stratified by question type (each type's share
rounded, the questions of a type taken by the smallest SHA-256 of their id), optionally only
the `--half first|second` of that order per type, so a choice made on one half can be checked
on the other. No randomness: the same files give the same bytes. Prints the counts as JSON.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from collections import defaultdict
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

DATE = "%Y/%m/%d (%a) %H:%M"
WINDOW_DAYS = 10


def _h(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()


def _date(s: str) -> datetime:
    return datetime.strptime(s, DATE)


def filler_pool(subset: list[dict[str, Any]], evidence_ids: set[str]) -> list[tuple[str, Any]]:
    """(session id, turns) of every subset haystack session that is evidence for no
    question, once each, in session-id order."""
    pool: dict[str, Any] = {}
    for item in subset:
        for sid, turns in zip(item["haystack_session_ids"], item["haystack_sessions"],
                              strict=True):
            if "answer" in sid or sid in evidence_ids:
                continue
            pool.setdefault(sid, turns)
    return sorted(pool.items())


def said(turns: Any) -> str:
    """A session's user side, which names the same conversation under any session id."""
    return json.dumps([t.get("content") for t in turns if t.get("role") == "user"])


def choose(questions: list[dict[str, Any]], sample: int, half: str) -> list[dict[str, Any]]:
    """Stratified by question type (module docstring); all when `sample` is 0."""
    by_type: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for q in questions:
        by_type[str(q["question_type"])].append(q)
    out = []
    for kind in sorted(by_type):
        qs = sorted(by_type[kind], key=lambda q: _h(str(q["question_id"])))
        k = len(qs) if sample <= 0 else max(1, round(sample * len(qs) / len(questions)))
        qs = qs[:k]
        if half != "all":
            mid = len(qs) // 2
            qs = qs[:mid] if half == "first" else qs[mid:]
        out.extend(qs)
    return sorted(out, key=lambda q: str(q["question_id"]))


def haystack(q: dict[str, Any], pool: list[tuple[str, Any]], distractors: int,
             salt: str = "") -> dict[str, Any]:
    """One question in LongMemEval-S's layout (module docstring)."""
    qid = str(q["question_id"])
    key = (salt, qid) if salt else (qid,)
    end = _date(str(q["question_date"]))
    first = min((_date(str(d)) for d in q["haystack_dates"]), default=end)
    start = min(first, end) - timedelta(days=WINDOW_DAYS)
    span = max(60, int((end - start).total_seconds()) // 60)  # minutes
    own = {said(turns) for turns in q["haystack_sessions"]}
    picked: list[tuple[str, Any]] = []
    for s in sorted(pool, key=lambda s: _h(*key, s[0])):
        if len(picked) == distractors:
            break
        if said(s[1]) not in own:  # its own evidence under a filler's id: not a filler
            picked.append(s)
    sessions = [(_date(str(d)), str(sid), turns) for sid, d, turns in
                zip(q["haystack_session_ids"], q["haystack_dates"], q["haystack_sessions"],
                    strict=True)]
    for sid, turns in picked:
        at = start + timedelta(minutes=int(_h(*key, sid, "date")[:12], 16) % span)
        sessions.append((at, sid, turns))
    sessions.sort(key=lambda s: (s[0], s[1]))
    out = {k: v for k, v in q.items()
           if k not in ("haystack_dates", "haystack_session_ids", "haystack_sessions")}
    out["haystack_dates"] = [d.strftime(DATE) for d, _, _ in sessions]
    out["haystack_session_ids"] = [sid for _, sid, _ in sessions]
    out["haystack_sessions"] = [turns for _, _, turns in sessions]
    return out


def build(oracle: Path, subset: Path, out: Path, distractors: int, sample: int,
          half: str, salt: str = "") -> dict[str, int]:
    everything = json.loads(oracle.read_text(encoding="utf-8"))
    tuned = json.loads(subset.read_text(encoding="utf-8"))
    tuned_ids = {str(q["question_id"]) for q in tuned}
    evidence = {str(s) for q in everything for s in q["answer_session_ids"]}
    pool = filler_pool(tuned, evidence)
    heldout = [q for q in everything if str(q["question_id"]) not in tuned_ids
               and not str(q["question_id"]).endswith("_abs")]
    chosen = choose(heldout, sample, half)
    items = [haystack(q, pool, distractors, salt) for q in chosen]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(items, ensure_ascii=False, sort_keys=True), encoding="utf-8")
    return {"questions": len(items), "heldout": len(heldout), "pool": len(pool),
            "sessions": sum(len(i["haystack_session_ids"]) for i in items)}


def main() -> None:
    p = argparse.ArgumentParser(prog="python -m bench.lme_heldout", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("oracle", type=Path)
    p.add_argument("subset", type=Path)
    p.add_argument("out", type=Path)
    p.add_argument("--distractors", type=int, default=50)
    p.add_argument("--sample", type=int, default=0)
    p.add_argument("--half", choices=("all", "first", "second"), default="all")
    p.add_argument("--salt", default="", help="another draw of fillers and dates")
    a = p.parse_args()
    print(json.dumps(build(a.oracle, a.subset, a.out, a.distractors, a.sample, a.half,
                           a.salt)))


if __name__ == "__main__":
    main()
