"""NEWUSER5's items 6, 9 and 10 (session 33), each through the real `rmh` command line.

6: with a reranker, `rmh search` printed each hit's fused score beside the reranker's order
   (0.040610 above 0.031820 above ... while the order was the reranker's): a hit the reranker
   placed now shows the score it was ordered by, marked; `vault.search` hits carry `rerank`.
9: `rmh status` showed `llm openai m at localhost:11434/v1` as if that base URL could work.
10: `rmh doctor` refused with one line ("model unavailable: cross-encoder ...") when the
   configured reranker could not load, instead of reporting it beside everything else.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.forks import run_cli
from tests.vault.retrieval.test_rerank import build_model

ROOT = Path(__file__).resolve().parents[3]
NOTES = {"Greenhouse.md": "# Greenhouse\nThe greenhouse holds tomato seedlings. Marta orders.\n",
         "Marta.md": "# Marta\nMarta orders tomato seeds from Italy.\n",
         "Compost.md": "# Compost\nCompost heap behind the greenhouse.\n",
         "Aphids.md": "# Aphids\nAphids on the roses; tomato plants too.\n"}


def rmh(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("RMH_VAULT", "RMH_CONFIG")}
    env.update(PYTHONPATH=str(ROOT), XDG_CACHE_HOME=str(home))
    return run_cli(args, env=env, cwd=ROOT, timeout=120)


def _vault(tmp_path: Path) -> Path:
    vault = tmp_path / "v"
    vault.mkdir()
    for name, text in NOTES.items():
        (vault / name).write_text(text, encoding="utf-8")
    assert rmh("--vault", str(vault), "init", "--no-dense", home=tmp_path).returncode == 0
    return vault


def test_search_prints_the_score_the_reranker_ordered_by(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    model = tmp_path / "rr"
    model.mkdir()
    build_model(model)
    (vault / "rmh.toml").write_text(f'[rerank]\nmodel_dir = "{model}"\ntop_n = 4\nkeep = 2\n',
                                    encoding="utf-8")
    text = rmh("--vault", str(vault), "search", "tomato seeds", "--no-dense", "--no-learn",
               home=tmp_path)
    assert text.returncode == 0, text.stderr
    doc = json.loads(rmh("--vault", str(vault), "search", "tomato seeds", "--no-dense",
                         "--no-learn", "--json", "--explain", home=tmp_path).stdout)
    hits = doc["hits"]
    assert len(hits) >= 3
    placed = [h for h in hits if "rerank" in h]
    assert [h["note"] for h in placed] == [h["note"] for h in hits[:2]]  # keep = 2, first
    assert all(h["rerank"] == h["receipt"]["rerank"] for h in placed)
    assert placed[0]["rerank"] >= placed[1]["rerank"]
    lines = [ln for ln in text.stdout.splitlines() if ln[:3].strip().rstrip(".").isdigit()]
    for hit, ln in zip(hits, lines, strict=False):
        shown = float(ln.split()[1])
        want = hit["rerank"] if "rerank" in hit else hit["score"]
        assert abs(shown - want) < 1e-6, (ln, hit)
        assert ln.endswith("(reranker's score)") == ("rerank" in hit)


def test_doctor_reports_a_reranker_that_cannot_load(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    missing = tmp_path / "no-such-model"
    (vault / "rmh.toml").write_text(f'[rerank]\nmodel_dir = "{missing}"\n', encoding="utf-8")
    search = rmh("--vault", str(vault), "search", "tomato", "--no-dense", home=tmp_path)
    assert search.returncode == 1 and "model unavailable" in search.stderr  # as README says
    out = rmh("--vault", str(vault), "doctor", home=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "WARNING (rerank): model unavailable" in out.stdout
    assert "notes 4" in out.stdout  # the rest of the report is there
    doc = json.loads(rmh("--vault", str(vault), "doctor", "--json", home=tmp_path).stdout)
    assert doc["rerank"]["state"].startswith("unavailable: ")
    assert str(missing) in doc["rerank"]["state"]


def test_status_says_a_base_url_without_a_scheme_cannot_work(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    (vault / "rmh.toml").write_text('[llm]\nbase_url = "localhost:11434/v1"\nmodel = "m"\n',
                                    encoding="utf-8")
    out = rmh("--vault", str(vault), "status", "--no-dense", home=tmp_path)
    assert out.returncode == 0, out.stderr
    llm = [ln for ln in out.stdout.splitlines() if ln.startswith("llm")]
    assert llm and "is no http(s) URL" in llm[0], out.stdout
    doc = json.loads(rmh("--vault", str(vault), "status", "--no-dense", "--json",
                         home=tmp_path).stdout)
    assert "is no http(s) URL" in doc["llm"]["reason"]
    (vault / "rmh.toml").write_text('[llm]\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "m"\n',
                                    encoding="utf-8")
    fine = json.loads(rmh("--vault", str(vault), "status", "--no-dense", "--json",
                          home=tmp_path).stdout)
    assert fine["llm"]["reason"] == "" and fine["llm"]["endpoint"] == "http://127.0.0.1:9/v1"
