"""A search hit's snippet, and an offline answer, leave out Obsidian's block ids (` ^idem` at a
line's end: the anchor `[[Note#^idem]]` names, which Obsidian never shows); they read
"... header. ^idem - ledger ..." before."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.forks import run_cli

ROOT = Path(__file__).resolve().parents[2]

API = """# payments-api
Every POST carries an `Idempotency-Key` header. See [[ADR-007]]. ^idem
- the ledger consumes payment events
- a table row ^row-2
"""


def rmh(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("RMH_VAULT", "RMH_CONFIG", "RMH_MODEL", "OPENAI_BASE_URL")}
    env["PYTHONPATH"] = str(ROOT)
    return run_cli(["--vault", str(root), *args], env=env, cwd=ROOT, timeout=180)


def test_snippets_and_offline_answers_leave_out_block_ids(tmp_path: Path) -> None:
    root = tmp_path / "v"
    root.mkdir()
    (root / "payments-api.md").write_text(API, "utf-8")
    (root / "ADR-007.md").write_text("Keys are stored 24 hours. See [[payments-api#^idem]].\n",
                                     "utf-8")
    assert rmh(root, "init", "--no-dense").returncode == 0
    r = rmh(root, "search", "idempotency key header ledger", "--no-dense", "--json")
    assert r.returncode == 0, r.stderr
    hit = next(h for h in json.loads(r.stdout)["hits"] if h["note"] == "payments-api.md")
    assert "header. See ADR-007." in hit["snippet"]
    assert "^" not in hit["snippet"], hit["snippet"]
    a = rmh(root, "ask", "Which header does every POST carry?", "--no-dense", "--json")
    assert a.returncode == 0, a.stderr
    answer = json.loads(a.stdout)["answer"]
    assert "Idempotency-Key" in answer and "^idem" not in answer, answer
    # the link to the block still resolves: the id is kept in the note and the index
    links = json.loads(rmh(root, "links", "ADR-007", "--json").stdout)["links"]
    assert links[0]["resolved"] == "payments-api.md" and links[0]["block"] == "idem", links
