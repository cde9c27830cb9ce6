"""bench/beir_sample.py: judged documents always kept, the others a deterministic nested
sample in file order, halves that partition the queries by numeric id, and an output that
bench/beir.py loads."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from bench.beir import load_beir
from bench.beir_sample import sample


def write_src(folder: Path, n_docs: int = 60, n_queries: int = 12) -> Path:
    """A BEIR collection: query q judges docs 3q and 3q+1 (score 1) and 3q+2 (score 0)."""
    (folder / "qrels").mkdir(parents=True, exist_ok=True)
    docs = [{"_id": f"{n_docs - i}", "title": f"t{i}", "text": f"doc body {i}."}
            for i in range(n_docs)]  # ids not in file order
    (folder / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    qs = [{"_id": str(q), "text": f"query {q}"} for q in range(1, n_queries + 1)]
    (folder / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in qs))
    rels = ["query-id\tcorpus-id\tscore"] + [f"{q}\t{3 * q + k}\t{int(k < 2)}"
                                             for q in range(1, n_queries + 1) for k in range(3)]
    (folder / "qrels" / "train.tsv").write_text("\n".join(rels) + "\n")
    return folder


def _ids(folder: Path, name: str) -> list[str]:
    return [str(json.loads(ln)["_id"]) for ln in (folder / name).read_text().splitlines()]


def test_judged_kept_others_nested_and_in_file_order(tmp_path: Path) -> None:
    src = write_src(tmp_path / "src")
    judged = {str(3 * q + k) for q in range(1, 13) for k in range(3)}
    kept: list[set[str]] = []
    for others in (0, 5, 10, 1000):
        out = tmp_path / f"o{others}"
        counts = sample(src, out, "train", others, "all", "test")
        ids = _ids(out, "corpus.jsonl")
        assert ids == [i for i in _ids(src, "corpus.jsonl") if i in set(ids)]  # file order
        assert judged <= set(ids)
        assert len(ids) == counts["documents"] == len(judged) + min(others, 60 - len(judged))
        kept.append(set(ids))
    assert kept[0] == judged and kept[0] < kept[1] < kept[2] < kept[3]  # nested samples
    again = tmp_path / "again"
    sample(src, again, "train", 5, "all", "test")
    assert (again / "corpus.jsonl").read_bytes() == (tmp_path / "o5" / "corpus.jsonl").read_bytes()


def test_halves_partition_queries_by_numeric_id(tmp_path: Path) -> None:
    src = write_src(tmp_path / "src")
    sample(src, tmp_path / "h1", "train", 0, "first", "test")
    sample(src, tmp_path / "h2", "train", 0, "second", "test")
    first, second = _ids(tmp_path / "h1", "queries.jsonl"), _ids(tmp_path / "h2", "queries.jsonl")
    assert first == [str(q) for q in range(1, 7)]  # 10, 11, 12 sort after 9 (numeric)
    assert second == [str(q) for q in range(7, 13)]
    for half, qids in (("h1", first), ("h2", second)):
        data = load_beir(tmp_path / half, "test")
        assert sorted(q.qid for q in data.queries) == sorted(qids)  # the loader's own order
        assert all(len(q.gains) == 2 for q in data.queries)  # the score-0 doc is not a gain
        lines = (tmp_path / half / "qrels" / "test.tsv").read_text().splitlines()
        assert lines[0] == "query-id\tcorpus-id\tscore" and len(lines) == 1 + 3 * len(qids)


def test_cli(tmp_path: Path) -> None:
    src = write_src(tmp_path / "src")
    done = subprocess.run([sys.executable, "-m", "bench.beir_sample", str(src),
                           str(tmp_path / "out"), "--split", "train", "--others", "4"],
                          capture_output=True, text=True, check=True,
                          cwd=Path(__file__).resolve().parents[2])
    assert json.loads(done.stdout) == {"documents": 40, "judged_documents": 36,
                                       "queries": 12, "judgements": 36}
    assert load_beir(tmp_path / "out", "train").queries
