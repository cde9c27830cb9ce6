"""Reading `rmh.toml` or `$RMH_CONFIG` (harness/config_file.py): never a wait. A FIFO with no
writer, a device or a folder is a config_error at once, through the real CLI and `rmh serve`
too; a FIFO with a writer (`RMH_CONFIG=<(...)`) is read; an endless writer is cut off."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness import config_file
from harness.config import ConfigError, load
from harness.config_file import MAX_CONFIG_BYTES, read_config
from tests.forks import run_cli
from tests.harness.test_cli_notes import ROOT, make_vault


@contextlib.contextmanager
def _feed(path: Path, data: bytes, *, close: bool = True) -> Iterator[None]:
    """While in the block, the FIFO `path` has a writer: a thread that has opened it (waited
    for, not guessed at: a sleep of 0.2 s for the thread to reach its open was too short on a
    loaded machine, and the read found no writer), writes `data` and closes it, or unless
    `close` holds it open until the block ends (HOLD_S at most). A reader of ours that never
    reads holds the FIFO meanwhile, so the writer's open returns at once and what it writes
    is kept until the reader under test takes it."""
    holder = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    opened, done = threading.Event(), threading.Event()

    def write() -> None:
        fd = os.open(path, os.O_WRONLY)
        opened.set()
        os.write(fd, data)
        if not close:
            done.wait(HOLD_S)
        os.close(fd)

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    try:
        assert opened.wait(HOLD_S)
        yield
    finally:
        done.set()
        thread.join()
        os.close(holder)


HOLD_S = 30.0  # an endless writer's end: a read that is not cut off gets its data then


def test_a_fifo_with_no_writer_is_refused_at_once(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "c.toml")
    start = time.monotonic()
    with pytest.raises(OSError) as got:
        read_config(tmp_path / "c.toml")
    assert got.value.errno == errno.ENXIO and "no writer" in str(got.value)
    assert time.monotonic() - start < 1.0


def test_a_fifo_with_a_writer_is_read(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    os.mkfifo(path)
    with _feed(path, b"[search]\nk = 3\n"):
        assert read_config(path) == b"[search]\nk = 3\n"
    with _feed(path, b"[search]\nk = 4\n"):
        assert load(vault=tmp_path, env={"RMH_CONFIG": str(path)}).search.k == 4


def test_a_writer_that_never_finishes_is_cut_off(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Cut off after WAIT_S, the writer still holding the FIFO open: a read that waited
    for the writer's end would get the bytes instead, HOLD_S later (no clock is read here:
    ETIMEDOUT is only raised by the cut)."""
    monkeypatch.setattr(config_file, "WAIT_S", 0.5)
    path = tmp_path / "c.toml"
    os.mkfifo(path)
    with _feed(path, b"[search]\n", close=False), pytest.raises(OSError) as got:
        read_config(path)
    assert got.value.errno == errno.ETIMEDOUT


@pytest.mark.parametrize("kind", ["device", "folder", "huge"])
def test_other_files_are_refused(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "c.toml"
    if kind == "device":
        path.symlink_to("/dev/zero")
    elif kind == "folder":
        path.mkdir()
    else:
        path.write_bytes(b"#" * (MAX_CONFIG_BYTES + 1))
    with pytest.raises(ConfigError, match="cannot read"):
        load(vault=tmp_path, env={"RMH_CONFIG": str(path)})


def _cli(*args: str, env: dict[str, str], stdin: str = "") -> subprocess.CompletedProcess[str]:
    """The real CLI with `env` added, given 30 s (on main a FIFO config waited forever)."""
    base = {k: v for k, v in os.environ.items() if k not in ("RMH_VAULT", "RMH_CONFIG")}
    base.update({"PYTHONHASHSEED": "0", "PYTHONPATH": str(ROOT), **env})
    return run_cli(args, env=base, cwd=ROOT, stdin=stdin, timeout=30)


@pytest.mark.slow
def test_the_cli_and_serve_refuse_a_writerless_fifo_config_at_once(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    fifo = tmp_path / "rmh.toml"
    os.mkfifo(fifo)
    r = _cli("--vault", str(root), "search", "billing", "--json", env={"RMH_CONFIG": str(fifo)})
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    error = json.loads(r.stdout)["error"]
    assert error["kind"] == "config_error" and "no writer" in error["message"]
    frame = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                        "clientInfo": {"name": "t", "version": "1"}}}
    r = _cli("--vault", str(root), "serve", "--no-dense", env={"RMH_CONFIG": str(fifo)},
             stdin=json.dumps(frame) + "\n")
    assert r.returncode == 0, r.stderr
    (answer,) = map(json.loads, r.stdout.splitlines())
    assert "no writer" in answer["result"]["instructions"]


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["fifo", "folder"])
def test_a_vault_rmh_toml_that_is_no_file_is_refused_not_ignored(tmp_path: Path,
                                                                 kind: str) -> None:
    """It used to be skipped without a word (`is_file()`): the vault ran on defaults its
    owner did not choose (the sandbox's settings among them)."""
    root = make_vault(tmp_path)
    if kind == "fifo":
        os.mkfifo(root / "rmh.toml")
    else:
        (root / "rmh.toml").mkdir()
    r = _cli("--vault", str(root), "search", "billing", "--json", env={})
    assert r.returncode == 1, r.stderr
    assert json.loads(r.stdout)["error"]["kind"] == "config_error"


@pytest.mark.slow
def test_the_cli_reads_a_fifo_config_that_has_a_writer(tmp_path: Path) -> None:
    """`RMH_CONFIG=<(...)`: the shell's writer holds the pipe open before rmh starts."""
    root = make_vault(tmp_path)
    fifo = tmp_path / "rmh.toml"
    os.mkfifo(fifo)
    with _feed(fifo, b"[search]\nk = 1\n"):
        r = _cli("--vault", str(root), "search", "billing", "--json", "--no-dense",
                 env={"RMH_CONFIG": str(fifo)})
    assert r.returncode == 0, r.stderr
    assert len(json.loads(r.stdout)["hits"]) == 1


@pytest.mark.slow
def test_a_process_substitution_serves_every_load_of_one_command(tmp_path: Path) -> None:
    """`RMH_CONFIG=<(...)` is one pipe, drained by the first read: a command that loads the
    configuration twice (`rmh hooks install`, `rmh doctor`'s sandbox report, `rmh learning
    NOTE`) found it empty and writerless the second time, a config_error."""
    root = make_vault(tmp_path)
    (tmp_path / "project").mkdir()
    script = ('RMH_CONFIG=<(printf "[search]\\nk = 1\\n") exec "$0" -m harness --vault "$1" '
              'hooks install claude-code --project "$2" --json')
    env = {k: v for k, v in os.environ.items() if k not in ("RMH_VAULT", "RMH_CONFIG")}
    env.update({"PYTHONPATH": str(ROOT), "HOME": str(tmp_path)})
    r = subprocess.run(["bash", "-c", script, sys.executable, str(root),
                        str(tmp_path / "project")], env=env, cwd=ROOT, capture_output=True,
                       text=True, timeout=60, check=False)
    assert r.returncode == 0, r.stdout + r.stderr
    assert json.loads(r.stdout)["index"]["notes"] == 3
