"""`rmh learning` (no note) prints its report as indented text, as `rmh doctor` does.

Before session 33 it printed the report as indented JSON (`{`, `"archived": 0,`, a histogram
one number a line), the one human form of the CLI that was JSON (NOTES-NEWUSER4.md item 6);
`--json` is the JSON document.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.forks import run_cli

ROOT = Path(__file__).resolve().parents[3]

NOTES = {f"n{i}.md": f"# N{i}\n\nLinks to [[n{(i + 1) % 4}]].\n" for i in range(4)}


def rmh(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("RMH_VAULT", "RMH_CONFIG")}
    env.update(PYTHONPATH=str(ROOT), XDG_CACHE_HOME=str(home))
    return run_cli(args, env=env, cwd=ROOT, timeout=120)


def test_learning_prints_text_and_json_only_when_asked(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    vault.mkdir()
    for name, text in NOTES.items():
        (vault / name).write_text(text, encoding="utf-8")
    assert rmh("--vault", str(vault), "init", "--no-dense", home=tmp_path).returncode == 0
    rmh("--vault", str(vault), "search", "links n1", "--no-dense", home=tmp_path)
    out = rmh("--vault", str(vault), "learning", home=tmp_path)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines and not any(line.lstrip().startswith(("{", "}", '"')) for line in lines), lines
    for line in (line for line in lines if ": " in line):
        value = line.partition(": ")[2]
        assert not value.startswith(("{", "[", "(")), line
        assert value not in ("None", "null", ""), line
    assert "events:" in lines and "  search: 1" in lines
    assert any(line.startswith("    histogram_0_1: ") for line in lines), lines
    doc = json.loads(rmh("--vault", str(vault), "learning", "--json", home=tmp_path).stdout)
    assert doc["events"]["search"] == 1
