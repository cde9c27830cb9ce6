"""Under a file-size limit (`ulimit -f`), which SQLite "disk I/O error"s are a full disk
(full_disk.py `is_disk_full`, VAULT9): those SQLite gives EFBIG as (a write past the limit, for
real below), never a read's or a damaged file system's. VAULT9 took every SQLITE_IOERR for
one while any limit was set, so a failing disk or a corrupted file system read as
`disk_full` ("past this process's file-size limit") and hid the real fault (REV35). No real
read error can be made here: those two are the errors Python raises, with SQLite's codes
set as `_sqlite3` sets them."""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CHILD = r"""
import json, signal, sqlite3, sys
from vault.full_disk import is_disk_full
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
out = {}
c = sqlite3.connect(sys.argv[1])
c.execute("pragma journal_mode=wal")
c.execute("create table t(a)")
c.commit()
try:
    for _ in range(200):  # past the 64 KiB limit: EFBIG, which SQLite says as IOERR_WRITE
        c.execute("insert into t values (?)", ("x" * 4000,))
        c.commit()
except sqlite3.Error as exc:
    out["write past the limit"] = [exc.sqlite_errorname, is_disk_full(exc)]
for name, code in (("SQLITE_IOERR_READ", 266), ("SQLITE_IOERR_CORRUPTFS", 8458)):
    exc = sqlite3.OperationalError("disk I/O error")
    exc.sqlite_errorcode, exc.sqlite_errorname = code, name
    out[name] = [name, is_disk_full(exc)]
print(json.dumps(out))
"""


def test_under_a_file_size_limit_only_efbig_is_a_full_disk(tmp_path: Path) -> None:
    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, 64 * 1024))

    done = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path / "x.db")], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, preexec_fn=cap,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == (
        '{"write past the limit": ["SQLITE_IOERR_WRITE", true], '
        '"SQLITE_IOERR_READ": ["SQLITE_IOERR_READ", false], '
        '"SQLITE_IOERR_CORRUPTFS": ["SQLITE_IOERR_CORRUPTFS", false]}')
