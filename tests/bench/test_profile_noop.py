"""bench.profile_noop's throttle: a real child stopped part of the time, and left running."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from bench.profile_noop import _throttle


def _state(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="Linux /proc")
def test_the_throttle_stops_the_worker_part_of_the_time_and_leaves_it_running() -> None:
    child = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        done = threading.Event()
        thread = threading.Thread(target=_throttle, args=(child.pid, 0.9, done))
        thread.start()
        seen = set()
        for _ in range(200):
            seen.add(_state(child.pid))
            time.sleep(0.003)
        done.set()
        thread.join()
        assert "T" in seen  # stopped at times
        time.sleep(0.05)
        assert _state(child.pid) in ("R", "S")  # and running again at the end
    finally:
        child.kill()
        child.wait()
