"""harness/stderr_sink.py: writes to a pipe nobody reads return at once; what was kept comes
out whole and in order once the pipe is read, and where text was dropped, a line counts it."""

from __future__ import annotations

import fcntl
import json
import os
import re
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.stderr_sink import StderrSink, dropped_line

REPO = Path(__file__).resolve().parents[2]
CHILD_ENV = ("PATH", "HOME", "LANG", "TMPDIR", "RMH_EMBED_CACHE", "XDG_CACHE_HOME",
             "RMH_GRAPH_CACHE")
F_SETPIPE_SZ = 1031
NOTICE = re.compile(rb"rmh WARNING rmh\.stderr: (\d+) bytes of log dropped here "
                    rb"\(stderr was not being read\)\n")


def small_pipe() -> tuple[int, int]:
    r, w = os.pipe()
    fcntl.fcntl(w, F_SETPIPE_SZ, 4096)
    return r, w


def read_all(fd: int) -> bytes:
    out = bytearray()
    while chunk := os.read(fd, 65536):
        out += chunk
    return bytes(out)


def split_out(data: bytes, lines: list[bytes]) -> tuple[list[int], int]:
    """(indexes of the input lines found whole and in order, bytes the notices count)."""
    kept: list[int] = []
    dropped, pos, i = 0, 0, 0
    while pos < len(data):
        m = NOTICE.match(data, pos)
        if m:
            dropped += int(m.group(1))
            pos = m.end()
            continue
        while not data.startswith(lines[i], pos):  # a line not found here was dropped
            i += 1
            assert i < len(lines), f"text that is no input line at {pos}: {data[pos:pos + 80]!r}"
        kept.append(i)
        pos += len(lines[i])
        i += 1
    return kept, dropped


@settings(max_examples=25, deadline=None)
@given(sizes=st.lists(st.integers(1, 3000), min_size=1, max_size=120),
       max_pending=st.integers(1, 20000))
def test_writes_never_wait_for_a_reader_and_drops_are_counted(sizes: list[int],
                                                             max_pending: int) -> None:
    r, w = small_pipe()
    lines = [f"{n:05d} ".encode() + b"x" * size + b"\n" for n, size in enumerate(sizes)]
    sink = StderrSink(w, max_pending=max_pending)
    t0 = time.monotonic()
    for line in lines:  # nobody reads the pipe meanwhile (4 KiB)
        sink.write(line.decode())
    assert time.monotonic() - t0 < 5.0
    sink.close()
    os.close(w)
    data = read_all(r)  # reads until the sink's thread closed its descriptor
    os.close(r)
    kept, dropped = split_out(data, lines)
    assert kept == sorted(kept)
    assert dropped + sum(len(lines[i]) for i in kept) == sum(map(len, lines))
    if sum(map(len, lines)) <= max_pending:
        assert dropped == 0


def test_a_sink_whose_reader_is_gone_drops_everything_quietly() -> None:
    r, w = os.pipe()
    os.close(r)
    sink = StderrSink(w)
    sink.write("into a closed pipe\n")
    assert sink.drain(5.0)
    sink.write("and more\n")
    sink.close()
    os.close(w)


def test_the_drop_line_says_how_much() -> None:
    assert NOTICE.fullmatch(dropped_line(123))


@pytest.mark.slow
def test_rmh_serve_answers_every_frame_while_its_stderr_is_not_read(tmp_path: Path) -> None:
    """A host that never reads `rmh serve`'s stderr (a 4 KiB pipe here, 64 KiB by default):
    before, once the log filled it, the next log line blocked the server for good (no answer
    to session.end, nor to anything after). Each session.end logs a line at `info`."""
    vault = tmp_path / "v"
    (vault / ".rmh").mkdir(parents=True)
    (vault / "a.md").write_text("alpha\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k in CHILD_ENV}
    env["PYTHONPATH"] = str(REPO)
    r, w = small_pipe()
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness", "--vault", str(vault), "serve", "--no-dense",
         "--log-level", "info"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=w, cwd=REPO, env=env)
    os.close(w)
    assert proc.stdin is not None and proc.stdout is not None
    rounds = 60  # ~14 KB of log
    try:
        for n in range(2 * rounds):
            frame = ({"jsonrpc": "2.0", "id": n, "method": "session.start",
                      "params": {"session": f"s{n:04d}-" + "x" * 180}} if n % 2 == 0 else
                     {"jsonrpc": "2.0", "id": n, "method": "session.end"})
            proc.stdin.write(json.dumps(frame).encode() + b"\n")
            proc.stdin.flush()
            ready, _, _ = select.select([proc.stdout], [], [], 30.0)
            assert ready, f"no answer to frame {n} in 30 s: the server is stuck"
            answer = json.loads(proc.stdout.readline())
            assert answer["id"] == n and "result" in answer, answer
        proc.stdin.close()
        log = read_all(r)  # the host reads at last: the lines held come out, whole
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(r)
    ended = re.findall(rb"session (s\d{4})-x+ ended\n", log)
    assert ended == [f"s{n:04d}".encode() for n in range(0, 2 * rounds, 2)]


def test_a_write_over_the_bound_is_counted_at_once_by_an_idle_writer() -> None:
    r, w = os.pipe()
    sink = StderrSink(w, max_pending=10)
    sink.write("x" * 50 + "\n")
    assert sink.drain(5.0)  # the count is written without waiting for another write
    assert os.read(r, 4096) == dropped_line(51)
    sink.close()
    os.close(w)
    os.close(r)
