"""An rmh.toml nested past the TOML parser's depth is a ConfigError (one line from every
command, `rmh serve` answering with it), not a RecursionError traceback (PLUG5, session 31)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from harness.config import ConfigError, load
from tests.harness.test_cli_notes import make_vault, rmh

DEPTH = sys.getrecursionlimit() * 2
NESTS = {"array": "[" * DEPTH + "]" * DEPTH, "inline table": "{a=" * DEPTH + "1" + "}" * DEPTH,
         "unclosed array": "[" * DEPTH}


@pytest.mark.parametrize("name", sorted(NESTS))
def test_a_nested_rmh_toml_is_a_config_error(tmp_path: Path, name: str) -> None:
    path = tmp_path / "rmh.toml"
    path.write_text(f"[llm]\nmodel = {NESTS[name]}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"cannot read .*rmh\.toml"):
        load(vault=tmp_path, env={}, config_file=path)


@pytest.mark.slow
def test_every_command_says_so_in_one_line(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    (root / "rmh.toml").write_text(f"[search]\nk = {NESTS['array']}\n", encoding="utf-8")
    for argv in (("status",), ("search", "billing"), ("read", "Alice")):
        r = rmh("--vault", str(root), *argv)
        assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
        assert r.stderr.startswith("rmh: cannot read ") and "rmh.toml" in r.stderr, r.stderr
