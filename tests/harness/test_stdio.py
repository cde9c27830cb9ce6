"""The `rmh` process's standard streams (harness/stdio.py), as a caller leaves them: closed
(`<&-`, `>&-`, `2>&-`), stdout on a full disk (/dev/full), an ASCII-only stdout
(`PYTHONIOENCODING=ascii`). Real processes of `python -m harness`: each case is one line on
stderr (or none) and the exit status the README gives, never a traceback, never an error line
or a log line in stdout, and what a write did is kept."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTE = "Zoë café"
TEXT = "Zoë's café serves naïve crêpes — 日本語 too.\n"
CLOSED = "Bad file descriptor"
NO_OUT, NO_IN = f"rmh: cannot write stdout: {CLOSED}\n", f"rmh: cannot read stdin: {CLOSED}\n"


def run(*argv: str, close: int | None = None, stdin: str | bytes | None = None,
        stdout: int | None = subprocess.PIPE, env: dict[str, str] | None = None,
        ) -> subprocess.CompletedProcess[bytes]:
    """`python -m harness ARGV`, descriptor `close` closed in the child before it starts."""
    base = {k: v for k, v in os.environ.items()
            if k not in ("RMH_VAULT", "RMH_CONFIG", "PYTHONIOENCODING")}
    base["PYTHONPATH"] = str(ROOT)
    base.update(env or {})
    closer: Callable[[], None] | None = None if close is None else (lambda: os.close(close))
    return subprocess.run(
        [sys.executable, "-m", "harness", *argv], cwd=ROOT, env=base, timeout=120,
        input=stdin.encode() if isinstance(stdin, str) else stdin, stdout=stdout,
        stderr=subprocess.PIPE, preexec_fn=closer, check=False,
        stdin=subprocess.DEVNULL if stdin is None and close != 0 else None)


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("stdio") / "v"
    assert run("init", str(root), "--no-dense").returncode == 0
    assert run("--vault", str(root), "write", NOTE, stdin=TEXT).returncode == 0
    return root


def _clean(r: subprocess.CompletedProcess[bytes]) -> str:
    err = r.stderr.decode()
    assert "Traceback" not in err and "Error:" not in err, err
    return err


def test_a_closed_stdout_or_stdin_is_one_line_and_exit_1(vault: Path) -> None:
    v = ("--vault", str(vault))
    cases: Sequence[tuple[int, tuple[str, ...], str]] = [
        (1, (*v, "read", NOTE), NO_OUT),
        (1, (*v, "list"), NO_OUT),
        (1, (*v, "search", "cafe", "--no-dense", "--json"), NO_OUT),
        (1, (*v, "status"), NO_OUT),
        (1, ("--version",), NO_OUT),
        (1, (*v, "serve"), NO_OUT),
        (0, (*v, "write", "From nowhere"), NO_IN),
        (0, (*v, "edit", NOTE, "append"), NO_IN),
    ]
    for fd, argv, line in cases:
        r = run(*argv, close=fd, stdout=None if fd == 1 else subprocess.PIPE)
        assert (r.returncode, _clean(r)) == (1, line), argv
    assert not (vault / "From nowhere.md").exists()  # no empty note from a closed stdin
    assert (vault / f"{NOTE}.md").read_text(encoding="utf-8") == TEXT


def test_a_closed_stderr_keeps_errors_and_logs_out_of_stdout(vault: Path) -> None:
    v = ("--vault", str(vault))
    r = run(*v, "read", "Nobody", close=2)
    assert (r.returncode, r.stdout) == (1, b"")  # the error line went to stdout before
    r = run(*v, "read", "Nobody", "--json", close=2)
    assert r.returncode == 1
    assert json.loads(r.stdout)["error"]["kind"] == "note_not_found"
    r = run(*v, "read", NOTE, close=2)
    assert (r.returncode, r.stdout.decode()) == (0, TEXT)
    # `rmh serve` put its log into the protocol stream: every line on stdout is a frame
    r = run(*v, "serve", "--log-level", "debug", close=2,
            stdin='{"jsonrpc": "2.0", "id": 1, "method": "ping"}\nnot json\n')
    frames = [json.loads(line) for line in r.stdout.decode().splitlines()]
    assert r.returncode == 0
    assert sorted(str(f.get("id")) for f in frames) == ["1", "None"], frames  # in any order


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full here")
def test_stdout_on_a_full_disk_is_a_stream_error_not_the_vaults_disk(vault: Path) -> None:
    v = ("--vault", str(vault))
    line = "rmh: cannot write stdout: No space left on device\n"
    for argv in ((*v, "read", NOTE), (*v, "list"), (*v, "search", "cafe", "--no-dense"),
                 (*v, "status"), ("--version",), ("--help",), ("completion", "bash")):
        with open("/dev/full", "wb") as full:
            r = run(*argv, stdout=full.fileno())
        assert (r.returncode, _clean(r)) == (1, line), argv
    with open("/dev/full", "wb") as full:
        r = run(*v, "search", "cafe", "--no-dense", "--json", stdout=full.fileno())
    assert (r.returncode, _clean(r)) == (1, line)
    with open("/dev/full", "wb") as full:
        r = run(*v, "write", "Landed", stdout=full.fileno(), stdin="kept\n")
    assert (r.returncode, _clean(r)) == (1, line)  # said "disk full" of the vault before
    assert (vault / "Landed.md").read_text(encoding="utf-8") == "kept\n"


def test_a_closed_pipe_ends_quietly_with_exit_1(vault: Path) -> None:
    for argv in (("--version",), ("--vault", str(vault), "list"), ("completion", "bash")):
        proc = subprocess.Popen([sys.executable, "-m", "harness", *argv], cwd=ROOT,
                                env={**os.environ, "PYTHONPATH": str(ROOT)},
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                stdin=subprocess.DEVNULL)
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.close()  # the reader is gone before the first write
        err = proc.stderr.read().decode()
        assert (proc.wait(timeout=120), err) == (1, ""), argv


def test_an_ascii_stdout_gets_escaped_text_and_ascii_json(vault: Path) -> None:
    v = ("--vault", str(vault))
    for encoding in ("ascii", "latin-1"):
        env = {"PYTHONIOENCODING": encoding}
        r = run(*v, "read", NOTE, env=env)
        assert r.returncode == 0 and _clean(r) == "", encoding
        assert r.stdout.decode(encoding) == TEXT.encode(encoding, "backslashreplace").decode(
            encoding)
        r = run(*v, "search", "café", "--no-dense", "--json", env=env)
        assert r.returncode == 0 and _clean(r) == "", encoding
        doc = json.loads(r.stdout.decode("ascii"))
        assert doc["query"] == "café" and doc["hits"][0]["title"] == NOTE


def test_stdin_that_is_not_utf8_is_one_line_and_nothing_written(vault: Path) -> None:
    v = ("--vault", str(vault))
    for data, offset in ((b"ab\xffcd\n", 2), (b"\xc3(", 0), ("caf\u00e9".encode("latin-1"), 3)):
        line = f"rmh: stdin is not UTF-8 text: byte 0x{data[offset]:02x} at offset {offset}\n"
        for argv in ((*v, "write", "Bytes"), (*v, "edit", NOTE, "append"), (*v, "exec")):
            r = run(*argv, stdin=data)
            assert (r.returncode, _clean(r)) == (1, line), argv  # a traceback before
    assert not (vault / "Bytes.md").exists()
    assert (vault / f"{NOTE}.md").read_text(encoding="utf-8") == TEXT
