"""A client's hook input is read up to harness/hooks_client.py's MAX_INPUT_CHARS: past it the
rest is drained (no EPIPE for the client) and the hook answers as for any bad input (one
stderr line, the empty answer, exit 0) in bounded memory, on the fast path and the full one."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.hooks_client import MAX_INPUT_CHARS, read_input

from .test_server_e2e import CHILD_ENV, REPO

# peak RSS allowed a hook fed OVER_MIB of input: a bare hook (~30 MiB here) plus the capped
# text (at most 4 bytes a character) plus a generous margin; unbounded it grew ~4-8x the input
RSS_MARGIN_MIB = 64
RSS_BOUND_MIB = 4 * MAX_INPUT_CHARS // 2**20 + RSS_MARGIN_MIB
OVER_MIB = 6 * MAX_INPUT_CHARS // 2**20

# streams a file into the hook's stdin (holding no copy of it) and prints the hook's exit
# status, peak RSS (KiB: this feeder's only child) and output as JSON
FEEDER = """
import json, resource, shutil, subprocess, sys
p = subprocess.Popen(sys.argv[2:], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                     stderr=subprocess.PIPE)
epipe = False
try:
    with open(sys.argv[1], 'rb') as src:
        shutil.copyfileobj(src, p.stdin, 65536)
except BrokenPipeError:
    epipe = True
out, err = p.communicate()
print(json.dumps({"rc": p.returncode, "epipe": epipe, "out": out.decode(), "err": err.decode(),
                  "rss_kib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}))
"""


@pytest.mark.parametrize("limit", [1, 7, 100, 70_000])
def test_read_input_keeps_up_to_the_limit_and_drains_past_it(limit: int) -> None:
    for size in (0, limit - 1, limit, limit + 1, 3 * limit + 70_000):
        if size < 0:
            continue
        text = "é" * size  # two bytes a character: the cap counts characters
        piped = io.TextIOWrapper(io.BytesIO(text.encode()), encoding="utf-8")
        assert read_input(piped, limit) == (text if size <= limit else None)
        assert piped.buffer.read() == b""  # the pipe drained either way
        kept = io.StringIO(text)  # what the fast path hands the full CLI
        assert read_input(kept, limit) == (text if size <= limit else None)
        assert kept.read() == ""


@pytest.mark.slow
@pytest.mark.parametrize("client", ["claude-code", "gemini"])
@pytest.mark.parametrize("dead_daemon", [False, True])
def test_a_huge_hook_input_is_refused_in_bounded_memory(
        tmp_path: Path, client: str, dead_daemon: bool) -> None:
    vault = tmp_path / "v"
    vault.mkdir()
    (vault / "a.md").write_text("alpha beta\n")
    if dead_daemon:  # the fast path reads the input first (a dead daemon's files)
        (vault / ".rmh").mkdir()
        (vault / ".rmh" / "hooks-daemon.json").write_text(
            json.dumps({"wait_s": 0.2, "start_words": 100}))
        (vault / ".rmh" / "hooks.sock").write_text("")
    src = tmp_path / "input.json"
    src.write_text(json.dumps({"session_id": "s", "prompt": "alpha " * (OVER_MIB << 18)}))
    env = {k: os.environ[k] for k in CHILD_ENV if k in os.environ}
    env["PYTHONPATH"] = str(REPO)
    proc = subprocess.run(
        [sys.executable, "-c", FEEDER, str(src), sys.executable, "-m", "harness", "--vault",
         str(vault), "hook", "prompt", "--client", client],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    assert got["rc"] == 0 and not got["epipe"]
    assert got["out"].strip() == ("{}" if client == "gemini" else "")
    assert got["err"].strip().splitlines() == [
        f"rmh hook prompt: the hook input is longer than {MAX_INPUT_CHARS} characters; "
        "nothing was read of it"]
    assert got["rss_kib"] < RSS_BOUND_MIB * 1024, got["rss_kib"]
