"""`rmh setup CLIENT` as a user runs it: real subprocesses, a fake home folder, real settings
files of every client (merged, never clobbered, backed up), the vault initialised when needed,
and the written server entry started by the official MCP SDK client, whose first search works."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.forks import run_cli

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


def rmh(*args: str, home: Path, cwd: Path | None = None,
        env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items()
            if k not in ("RMH_VAULT", "RMH_CONFIG", "XDG_CONFIG_HOME", "CODEX_HOME", "APPDATA")}
    base.update({"HOME": str(home), "PYTHONPATH": str(ROOT), **(env or {})})
    return run_cli(args, env=base, cwd=cwd or ROOT)  # stdin: an empty file, not a terminal


def seeded_vault(tmp_path: Path) -> Path:
    vault = tmp_path / "notes"
    vault.mkdir()
    (vault / "Billing.md").write_text("Alice owns the billing service. It charges monthly.\n",
                                      encoding="utf-8")
    (vault / "Alice.md").write_text("Alice leads payments. See [[Billing]].\n", encoding="utf-8")
    return vault


def test_claude_code_merges_backs_up_initialises_and_the_first_search_works(
        tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    settings = home / ".claude.json"
    old: dict[str, Any] = {"theme": "dark",
                           "mcpServers": {"other": {"command": "other-server", "args": []}}}
    settings.write_text(json.dumps(old), encoding="utf-8")
    vault = seeded_vault(tmp_path)

    refused = rmh("setup", "claude-code", "--vault", str(vault), "--no-dense", home=home)
    assert refused.returncode == 1 and "--yes" in refused.stderr  # not a terminal: no guess
    assert json.loads(settings.read_text("utf-8")) == old and not (vault / ".rmh").exists()

    done = rmh("setup", "claude-code", "--vault", str(vault), "--no-dense", "--yes", "--json",
               home=home)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["check"]["ok"] is True and "search" in report["check"]["tools"]
    assert report["initialised"]["notes"] == 2 and (vault / ".rmh").is_dir()
    written = json.loads(settings.read_text("utf-8"))
    assert written["theme"] == "dark"
    assert written["mcpServers"]["other"] == {"command": "other-server", "args": []}
    entry = written["mcpServers"]["rmh"]
    assert entry["type"] == "stdio" and Path(entry["command"]).is_absolute()
    assert entry["args"][-3:] == [str(vault), "serve", "--no-dense"]
    assert json.loads(Path(report["backup"]).read_text("utf-8")) == old

    async def first_search() -> dict[str, Any]:
        params = StdioServerParameters(command=entry["command"], args=entry["args"],
                                       env={"HOME": str(home), "PYTHONPATH": str(ROOT)},
                                       cwd=str(tmp_path))
        with anyio.fail_after(120):
            async with stdio_client(params) as (rx, tx), ClientSession(rx, tx) as session:
                await session.initialize()
                found = await session.call_tool("search", {"query": "who owns billing"})
                assert not found.is_error
                return dict(found.structured_content or {})

    hits = anyio.run(first_search)["hits"]
    assert hits[0]["note"] in ("Billing.md", "Alice.md")

    again = rmh("setup", "claude-code", "--vault", str(vault), "--no-dense", "--no-check",
                "--json", home=home)
    assert json.loads(again.stdout)["replaced"] is True
    assert json.loads(again.stdout)["backup"] is None  # same bytes: nothing rewritten


def test_codex_toml_keeps_comments_and_other_servers(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    config = home / ".codex" / "config.toml"
    config.write_text('# my settings\nmodel = "o3"\n\n[mcp_servers.docs]\ncommand = "docs"\n'
                      '\n[mcp_servers.rmh]\ncommand = "rmh"\nargs = ["serve"]\n\n'
                      '[mcp_servers.rmh.env]\nX = "1"\n\n[profiles.fast]\nmodel = "mini"\n',
                      encoding="utf-8")
    vault = seeded_vault(tmp_path)
    r = rmh("--vault", str(vault), "setup", "codex", "--yes", "--no-dense", "--no-check",
            home=home)
    assert r.returncode == 0, r.stderr
    text = config.read_text("utf-8")
    doc = tomllib.loads(text)
    assert text.startswith("# my settings\n") and doc["model"] == "o3"
    assert doc["mcp_servers"]["docs"] == {"command": "docs"}
    assert doc["profiles"]["fast"] == {"model": "mini"}
    ours = doc["mcp_servers"]["rmh"]
    assert set(ours) == {"command", "args"} and ours["args"][-2:] == ["serve", "--no-dense"]
    assert Path(str(config) + ".bak").read_text("utf-8").startswith("# my settings")


def test_bad_settings_are_refused_untouched(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".cursor").mkdir(parents=True)
    broken = home / ".cursor" / "mcp.json"
    broken.write_text('{"mcpServers": {', encoding="utf-8")
    vault = seeded_vault(tmp_path)
    r = rmh("setup", "cursor", "--vault", str(vault), "--yes", "--no-dense", "--no-check",
            "--json", home=home)
    assert r.returncode == 1 and "not valid JSON" in r.stderr
    assert json.loads(r.stdout)["error"]["message"]
    assert broken.read_text("utf-8") == '{"mcpServers": {'
    assert not list(broken.parent.glob("*.bak"))
    assert not (vault / ".rmh").exists()  # refused before the folder is initialised
    r = rmh("setup", "claude-desktop", "--scope", "project", "--vault", str(vault), "--yes",
            "--no-dense", "--no-check", home=home)
    assert r.returncode == 1 and "no project settings" in r.stderr
    assert not (vault / ".rmh").exists()
    shaped = home / ".cursor" / "mcp.json"
    shaped.write_text('{"mcpServers": []}', encoding="utf-8")
    r = rmh("setup", "cursor", "--vault", str(vault), "--no-dense", "--no-check", home=home)
    assert r.returncode == 1 and "not an object" in r.stderr
    assert shaped.read_text("utf-8") == '{"mcpServers": []}'


def test_print_desktop_project_scopes_and_generic(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    vault = seeded_vault(tmp_path)
    assert rmh("init", str(vault), "--no-dense", home=home).returncode == 0
    printed = rmh("setup", "claude-desktop", "--vault", str(vault), "--print", "--no-check",
                  home=home)
    assert printed.returncode == 0, printed.stderr
    entry = json.loads(printed.stdout)["mcpServers"]["rmh"]
    assert Path(entry["command"]).is_absolute() and str(vault) in entry["args"]
    assert not any(home.rglob("*.json"))  # --print writes nothing
    dotted = rmh("setup", "generic", "--vault", f"{vault.name}/../{vault.name}", "--print",
                 "--no-check", home=home, cwd=vault.parent)  # relative, with a `..`
    assert dotted.returncode == 0, dotted.stderr
    args = json.loads(dotted.stdout)["mcpServers"]["rmh"]["args"]
    assert args[args.index("--vault") + 1] == str(vault.resolve())

    xdg = tmp_path / "xdg"
    r = rmh("setup", "claude-desktop", "--vault", str(vault), "--no-check", home=home,
            env={"XDG_CONFIG_HOME": str(xdg)})
    assert r.returncode == 0, r.stderr
    desktop = json.loads((xdg / "Claude" / "claude_desktop_config.json").read_text("utf-8"))
    assert "type" not in desktop["mcpServers"]["rmh"]

    project = tmp_path / "project"
    project.mkdir()
    for client, file in (("claude-code", ".mcp.json"), ("cursor", ".cursor/mcp.json")):
        r = rmh("setup", client, "--scope", "project", "--vault", str(vault), "--no-check",
                home=home, cwd=project)
        assert r.returncode == 0, r.stderr
        assert "rmh" in json.loads((project / file).read_text("utf-8"))["mcpServers"]
    generic = rmh("setup", "generic", "--vault", str(vault), home=home)
    assert generic.returncode == 0, generic.stderr
    assert json.loads(generic.stdout)["mcpServers"]["rmh"]["args"][-1] == "serve"
    assert "answers over MCP" in generic.stderr


@pytest.mark.parametrize("answer, initialised", [("n\n", False), ("\n", True)])
def test_on_a_terminal_setup_asks_before_initialising(tmp_path: Path, answer: str,
                                                      initialised: bool) -> None:
    home = tmp_path / "home"
    home.mkdir()
    vault = seeded_vault(tmp_path)
    primary, secondary = os.openpty()  # stdin is a terminal: setup asks there
    env = {k: v for k, v in os.environ.items() if k not in ("RMH_VAULT", "RMH_CONFIG")}
    env.update({"HOME": str(home), "PYTHONPATH": str(ROOT)})
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness", "setup", "cursor", "--vault", str(vault),
         "--no-dense", "--no-check"], stdin=secondary, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)
    os.close(secondary)
    try:
        os.write(primary, answer.encode())
        _, err = proc.communicate(timeout=300)
    finally:
        os.close(primary)
    assert "is not an rmh vault yet. Initialise it? [Y/n]" in err
    settings = home / ".cursor" / "mcp.json"
    if initialised:
        assert proc.returncode == 0, err
        assert (vault / ".rmh").is_dir() and "rmh" in json.loads(
            settings.read_text("utf-8"))["mcpServers"]
    else:
        assert proc.returncode == 1 and "nothing written" in err
        assert not (vault / ".rmh").exists() and not settings.exists()


def test_off_a_terminal_setup_without_yes_is_not_a_vault_and_writes_nothing(
        tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    vault = seeded_vault(tmp_path)
    r = rmh("setup", "cursor", "--vault", str(vault), "--no-dense", "--json", home=home)
    assert r.returncode == 1
    error = json.loads(r.stdout)["error"]
    assert error["kind"] == "not_a_vault" and "--yes" in error["reason"]
    assert not (vault / ".rmh").exists() and not (home / ".cursor").exists()
    a_file = tmp_path / "file.md"
    a_file.write_text("x", encoding="utf-8")
    r = rmh("--vault", str(a_file), "search", "x", "--json", home=home)
    assert r.returncode == 1
    assert json.loads(r.stdout)["error"] == {
        "kind": "not_a_vault", "message": f"not a vault: {a_file} (not a folder)",
        "reason": "not a folder"}


@pytest.mark.parametrize("made", [None, "new", "a/new", "a/b/new"])
def test_a_settings_write_refused_after_the_init_takes_the_init_back(
        tmp_path: Path, made: str | None) -> None:
    """The settings file's name (245 bytes) reads and merges, but its backup and temporary
    names pass 255 bytes: the write after the init fails, and the init is taken back, with
    every folder it made (the vault's missing parents too)."""
    home = tmp_path / "home"
    home.mkdir()
    settings = tmp_path / "cfg" / ("s" * 240 + ".json")
    settings.parent.mkdir()
    settings.write_text('{"theme": "dark"}', encoding="utf-8")
    vault = seeded_vault(tmp_path) if made is None else tmp_path / made
    kept = sorted(p.name for p in vault.iterdir()) if vault.exists() else None
    around = sorted(p.name for p in tmp_path.iterdir())
    r = rmh("setup", "claude-code", "--vault", str(vault), "--config", str(settings), "--yes",
            "--no-dense", "--no-check", home=home)
    assert r.returncode == 1
    assert "cannot write it" in r.stderr and "was taken back" in r.stderr
    assert (sorted(p.name for p in vault.iterdir()) if vault.exists() else None) == kept
    assert settings.read_text("utf-8") == '{"theme": "dark"}'
    assert [p.name for p in settings.parent.iterdir()] == [settings.name]  # no backup left
    assert sorted(p.name for p in tmp_path.iterdir()) == around  # no parent left behind
