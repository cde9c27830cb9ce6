"""The Landlock tier's private root is read-only all the way down (sandbox/worker_root.py). Each
tree it binds (the interpreter's prefix, the library folders) was remounted read-only at its top
only: a mount beneath it (a separate /usr/lib/... or a file system under the prefix) stayed
writable in the worker's root. Landlock still refused writes there, but a read set the host
file's access time. Run in a child process, as root (it makes its own mount namespace first, so
the mount below is nobody else's)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

_CHILD = """
import ctypes, os, sys
sys.path.insert(0, sys.argv[1])
from sandbox import worker_root
libc = ctypes.CDLL(None, use_errno=True)
assert libc.unshare(0x00020000) == 0  # CLONE_NEWNS: the mount below is this process's only
assert libc.mount(None, b"/", None, 16384 | (1 << 18), None) == 0  # MS_REC | MS_PRIVATE
tree = sys.argv[2]
for name in sys.argv[3:]:
    os.makedirs(os.path.join(tree, name), exist_ok=True)  # inside the mount above, if any
    assert libc.mount(b"tmpfs", os.path.join(tree, name).encode(), b"tmpfs", 0, b"size=64k") == 0
worker_root.private_root([tree], {})
print(sorted(name for name in ["."] + sys.argv[3:]
             if not os.statvfs(os.path.join(tree, name)).f_flag & os.ST_RDONLY))
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="makes a mount namespace of its own: root only")
@pytest.mark.parametrize("below", [["sub"], ["sub", "sub/deeper"], ["a", "b/c"]])
def test_every_mount_beneath_a_bound_tree_is_read_only(tmp_path: Path, below: list[str]) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    done = subprocess.run([sys.executable, "-c", _CHILD, str(ROOT), str(tree), *below],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]", done.stdout  # no writable mount left in the tree
