"""`rmh doctor`'s text form shows nested tables and lists as indented lines.

Before session 32 every nested value of a section was printed as a Python repr: `edges:
{'pairs': 0, 'weights': {'count': 0}}`, `available: ['landlock+seccomp', 'seccomp']`,
`tier_limits: {...}` as one line of several hundred characters, `version: None`.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.forks import run_cli

ROOT = Path(__file__).resolve().parents[3]

NOTES = {f"n{i}.md": f"# N{i}\n\nLinks to [[n{(i + 1) % 5}]] and [[n{(i + 2) % 5}]].\n"
         for i in range(5)}


def rmh(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("RMH_VAULT", "RMH_CONFIG")}
    env.update(PYTHONPATH=str(ROOT), XDG_CACHE_HOME=str(home))
    return run_cli(args, env=env, cwd=ROOT, timeout=120)


@pytest.mark.parametrize("searches", [0, 3])
def test_doctor_prints_no_python_reprs(tmp_path: Path, searches: int) -> None:
    vault = tmp_path / "v"
    vault.mkdir()
    for name, text in NOTES.items():
        (vault / name).write_text(text, encoding="utf-8")
    assert rmh("--vault", str(vault), "init", "--no-dense", home=tmp_path).returncode == 0
    for i in range(searches):
        rmh("--vault", str(vault), "search", f"links n{i}", "--no-dense", home=tmp_path)
    out = rmh("--vault", str(vault), "doctor", home=tmp_path)
    assert out.returncode == 0, out.stderr
    for line in (line for line in out.stdout.splitlines() if ": " in line):
        value = line.partition(": ")[2]
        assert not value.startswith(("{", "[", "(")), line
        assert value not in ("None", ""), line
    assert "\nlearning:\n" in out.stdout and "\n  q:\n" in out.stdout
    assert "\nsandbox:\n  available:\n    - " in out.stdout
