"""A spent disk quota (EDQUOT) is a full disk too (session 41, DISK41).

SQLite reports ENOSPC as "database or disk is full" but EDQUOT, a user's quota spent, as a
plain "disk I/O error" (SQLITE_IOERR_WRITE, _SHMSIZE), and `statvfs` shows a quota'd user a
half-empty disk. On main, `rmh write` under a quota met at its N-th file write was a Python
traceback (`sqlite3.OperationalError: disk I/O error` from the ledger's COMMIT or its close's
checkpoint) or "learned.sqlite: disk I/O error ... if it is damaged, move it aside" (22 of 24
points of a sweep): advice that throws the learning log away for a full quota. Now a folder of
the process's SQLite files is asked for one block (vault/room.py): every point is
`rmh: disk full`, exit 1, or the write made (exit 0), and the next command with room works.

The quota is real errno from the real libc calls: a preloaded shim makes every write(2) and
pwrite(2) to a regular file fail with EDQUOT from the N-th on (this kernel has no quota
support to mount one; a quota answers every later write the same way). The shim is compiled
here with `cc` (CI installs it); without one the test skips saying so."""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.harness.test_cli_notes import ROOT

pytestmark = pytest.mark.slow

SHIM = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
static long after = -1, count = 0;
static int err = 0, ready = 0;
static int refused(int fd) {
    if (!ready) {
        const char *a = getenv("SHIM_AFTER"), *e = getenv("SHIM_ERRNO");
        after = a ? atol(a) : -1; err = e ? atoi(e) : 0; ready = 1;
    }
    struct stat st;
    if (after < 0 || fd < 3 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return 0;
    return ++count >= after;
}
#define WRAP(name, params, args) \
    ssize_t name params { \
        static ssize_t (*real) params; \
        if (!real) real = dlsym(RTLD_NEXT, #name); \
        if (refused(fd)) { errno = err; return -1; } \
        return real args; }
WRAP(write, (int fd, const void *b, size_t n), (fd, b, n))
WRAP(pwrite, (int fd, const void *b, size_t n, off_t o), (fd, b, n, o))
WRAP(pwrite64, (int fd, const void *b, size_t n, off_t o), (fd, b, n, o))
"""


def shim(tmp_path: Path) -> Path:
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler to build the EDQUOT shim (.ci/run installs gcc)")
    source, lib = tmp_path / "shim.c", tmp_path / "shim.so"
    source.write_text(SHIM)
    subprocess.run([cc, "-shared", "-fPIC", "-O2", "-o", str(lib), str(source), "-ldl"],
                   check=True, capture_output=True)
    return lib


def cli(*args: str, stdin: str = "", after: int | None = None,
        lib: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("RMH_VAULT", "RMH_CONFIG")}
    env["PYTHONPATH"] = str(ROOT)
    if after is not None and lib is not None:
        env.update(LD_PRELOAD=str(lib), SHIM_AFTER=str(after), SHIM_ERRNO=str(errno.EDQUOT))
    return subprocess.run([sys.executable, "-m", "harness", *args], input=stdin, text=True,
                          capture_output=True, env=env, cwd=ROOT, timeout=300, check=False)


def test_a_spent_quota_at_every_write_is_a_full_disk(tmp_path: Path) -> None:
    lib = shim(tmp_path)
    root = tmp_path / "v"
    root.mkdir()
    for name in ("Alpha", "Beta"):
        (root / f"{name}.md").write_text(f"{name} kiwi [[Beta]]\n", encoding="utf-8")
    v = ("--vault", str(root))
    assert cli(*v, "init", "--no-dense").returncode == 0
    assert cli(*v, "search", "kiwi", "--no-dense").returncode == 0  # the ledger has events
    bad, made = [], 0
    for n in (*range(1, 13), *range(14, 64, 6)):
        r = cli(*v, "write", "Fresh", stdin="fresh words\n", after=n, lib=lib)
        last = r.stderr.strip().splitlines()[-1] if r.stderr.strip() else ""
        if "Traceback" in r.stderr or "damaged" in r.stderr or r.returncode not in (0, 1) or (
                r.returncode == 1 and not last.startswith("rmh: disk full")):
            bad.append((n, r.returncode, r.stderr[-300:]))  # main: tracebacks, "move it aside"
        assert (root / "Fresh.md").exists() == (r.returncode == 0), (n, r.stderr)
        if r.returncode == 0:
            made += 1
            (root / "Fresh.md").unlink()
        after = cli(*v, "doctor", "--json")  # room again: the next command works
        assert after.returncode == 0, (n, after.stderr)
        assert not json.loads(after.stdout)["vault"]["intents"]["pending"], n
    assert not bad, bad
    assert made, "the sweep never reached past the write's last file write"
    assert not [p for p in root.rglob(".rmh-room.*")], "a scratch block was left"
