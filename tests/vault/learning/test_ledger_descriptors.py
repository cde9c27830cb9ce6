"""A process out of file descriptors (`ulimit -n`) opening the learning log: SQLite says
"unable to open database file", which was reported as a damaged `learned.sqlite`
(`ledger_error`, whose fix text says to move the file aside: the learning log lost for a
limit). It is the process's OSError (EMFILE) now. A real process: every descriptor is taken
by /dev/null before the open, for an existing ledger and a new one."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
OPEN_WITHOUT_DESCRIPTORS = """
import errno, os, sys, time
from pathlib import Path
from vault.errors import LedgerError
from vault.learning.ledger import Ledger

path = Path(sys.argv[1])
held = []
while True:
    try:
        held.append(os.open(os.devnull, os.O_RDONLY))
    except OSError as exc:
        assert exc.errno == errno.EMFILE
        break
try:
    Ledger.open(path, clock=time.time)
except LedgerError as exc:
    print("ledger_error", exc)
except OSError as exc:
    print("os_error", errno.errorcode[exc.errno])
else:
    print("opened")
"""


def test_a_process_out_of_descriptors_is_an_os_error_not_a_damaged_ledger(
        tmp_path: Path) -> None:
    from vault.learning.ledger import Ledger

    existing = tmp_path / "learned.sqlite"
    Ledger.open(existing, clock=lambda: 0.0).close()
    for path in (existing, tmp_path / "new.sqlite"):
        r = subprocess.run([sys.executable, "-c", OPEN_WITHOUT_DESCRIPTORS, str(path)],
                           cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
                           env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
        assert (r.returncode, r.stdout) == (0, "os_error EMFILE\n"), (path.name, r.stderr)
