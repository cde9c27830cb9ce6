"""No cell climbs above the interpreter's folders through the descriptors its imports use.

As root the worker drops to the dedicated uid, which may have no search right on the folders
above the interpreter (a 0700 /root). The seccomp tier's worker, which kept the host's file
system, put /proc/self/fd/N of each import folder on sys.path before the drop; a descriptor of
the folder itself let '..' climb: from a pyenv Python's standard library under /root a cell
listed and read every folder up to pyenv's own (all of pyenv, every other Python), which it
could not reach by path, and from a venv or checkout under /root it would read that whole
project. Those descriptors became detached read-only copies of the mount trees; now that tier
has the Landlock tier's private root, whose folders are searchable and hold nothing else, so
no tier puts a descriptor on sys.path. Every real tier (conftest.py's `host`)."""

from __future__ import annotations

import ast

from .conftest import Host, run_attack

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
    assert anchors == 0, result.value  # imports by path, in the private root or bwrap's
    assert climbed == [] and product == "3.3", result.value

