"""NEWUSER7 (session 36): a new user's surprises, through the real `rmh` command line.

- `[sandbox] worker_user = "nosuchuser"` (a typo, or a config copied from another machine):
  `rmh status` and `rmh doctor` died with a ValueError traceback, while `rmh exec` said it in
  one line. Both now answer, saying code execution is refused and why.
- `rmh --vault ../notes hooks install claude-code` wrote `PROJECT/../notes` into the client's
  hook commands (`rmh setup` resolves the vault: "the client runs elsewhere"): renaming or
  removing the project folder broke every hook. The hooks now name the resolved vault.
- `[llm] api_key = 5` said "must be a string (a string), not a int"; now "must be a string,
  not an integer" (a secret's value is still never shown).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from pathlib import Path

from tests.forks import run_cli

ROOT = Path(__file__).resolve().parents[3]


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("RMH_VAULT", "RMH_CONFIG")}
    env.update(PYTHONPATH=str(ROOT), XDG_CACHE_HOME=str(home), HOME=str(home))
    return env


def _vault(tmp_path: Path, toml: str) -> Path:
    vault = tmp_path / "notes"
    vault.mkdir()
    (vault / "Ledger.md").write_text("# Ledger\nBob Martinez approved the ledger hosting budget.\n",
                                     encoding="utf-8")
    (vault / "rmh.toml").write_text(toml, encoding="utf-8")
    init = run_cli(("--vault", str(vault), "init", "--no-dense"), env=_env(tmp_path), cwd=ROOT,
                   timeout=120)
    assert init.returncode == 0, init.stderr
    return vault


def test_an_unknown_worker_user_is_reported_not_a_traceback(tmp_path: Path) -> None:
    vault = _vault(tmp_path, '[sandbox]\nworker_user = "nosuchuser"\n')
    env = _env(tmp_path)
    status = run_cli(("--vault", str(vault), "status", "--no-dense"), env=env, cwd=ROOT,
                     timeout=120)
    assert "Traceback" not in status.stderr and status.returncode == 0, status.stderr
    line = next(ln for ln in status.stdout.splitlines() if ln.startswith("sandbox"))
    assert line == ("sandbox     none: code execution refused "
                    "(worker_user 'nosuchuser': no such user)")
    doc = run_cli(("--vault", str(vault), "status", "--no-dense", "--json"), env=env, cwd=ROOT,
                  timeout=120)
    assert doc.returncode == 0, doc.stderr
    assert json.loads(doc.stdout)["sandbox"] is None
    doctor = run_cli(("--vault", str(vault), "doctor", "--json"), env=env, cwd=ROOT, timeout=120)
    assert "Traceback" not in doctor.stderr and doctor.returncode == 0, doctor.stderr
    sandbox = json.loads(doctor.stdout)["sandbox"]
    assert sandbox["runs"] is None and "no such user" in sandbox["refused"]


def test_hooks_name_the_resolved_vault_and_survive_a_renamed_project(tmp_path: Path) -> None:
    vault = _vault(tmp_path, "[hooks]\ndaemon = false\n")
    project = tmp_path / "project"
    project.mkdir()
    env = _env(tmp_path)
    done = run_cli(("--vault", "../notes", "hooks", "install", "claude-code"), env=env,
                   cwd=project, timeout=120)
    assert done.returncode == 0, done.stderr
    assert f"vault {vault.resolve()})" in done.stdout
    moved = project.rename(tmp_path / "project-renamed")
    settings = json.loads((moved / ".claude" / "settings.json").read_text(encoding="utf-8"))
    command = settings["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
    assert ".." not in shlex.split(command)
    prompt = {"session_id": "s1", "transcript_path": "", "cwd": str(moved),
              "hook_event_name": "UserPromptSubmit", "prompt": "who approved the ledger budget?"}
    out = subprocess.run(shlex.split(command), input=json.dumps(prompt), capture_output=True,
                         text=True, env=env, cwd=moved, timeout=120)
    assert out.returncode == 0 and out.stderr == "", out.stderr
    context = json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "Ledger.md" in context


def test_a_secret_of_the_wrong_type_is_named_plainly_and_not_shown(tmp_path: Path) -> None:
    """`[llm] api_key = 5` said "must be a string (a string), not a int"."""
    vault = _vault(tmp_path, "")
    env = _env(tmp_path)
    for value, kind in (("5", "an integer"), ("true", "a boolean"), ("[1]", "an array")):
        (vault / "rmh.toml").write_text(f"[llm]\napi_key = {value}\n", encoding="utf-8")
        out = run_cli(("--vault", str(vault), "status", "--no-dense"), env=env, cwd=ROOT,
                      timeout=120)
        assert out.returncode == 1
        assert out.stderr == ("rmh: rmh.toml: [llm].api_key has the wrong type: it must be a "
                              f"string, not {kind}\n")
