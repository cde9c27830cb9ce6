"""bench/lme_heldout.py: haystacks for the questions nobody tuned on, with fillers that are
evidence for no question, dates inside the question's window, stratified halves that
partition the sample, the same bytes on every run, and an output bench/datasets.py loads."""

from __future__ import annotations

import json
import random
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any

from bench.datasets import load_longmemeval
from bench.lme_heldout import DATE, build

TYPES = ("multi-session", "temporal-reasoning", "single-session-user")


def _session(rng: random.Random, words: str, evidence: bool) -> list[dict[str, Any]]:
    said = f"{words} {rng.randint(0, 10**6)}"
    return [{"role": "user", "content": said, **({"has_answer": True} if evidence else {})},
            {"role": "assistant", "content": f"noted: {said}"}]


def _question(rng: random.Random, qid: str, kind: str, day: int, fillers: int
              ) -> dict[str, Any]:
    ids = [f"answer_{qid}_1"] + [f"filler_{qid}_{k}" for k in range(fillers)]
    sessions = [_session(rng, f"evidence of {qid}", True)] + [
        _session(rng, f"chatter {qid} {k}", False) for k in range(fillers)]
    dates = [f"2023/05/{day:02d} (Sat) 10:{k:02d}" for k in range(len(ids))]
    return {"question_id": qid, "question_type": kind, "question": f"what about {qid}?",
            "answer": "x", "question_date": f"2023/06/{day:02d} (Sat) 09:00",
            "haystack_dates": dates, "haystack_session_ids": ids,
            "haystack_sessions": sessions, "answer_session_ids": [ids[0]]}


def write_data(folder: Path, seed: int = 0) -> tuple[Path, Path]:
    """An oracle file (evidence sessions only) of 40 questions and a subset file of 8 of
    them with their full haystacks (evidence + fillers)."""
    rng = random.Random(seed)
    full = [_question(rng, f"q{i:02d}", TYPES[i % 3], 1 + i % 20, 6) for i in range(40)]
    full.append(_question(rng, "q99_abs", TYPES[0], 3, 2))
    oracle = [{**q, "haystack_dates": q["haystack_dates"][:1],
               "haystack_session_ids": q["haystack_session_ids"][:1],
               "haystack_sessions": q["haystack_sessions"][:1]} for q in full]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "oracle.json").write_text(json.dumps(oracle))
    (folder / "subset.json").write_text(json.dumps(full[:8]))
    return folder / "oracle.json", folder / "subset.json"


def test_held_out_questions_get_fillers_that_are_evidence_for_none(tmp_path: Path) -> None:
    oracle, subset = write_data(tmp_path)
    counts = build(oracle, subset, tmp_path / "out.json", 10, 0, "all")
    assert counts == {"questions": 32, "heldout": 32, "pool": 48, "sessions": 32 * 11}
    items = json.loads((tmp_path / "out.json").read_text())
    tuned = {f"q{i:02d}" for i in range(8)}
    for item in items:
        qid = item["question_id"]
        assert qid not in tuned and not qid.endswith("_abs")
        ids = item["haystack_session_ids"]
        assert [s for s in ids if "answer" in s] == [f"answer_{qid}_1"]
        assert all(s.startswith("filler_q0") and int(s[8:10]) < 8 for s in ids if "filler" in s)
        assert len(set(ids)) == len(ids) == 11
        dates = [datetime.strptime(d, DATE) for d in item["haystack_dates"]]
        assert dates == sorted(dates)
        assert all(d <= datetime.strptime(item["question_date"], DATE) for d in dates)
    excluded: dict[str, int] = {}
    loaded = list(load_longmemeval(tmp_path / "out.json", "session", excluded))
    assert len(loaded) == 32 and excluded == {}
    assert all(len(h.questions[0].evidence) == 1 for h in loaded)


def test_the_same_files_give_the_same_bytes_and_fillers_differ_by_question(
        tmp_path: Path) -> None:
    oracle, subset = write_data(tmp_path)
    build(oracle, subset, tmp_path / "a.json", 5, 0, "all")
    build(oracle, subset, tmp_path / "b.json", 5, 0, "all")
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    items = json.loads((tmp_path / "a.json").read_text())
    picks = {tuple(s for s in i["haystack_session_ids"] if "filler" in s) for i in items}
    assert len(picks) > len(items) // 2


def test_stratified_halves_partition_the_sample(tmp_path: Path) -> None:
    oracle, subset = write_data(tmp_path)
    got = {}
    for half in ("all", "first", "second"):
        build(oracle, subset, tmp_path / f"{half}.json", 3, 12, half)
        got[half] = [i["question_id"] for i in json.loads((tmp_path / f"{half}.json").read_text())]
    assert len(got["all"]) == 12
    assert sorted(got["first"] + got["second"]) == sorted(got["all"])
    assert not set(got["first"]) & set(got["second"])
    kinds = Counter(i % 3 for i in (int(q[1:3]) for q in got["all"]))
    assert sorted(kinds.values()) == [4, 4, 4]


def test_a_filler_is_never_the_question_own_evidence_under_a_filler_id(tmp_path: Path) -> None:
    oracle, subset = write_data(tmp_path)
    held = next(q for q in json.loads(oracle.read_text()) if q["question_id"] == "q20")
    tuned = json.loads(subset.read_text())
    tuned[0]["haystack_sessions"][1] = held["haystack_sessions"][0]  # filler_q00_0 = q20's
    subset.write_text(json.dumps(tuned))
    build(oracle, subset, tmp_path / "out.json", 48, 0, "all")  # the whole pool
    items = {i["question_id"]: i for i in json.loads((tmp_path / "out.json").read_text())}
    assert "filler_q00_0" not in items["q20"]["haystack_session_ids"]
    assert len(items["q20"]["haystack_session_ids"]) == 1 + 47
    assert "filler_q00_0" in items["q21"]["haystack_session_ids"]  # another question's: kept


def test_a_salt_draws_other_fillers_for_the_same_questions(tmp_path: Path) -> None:
    """`--salt` re-draws the fillers and their dates, the same bytes for the same salt, and
    no salt is the build of earlier sessions (the hashes of (question id, session id))."""
    oracle, subset = write_data(tmp_path)
    out = {}
    for name, salt in (("plain", ""), ("a", "B"), ("b", "B"), ("c", "C")):
        build(oracle, subset, tmp_path / f"{name}.json", 5, 0, "all", salt)
        out[name] = json.loads((tmp_path / f"{name}.json").read_text())
    build(oracle, subset, tmp_path / "default.json", 5, 0, "all")
    assert (tmp_path / "default.json").read_bytes() == (tmp_path / "plain.json").read_bytes()
    assert out["a"] == out["b"]
    for other in ("a", "c"):
        assert [i["question_id"] for i in out[other]] == [i["question_id"] for i in out["plain"]]
        changed = sum(i["haystack_session_ids"] != j["haystack_session_ids"]
                      for i, j in zip(out[other], out["plain"], strict=True))
        assert changed > len(out["plain"]) // 2
        for item in out[other]:
            assert [s for s in item["haystack_session_ids"] if "answer" in s] == [
                f"answer_{item['question_id']}_1"]
