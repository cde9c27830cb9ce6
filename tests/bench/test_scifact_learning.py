"""bench/scifact_learning.py: a BEIR folder made here becomes a vault and a questions file
that bench/external_vault.py accepts; related pairs are two claims judging only the same
abstract, unrelated claims judge an abstract no other claim judges."""

from __future__ import annotations

import json
from pathlib import Path

from bench.external_vault import load
from bench.scifact_learning import build, note_name


def beir(root: Path) -> Path:
    """Six abstracts (two with the same title, one titled with a slash); claims: 1 and 2 judge
    only abstract 10, 3 judges 10 and 11, 4 judges 12 alone, 5 and 6 judge 13, 7 judges 14."""
    docs = [("10", "Cells divide"), ("11", "Cells divide"), ("12", "A/B testing"),
            ("13", "Heart"), ("14", "Lungs"), ("15", "Unjudged")]
    (root / "qrels").mkdir(parents=True)
    (root / "corpus.jsonl").write_text("".join(
        json.dumps({"_id": i, "title": t, "text": f"abstract {i} about {t}"}) + "\n"
        for i, t in docs))
    (root / "queries.jsonl").write_text("".join(
        json.dumps({"_id": str(q), "text": f"claim {q}"}) + "\n" for q in range(1, 8)))
    pairs = [(1, 10), (2, 10), (3, 10), (3, 11), (4, 12), (5, 13), (6, 13), (7, 14)]
    (root / "qrels" / "train.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t1\n" for q, d in pairs))
    return root


def test_the_workload_loads_as_an_external_vault(tmp_path: Path) -> None:
    got = build(beir(tmp_path / "beir"), tmp_path / "out", related=10, unrelated=10)
    assert got == {"notes": 6, "related": 2, "unrelated": 2}
    data = json.loads((tmp_path / "out" / "questions.json").read_text())
    assert [(q["question"], q["paraphrase"], q["gold"]) for q in data["related"]] == [
        ("claim 1", "claim 2", ["abstracts/Cells divide.md"]),
        ("claim 5", "claim 6", ["abstracts/Heart.md"])]
    assert [(q["question"], q["gold"]) for q in data["unrelated"]] == [
        ("claim 4", ["abstracts/A B testing.md"]), ("claim 7", ["abstracts/Lungs.md"])]
    assert (tmp_path / "out" / "vault" / "abstracts" / "Cells divide 11.md").is_file()
    ext = load(tmp_path / "out" / "vault", tmp_path / "out" / "questions.json",
               tmp_path / "copy")
    assert ext.reword("claim 1") == "claim 2" and len(ext.unrelated) == 2


def test_note_names_are_safe_and_distinct() -> None:
    taken: set[str] = set()
    names = [note_name(t, i, taken) for t, i in (("a/b: c?", "1"), ("A B C", "2"),
                                                  ("", "3"), ("x" * 300, "4"))]
    assert names[:3] == ["abstracts/a b c.md", "abstracts/A B C 2.md", "abstracts/3.md"]
    assert len(names[3]) == len("abstracts/") + 100 + len(".md")
