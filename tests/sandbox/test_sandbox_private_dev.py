"""No cell opens a host pty. On the seccomp tier the worker saw the host's /dev, and the filter
cannot see paths: each read-only open of /dev/ptmx made one of the host's ptys (248 per worker
with open_files 256, held for the worker's life; kernel.pty.max is 4,096 by default, so ~17
workers took every new terminal of the machine). Now that tier's worker gets its own /dev where
it can make a mount namespace (root, or user namespaces allowed): a read-only tmpfs holding only
null, zero, random and urandom, bound from the host's, as on the bwrap tier; Landlock's private
root has no /dev at all. Every real tier (conftest.py's `host`)."""

from __future__ import annotations

import ast

from .conftest import Host, run_attack

_CELL = """
import os
opened = []
for path in ("/dev/ptmx", "/dev/pts/ptmx", "/dev/tty", "/dev/console", "/dev/full",
             "/dev/kmsg", "/dev/fuse", "/dev/net/tun", "/dev/loop-control", "/dev/shm"):
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOCTTY | os.O_NONBLOCK)
    except OSError:
        continue
    os.close(fd)
    opened.append(path)
works = True
if os.path.exists("/dev"):  # the Landlock tier's private root has none
    with open("/dev/urandom", "rb") as f, open("/dev/null", "rb") as null:
        works = len(f.read(16)) == 16 and null.read(1) == b""
opened, works
"""


def test_no_cell_opens_a_device_beyond_the_four(host: Host) -> None:
    result = run_attack(host, _CELL)
    assert result.ok and result.value is not None, result.to_json()
    opened, works = ast.literal_eval(result.value)
    assert opened == [] and works, result.value
