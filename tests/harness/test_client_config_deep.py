"""A client's settings file nested past the JSON parser's depth is refused like any other
file that is no JSON object, untouched (PLUG5, session 31): `rmh setup` and `rmh hooks
install` ended in a RecursionError traceback, exit 1."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from harness.client_config import ClientConfigError, read_json
from tests.harness.test_setup_cli import rmh, seeded_vault

DEPTH = sys.getrecursionlimit() * 2
DEEP = {"array": "[" * DEPTH + "]" * DEPTH,
        "object": '{"a":' * DEPTH + "1" + "}" * DEPTH,
        "under a key": '{"mcpServers": {"x": ' + "[" * DEPTH + "]" * DEPTH + "}}",
        "unclosed": '{"hooks": ' + "[" * DEPTH}


@pytest.mark.parametrize("name", sorted(DEEP))
def test_read_json_refuses_a_file_nested_past_the_parser(tmp_path: Path, name: str) -> None:
    path = tmp_path / "settings.json"
    path.write_text(DEEP[name], encoding="utf-8")
    with pytest.raises(ClientConfigError, match="nested past the parser's depth"):
        read_json(path)


@pytest.mark.parametrize(("argv", "where"), [
    (("setup", "claude-code", "--yes", "--no-dense", "--no-check"), ".claude.json"),
    (("setup", "cursor", "--yes", "--no-dense", "--no-check"), ".cursor/mcp.json"),
    (("hooks", "install", "claude-code", "--user"), ".claude/settings.json"),
    (("hooks", "install", "gemini", "--user"), ".gemini/settings.json")])
def test_setup_and_hooks_install_refuse_it_in_one_line(tmp_path: Path, argv: tuple[str, ...],
                                                      where: str) -> None:
    home = tmp_path / "home"
    settings = home / where
    settings.parent.mkdir(parents=True)
    settings.write_text(DEEP["array"], encoding="utf-8")
    vault = seeded_vault(tmp_path)
    assert rmh("init", str(vault), "--no-dense", home=home).returncode == 0  # hooks need one
    r = rmh("--vault", str(vault), *argv, home=home)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert "nested past the parser's depth" in r.stderr and str(settings) in r.stderr
    assert settings.read_text("utf-8") == DEEP["array"]


@pytest.mark.parametrize("nest", ["array", "inline table"])
def test_setup_codex_refuses_a_config_toml_nested_past_the_parser(tmp_path: Path,
                                                                  nest: str) -> None:
    text = ("x = " + "[" * DEPTH + "]" * DEPTH if nest == "array"
            else "x = " + "{a=" * DEPTH + "1" + "}" * DEPTH) + "\n"
    home = tmp_path / "home"
    settings = home / ".codex" / "config.toml"
    settings.parent.mkdir(parents=True)
    settings.write_text(text, encoding="utf-8")
    vault = seeded_vault(tmp_path)
    r = rmh("setup", "codex", "--vault", str(vault), "--yes", "--no-dense", "--no-check",
            home=home)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert "not valid TOML" in r.stderr and str(settings) in r.stderr
    assert settings.read_text("utf-8") == text
