"""sandbox/worker_guard.py `set_rlimits` only lowers: a limit asked above the hard one the
worker has (`[sandbox] max_tasks` past the user's hard RLIMIT_NPROC, which an unprivileged
worker cannot raise) was a ValueError that killed the worker at start, its traceback the
user's error; now the hard limit holds. RLIMIT_NOFILE shows it for any user, root included:
no process may raise it past /proc/sys/fs/nr_open."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHILD = """
import resource, sys
from sandbox.worker_guard import set_rlimits
hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
asked = {asked}
set_rlimits({{"NOFILE": asked}})
print(resource.getrlimit(resource.RLIMIT_NOFILE) == (min(asked, hard), min(asked, hard)))
"""


def test_a_limit_past_the_hard_one_keeps_the_hard_one() -> None:
    nr_open = int(Path("/proc/sys/fs/nr_open").read_text(encoding="ascii"))
    for asked in (nr_open + 1, nr_open * 4, 64):  # past any hard limit; and a lowering
        r = subprocess.run([sys.executable, "-c", CHILD.format(asked=asked)], cwd=ROOT,
                           capture_output=True, text=True, timeout=60, check=False)
        assert r.returncode == 0 and r.stdout.strip() == "True", (asked, r.stderr)
