"""A conversation file is read up to `[extract] file_bytes`: a larger one is refused whole
with a message naming the setting (rmh ingest: rc 1; the session-end hook: one stderr line,
exit 0), in memory bounded by the setting, not by the file (harness/extraction.py)."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
import tracemalloc
from pathlib import Path

import pytest

from harness.extraction import ConversationFileTooLarge, read_conversation_file

from .test_server_e2e import CHILD_ENV, REPO

pytestmark = pytest.mark.slow

LIMIT = 1 << 20  # [extract] file_bytes in the CLI test (rmh.toml)
FILE_MIB = 48  # the file fed to it
# peak RSS allowed `rmh ingest` refusing it: a bare `rmh ingest` (~60 MiB here) plus the
# limit plus a generous margin; reading it whole held ~3x the file
RSS_BOUND_MIB = 96 + LIMIT // 2**20

FEEDER = """
import json, resource, subprocess, sys
p = subprocess.run(sys.argv[1:], stdin=subprocess.DEVNULL, capture_output=True, text=True)
print(json.dumps({"rc": p.returncode, "out": p.stdout, "err": p.stderr,
                  "rss_kib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}))
"""


@pytest.mark.parametrize("limit", [1, 10, 4096])
def test_read_conversation_file_refuses_past_the_limit(tmp_path: Path, limit: int) -> None:
    path = tmp_path / "t.jsonl"
    for size in (0, limit - 1, limit, limit + 1, 3 * limit):
        path.write_bytes(b"x" * size)
        if size <= limit:
            assert read_conversation_file(str(path), limit) == b"x" * size
        else:
            with pytest.raises(ConversationFileTooLarge, match=f"file_bytes = {limit} bytes"):
                read_conversation_file(str(path), limit)
        assert read_conversation_file(str(path), 0) == b"x" * size  # 0: no bound


def claude_line(kind: str, content: object, n: int) -> str:
    return json.dumps({"type": kind, "sessionId": "s1", "uuid": f"u{n}",
                       "timestamp": f"2026-01-01T10:00:{n % 60:02d}Z",
                       "message": {"role": kind, "content": content}}) + "\n"


def test_rmh_ingest_refuses_a_file_over_the_setting_in_bounded_memory(tmp_path: Path) -> None:
    env = {k: os.environ[k] for k in CHILD_ENV if k in os.environ}
    env["PYTHONPATH"] = str(REPO)
    vault = tmp_path / "v"
    subprocess.run([sys.executable, "-m", "harness", "init", str(vault)], env=env, check=True,
                   capture_output=True)
    (vault / "rmh.toml").write_text(f"[extract]\nfile_bytes = {LIMIT}\n")
    src = tmp_path / "t.jsonl"
    with src.open("w") as f:  # a Claude Code transcript, mostly tool output
        f.write(claude_line("user", "please fix the billing bug", 0))
        for n in range(1, FILE_MIB * 10 + 1):
            f.write(claude_line("user", [{"type": "tool_result", "tool_use_id": f"t{n}",
                                          "content": "x" * 100_000}], n))
        f.write(claude_line("assistant", "fixed", FILE_MIB * 10 + 1))
    before = sorted(p.relative_to(vault) for p in vault.rglob("*.md"))
    proc = subprocess.run([sys.executable, "-c", FEEDER, sys.executable, "-m", "harness",
                           "--vault", str(vault), "ingest", str(src)],
                          env=env, capture_output=True, text=True, check=True)
    got = json.loads(proc.stdout)
    assert got["rc"] == 1
    assert f"larger than [extract] file_bytes = {LIMIT} bytes" in got["err"]
    assert sorted(p.relative_to(vault) for p in vault.rglob("*.md")) == before
    assert got["rss_kib"] < RSS_BOUND_MIB * 1024, got["rss_kib"]
    hook = subprocess.run(  # the session-end hook: the same refusal, on one line, exit 0
        [sys.executable, "-m", "harness", "--vault", str(vault), "hook", "session-end"],
        input=json.dumps({"session_id": "s1", "transcript_path": str(src)}), env=env,
        capture_output=True, text=True, cwd=tmp_path)
    assert hook.returncode == 0
    assert [ln for ln in hook.stderr.splitlines() if "file_bytes" in ln] == [
        ln for ln in hook.stderr.splitlines() if ln.startswith("rmh hook session-end:")]
    assert f"file_bytes = {LIMIT} bytes" in hook.stderr
    assert sorted(p.relative_to(vault) for p in vault.rglob("*.md")) == before
    # a file under the setting is ingested
    src.write_text(claude_line("user", "please fix the billing bug", 0)
                   + claude_line("assistant", "fixed", 1))
    ok = subprocess.run([sys.executable, "-m", "harness", "--vault", str(vault), "ingest",
                         str(src)], env=env, capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr


@pytest.mark.parametrize("limit", [256 << 20, 1 << 40, 1 << 63, 10**30])
def test_a_small_file_under_a_large_limit_reads_in_memory_of_its_size(
        tmp_path: Path, limit: int) -> None:
    """A read asked for limit + 1 bytes at once, and Python makes that buffer up front: 256 MiB
    for every transcript under the default, a MemoryError past the host's memory and an
    OverflowError past 2**63 (config accepts any integer), whatever the file's size."""
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"x": 1}\n' * 100)
    tracemalloc.start()
    try:
        assert read_conversation_file(str(path), limit) == b'{"x": 1}\n' * 100
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 256 << 10  # the file, and a read's buffer of a few KiB


@pytest.mark.parametrize(("size", "limit"), [(0, 1), (5, 5), (3 << 20, 4 << 20),
                                             (3 << 20, (3 << 20) - 1), (5 << 20, 1 << 20)])
def test_a_pipe_is_read_to_the_limit(tmp_path: Path, size: int, limit: int) -> None:
    """A file of no size to stat (a FIFO) is read in chunks up to the limit, and refused past."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    data = bytes(range(256)) * (size // 256) + b"z" * (size % 256)

    def feed() -> None:
        with contextlib.suppress(BrokenPipeError), open(fifo, "wb") as w:  # the reader may
            w.write(data)  # stop past the limit

    writer = threading.Thread(target=feed)
    writer.start()
    try:
        if size <= limit:
            assert read_conversation_file(str(fifo), limit) == data
        else:
            with pytest.raises(ConversationFileTooLarge):
                read_conversation_file(str(fifo), limit)
    finally:
        writer.join()
