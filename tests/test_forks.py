"""The fork server of the sweeps (tests/forks.py) runs a command as a fresh interpreter would:
exactly the given environment, folder, argv and stdin; its own SIGKILL reported as -9; and the
zone of its TZ (a fork keeps the server's C-library zone unless it is read again), which the
clock tests (tests/harness/commands/test_clock_day_tz.py) depend on."""

from __future__ import annotations

import os
from pathlib import Path

from tests.forks import ForkServer, run_python

ZONE_HOUR = "import time; print(time.localtime(1704067200).tm_hour)"  # at 2024-01-01 00:00 UTC


def test_a_forked_child_reads_its_own_tz(tmp_path: Path) -> None:
    env = {**os.environ, "TZ": "UTC"}
    with ForkServer("import time; time.localtime(0)", workdir=tmp_path / "forks", env=env,
                    cwd=tmp_path) as server:
        hours = [server.run([], code=ZONE_HOUR, env={**os.environ, "TZ": tz}, cwd=tmp_path)
                 .stdout.strip() for tz in ("UTC", "Asia/Kolkata", "Pacific/Kiritimati")]
    assert hours == ["0", "5", "14"], hours


def test_run_python_is_a_real_process_with_the_given_environment(tmp_path: Path) -> None:
    code = ("import os, sys; print(sys.argv[1:], os.getcwd(), os.environ.get('ONLY'), "
            "'HOME' in os.environ, sys.stdin.read()); sys.exit(3)")
    done = run_python(code, ["a", "b c"], env={"ONLY": "x"}, cwd=tmp_path, stdin="in")
    assert done.returncode == 3, done.stderr
    assert done.stdout.strip() == f"['a', 'b c'] {tmp_path} x False in"
    killed = run_python("import os, signal; os.kill(os.getpid(), signal.SIGKILL)")
    assert killed.returncode == -9
    assert run_python(ZONE_HOUR, env={**os.environ, "TZ": "Asia/Kolkata"}).stdout == "5\n"
