"""No cell climbs above the interpreter's folders through the descriptors its imports use.

As root the worker drops to the dedicated uid, which may have no search right on the folders
above the interpreter (a 0700 /root), so before the drop it opens each import folder and puts
/proc/self/fd/N on sys.path (worker_guard.reach_imports_by_descriptor; the seccomp tier: the
Landlock tier's private root needs none). A descriptor of the folder itself let '..' climb:
from a pyenv Python's standard library under /root a cell listed and read every folder up to
pyenv's own (all of pyenv, every other Python), which it could not reach by path
(PermissionError), and from a venv or checkout under /root it would read that whole project.
Now each folder's descriptor is of a detached read-only copy of its mount tree, whose root has
no parent mount, so '..' there stays where it is. Every real tier (conftest.py's `host`)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sandbox import TIER_SECCOMP

from .conftest import Host, run_attack

ROOT = Path(__file__).resolve().parents[2]

_CELL = """
import os, sys
anchors = [p for p in sys.path if p.startswith("/proc/self/fd/") and os.path.isdir(p)]
climbed = []
for anchor in anchors:
    for depth in range(1, 6):
        up = anchor + "/.." * depth
        try:
            os.listdir(up)
        except OSError:
            continue
        if not os.path.samestat(os.stat(up), os.stat(anchor)):
            climbed.append((os.readlink(anchor), depth, sorted(os.listdir(up))[:3]))
import decimal  # a module of the copy, and its C extension from lib-dynload's copy
len(anchors), climbed, str(decimal.Decimal("1.1") * 3)
"""


def test_no_cell_climbs_above_an_import_folder(host: Host) -> None:
    result = run_attack(host, _CELL)
    assert result.ok and result.value is not None, result.to_json()
    anchors, climbed, product = ast.literal_eval(result.value)
    if host.tier == TIER_SECCOMP and os.getuid() == 0:
        assert anchors >= 2, result.value  # the standard library and lib-dynload at least
    assert climbed == [] and product == "3.3", result.value


_CHILD = """
import os, sys
sys.path.insert(0, sys.argv[1])
from sandbox import worker_root
leaf = sys.argv[2]
fd = worker_root.detached_copy(leaf)
if fd is None:
    print(None)
    raise SystemExit
anchor = f"/proc/self/fd/{fd}"
climbs = [depth for depth in range(1, 5)
          if not os.path.samestat(os.stat(anchor + "/.." * depth), os.stat(anchor))]
copy_ro = bool(os.statvfs(anchor).f_flag & os.ST_RDONLY)
names = sorted(os.listdir(anchor + "/../.."))
os.close(fd)
with open(os.path.join(leaf, "written-after.txt"), "w") as f:  # the original stays writable
    f.write("x")
print((climbs, copy_ro, names, bool(os.statvfs(leaf).f_flag & os.ST_RDONLY)))
"""


@pytest.mark.parametrize("depth", [1, 2, 4])
def test_a_detached_copy_reaches_nothing_above_its_folder(tmp_path: Path, depth: int) -> None:
    """worker_root.detached_copy directly, in a child process: as root a descriptor whose '..'
    stays in the folder, read-only, while the folder itself stays writable; without
    CAP_SYS_ADMIN over the mount namespace (unprivileged) None, the caller's fallback."""
    leaf = tmp_path.joinpath(*[f"level{i}" for i in range(depth)])
    leaf.mkdir(parents=True)
    (leaf / "inside.txt").write_text("in")
    (tmp_path / "above.txt").write_text("secret")
    child = subprocess.run([sys.executable, "-c", _CHILD, str(ROOT), str(leaf)],
                           capture_output=True, text=True, timeout=60, check=False)
    assert child.returncode == 0, child.stderr
    got = ast.literal_eval(child.stdout.strip())
    if os.geteuid() != 0:
        assert got is None
        return
    assert got == ([], True, ["inside.txt"], False), got
    assert (leaf / "written-after.txt").read_text() == "x"
