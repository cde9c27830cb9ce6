"""harness.client_config on the files users really have: a dotfiles symbolic link, a
dangling one, a FIFO or device put where the settings go, a vault path UTF-8 cannot hold, a
DEL in a TOML string, and two rmh writing one file at once (rmh setup and rmh hooks install)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.client_config import (
    ClientConfigError,
    locked,
    read_json,
    toml_table,
    write_settings,
)
from harness.commands.setup import CLIENTS, write_entry
from harness.hooks_install import SettingsError, install, uninstall

OLD = {"theme": "dark", "mcpServers": {"other": {"command": "x"}}}


@pytest.fixture
def deadline() -> Iterator[None]:
    """A read that would wait forever (a FIFO, /dev/zero) fails the test instead."""
    def expired(*_: object) -> None:
        raise TimeoutError("the read did not return")
    old = signal.signal(signal.SIGALRM, expired)
    signal.alarm(5)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


def test_a_symlinked_settings_file_is_written_through_and_the_link_kept(
        tmp_path: Path) -> None:
    target = tmp_path / "dotfiles" / "claude.json"
    target.parent.mkdir()
    target.write_text(json.dumps(OLD), encoding="utf-8")
    target.chmod(0o640)
    link = tmp_path / ".claude.json"
    link.symlink_to(target)
    write_entry(CLIENTS["claude-code"], link, "rmh", {"command": "rmh"})
    assert link.is_symlink() and link.resolve() == target
    doc = json.loads(target.read_text(encoding="utf-8"))
    assert doc["theme"] == "dark" and set(doc["mcpServers"]) == {"other", "rmh"}
    assert target.stat().st_mode & 0o777 == 0o640


def test_a_dangling_link_is_refused_and_left_as_it_was(tmp_path: Path) -> None:
    link = tmp_path / ".claude.json"
    link.symlink_to(tmp_path / "gone" / "claude.json")
    with pytest.raises(ClientConfigError, match="does not exist"):
        write_entry(CLIENTS["claude-code"], link, "rmh", {"command": "rmh"})
    assert link.is_symlink() and not (tmp_path / "gone").exists()


@pytest.mark.parametrize("kind", ["fifo", "folder"])
def test_a_settings_path_that_is_no_regular_file_is_refused_unopened(
        tmp_path: Path, kind: str, deadline: None) -> None:
    path = tmp_path / "mcp.json"
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.mkdir()
    with pytest.raises(ClientConfigError, match="not a regular file"):
        read_json(path)
    with pytest.raises(ClientConfigError, match="not a regular file"):
        write_settings(path, "{}\n")


def test_a_link_to_a_device_is_refused_unread(tmp_path: Path) -> None:
    """Only the check: a regression would read /dev/zero into memory without end."""
    from harness.client_config import settings_file

    path = tmp_path / "mcp.json"
    path.symlink_to("/dev/zero")
    with pytest.raises(ClientConfigError, match="not a regular file"):
        settings_file(path)


def test_text_utf8_cannot_hold_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    vault = os.fsdecode(bytes(tmp_path) + b"/va\xffult")
    path = tmp_path / "mcp.json"
    with pytest.raises(ClientConfigError, match="UTF-8"):
        write_entry(CLIENTS["cursor"], path, "rmh", {"command": "rmh", "args": [vault]})
    assert list(tmp_path.iterdir()) == []


def test_a_refused_rename_names_the_file_and_leaves_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "mcp.json"
    path.write_text("{}\n", encoding="utf-8")

    def immutable(*_: object) -> None:
        raise PermissionError(1, "Operation not permitted")
    monkeypatch.setattr(os, "replace", immutable)
    with pytest.raises(ClientConfigError, match="cannot write it"):
        write_settings(path, '{"a": 1}\n')
    assert path.read_text(encoding="utf-8") == "{}\n"
    assert not [p for p in tmp_path.iterdir() if p.suffix == ".tmp"]


def test_a_del_in_a_toml_string_is_escaped() -> None:
    entry = {"command": "rmh", "args": ["--vault", "/v\x7fault\"\n[x]"]}
    assert tomllib.loads(toml_table("mcp_servers", "rmh", entry))["mcp_servers"]["rmh"] == entry


def test_setups_at_once_all_land(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps(OLD), encoding="utf-8")
    names = [f"s{i}" for i in range(8)]
    threads = [threading.Thread(target=write_entry,
                                args=(CLIENTS["cursor"], path, n, {"command": n}))
               for n in names]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert set(json.loads(path.read_text(encoding="utf-8"))["mcpServers"]) == {"other", *names}


def test_hooks_install_keeps_the_mode_and_the_link_and_refuses_a_fifo(
        tmp_path: Path, deadline: None) -> None:
    home, vault = tmp_path / "home", tmp_path / "vault"
    target = tmp_path / "dotfiles" / "settings.json"
    target.parent.mkdir()
    target.write_text('{"theme": "dark"}', encoding="utf-8")
    target.chmod(0o644)
    (home / ".claude").mkdir(parents=True)
    link = home / ".claude" / "settings.json"
    link.symlink_to(target)
    install("claude-code", "user", vault, tmp_path, home)
    assert link.is_symlink() and target.stat().st_mode & 0o777 == 0o644
    doc = json.loads(target.read_text(encoding="utf-8"))
    assert doc["theme"] == "dark" and len(doc["hooks"]) == 4
    link.unlink()
    os.mkfifo(link)
    with pytest.raises(SettingsError, match="not a regular file"):
        install("claude-code", "user", vault, tmp_path, home)


@pytest.mark.parametrize("other", [{}, {"theme": "dark"}])
def test_hooks_uninstall_through_a_link_keeps_the_link_and_clears_the_target(
        tmp_path: Path, deadline: None, other: dict[str, str]) -> None:
    home, vault = tmp_path / "home", tmp_path / "vault"
    target = tmp_path / "dotfiles" / "settings.json"
    target.parent.mkdir()
    target.write_text(json.dumps(other), encoding="utf-8")
    (home / ".claude").mkdir(parents=True)
    link = home / ".claude" / "settings.json"
    link.symlink_to(target)
    install("claude-code", "user", vault, tmp_path, home)
    assert uninstall("claude-code", "user", tmp_path, home)["removed"] == 4
    assert link.is_symlink() and link.resolve() == target.resolve()
    assert json.loads(target.read_text(encoding="utf-8")) == other  # no rmh hook left in it


KILLED_WRITE = """
import os, signal, sys
from pathlib import Path
from harness.client_config import locked, write_settings
os.replace = lambda *a, **k: os.kill(os.getpid(), signal.SIGKILL)  # killed before its rename
with locked(Path(sys.argv[1])):
    write_settings(Path(sys.argv[1]), sys.argv[2])
"""


@pytest.mark.parametrize("name", ["settings.json", ".claude.json", "config.toml"])
def test_a_temporary_left_by_a_killed_write_is_removed_by_the_next(
        tmp_path: Path, name: str) -> None:
    """`rmh setup` killed between its temporary's fsync and its rename left
    `.NAME.XXXXXXXX.tmp` in the client's folder (`$HOME` for Claude Code) for good: no later
    run removed it (docs/measurements/session31/STORE5_setup_kill: 1 of 16 kills). The next
    write removes rmh's own; another program's temporary of that name shape is kept."""
    path = tmp_path / "home" / name
    path.parent.mkdir()
    path.write_text("old\n", encoding="utf-8")
    theirs = path.parent / f".{name}.a1b2c3d4.tmp"
    theirs.write_text("another program's\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    child = subprocess.run([sys.executable, "-c", KILLED_WRITE, str(path), "new\n"], env=env,
                           capture_output=True, text=True, timeout=60)
    assert child.returncode == -signal.SIGKILL, child.stderr
    assert path.read_text(encoding="utf-8") == "old\n"
    assert len([p for p in path.parent.iterdir() if p.name.endswith(".tmp")]) == 2
    with locked(path):
        write_settings(path, "newer\n")
    assert path.read_text(encoding="utf-8") == "newer\n"
    assert [p for p in path.parent.iterdir() if p.name.endswith(".tmp")] == [theirs]
