"""`rmh ask` offline on notes as Obsidian users write them: `# Title` first, hard-wrapped text.

The extractive answerer sees each note rendered with its title as a heading above a body that
often opens with the same `# Title`: a title is no answer, and a repeated sentence is said once.
A paragraph wrapped over lines is one paragraph, so its sentence is not cut at the wrap.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.forks import run_cli

ROOT = Path(__file__).resolve().parents[2]

INCIDENT = """---
date: 2024-03-14
tags: [incident]
---
# Incident 2024-03-14 ledger lag
Ledger consumer lag reached 47 minutes after a broker restart. Root cause: a rebalance storm
because `session.timeout.ms` was 6 s. Fix: raised to 45 s.
Incident commander: [[Jorg]].
"""
RUNBOOK = """# Kafka consumer lag
If ledger lag grows, check the consumer group `ledger-recon`.
Past incident: [[Incident 2024-03-14 ledger lag]].
"""


def rmh(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("RMH_VAULT", "RMH_CONFIG", "RMH_MODEL", "OPENAI_BASE_URL")}
    env["PYTHONPATH"] = str(ROOT)
    return run_cli(["--vault", str(root), *args], env=env, cwd=ROOT, timeout=180)


def test_offline_ask_answers_from_the_body_not_the_repeated_title(tmp_path: Path) -> None:
    root = tmp_path / "v"
    (root / "incidents").mkdir(parents=True)
    (root / "incidents" / "Incident 2024-03-14 ledger lag.md").write_text(INCIDENT, "utf-8")
    (root / "Kafka consumer lag.md").write_text(RUNBOOK, "utf-8")
    (root / "Jorg.md").write_text("SRE, runs on-call.\n", "utf-8")
    assert rmh(root, "init", "--no-dense").returncode == 0
    r = rmh(root, "ask", "What caused the ledger lag incident?", "--budget", "2", "--no-dense",
            "--json")
    assert r.returncode == 0, r.stderr
    answer = json.loads(r.stdout)["answer"]
    assert answer.startswith("[extractive] ")
    # the cause, whole: the wrapped line is part of its sentence
    assert "a rebalance storm because `session.timeout.ms` was 6 s." in answer
    # the title is no answer, and no sentence is said twice
    assert answer.count("Incident 2024-03-14 ledger lag. ") == 0
    body = answer.removeprefix("[extractive] ")
    sentences = [s for s in body.split(". ") if s]
    assert len(sentences) == len(set(sentences)), answer
