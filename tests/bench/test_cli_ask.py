"""`rmh bench-ask` end to end: a real `rmh` process runs the ask loop over the generated
knowledge vault and reports it next to search (the loop is harness's `ask_loop`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


def test_bench_ask_knowledge_runs_the_loop(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "TMPDIR")}
    env.update(HOME=str(tmp_path), RMH_EMBED_CACHE="", PYTHONPATH=str(REPO))
    proc = subprocess.run(
        [sys.executable, "-m", "harness", "bench-ask", "knowledge", "--limit", "2", "--json"],
        capture_output=True, text=True, env=env, timeout=600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads(proc.stdout)
    assert report["questions"] == 2
    assert {"ask", "full", "rrf"} <= set(report["all"])
    assert 0.0 <= report["all"]["ask"]["recall@10"] <= 1.0
