"""Configuration a user's environment gets wrong: a section of `rmh.toml` that is no table
(`search = 5`, `[[llm]]`) and a vault path starting `~user` for no such user. Both were a
traceback (TypeError/ValueError from `dict(...)`, RuntimeError from `Path.expanduser`) from
every command and `rmh serve`, or (an array of pairs) silently read as a table."""

from __future__ import annotations

import json
import os
import pwd
import subprocess
import sys
from pathlib import Path

import pytest

from harness.config import _SECTIONS, ConfigError, load

ROOT = Path(__file__).resolve().parents[2]
NO_TABLE = ("5", '"x"', "true", "[1, 2]", '[["model", "x"]]', "[[1, 2]]")


def _no_such_user() -> str:
    name = "rmh-no-such-user"
    with pytest.raises(KeyError):
        pwd.getpwnam(name)
    return name


def test_a_section_that_is_no_table_is_a_config_error(tmp_path: Path) -> None:
    path = tmp_path / "rmh.toml"
    for section in _SECTIONS:
        texts = [f"{section} = {value}\n" for value in NO_TABLE]
        texts.append(f"[[{section}]]\nk = 3\n")  # an array of tables
        for text in texts:
            path.write_text(text, encoding="utf-8")
            with pytest.raises(ConfigError, match=f"{section} must be a table"):
                load(vault=tmp_path, env={}, config_file=path)


def test_a_tilde_of_no_such_user_is_kept_as_written(tmp_path: Path) -> None:
    user = _no_such_user()
    cfg = load(vault=f"~{user}/v", env={})
    assert cfg.vault == Path.cwd() / f"~{user}" / "v"
    base = {k: v for k, v in os.environ.items() if k not in ("RMH_VAULT", "RMH_CONFIG")}
    base["PYTHONPATH"] = str(ROOT)

    def rmh(*argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "harness", *argv], cwd=tmp_path,
                              env={**base, **(env or {})}, capture_output=True, text=True,
                              timeout=120, check=False, stdin=subprocess.DEVNULL)

    for argv, env in (((f"--vault=~{user}/v", "read", "x", "--json"), None),
                      (("read", "x", "--json"), {"RMH_VAULT": f"~{user}/v"}),
                      ((f"--vault=~{user}/v", "status", "--json"), None)):
        r = rmh(*argv, env=env)
        assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
        assert json.loads(r.stdout)["error"]["kind"] == "not_a_vault", argv
    # as `mkdir ~nosuchuser` in a shell: a folder of that name, here
    r = rmh("init", f"~{user}/v", "--no-dense")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / f"~{user}" / "v" / ".rmh").is_dir()
