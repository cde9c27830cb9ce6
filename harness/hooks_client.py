"""The hooks daemon's client side: where its socket is, and one request with a hard wait.

Split from harness/hooks_daemon.py so that a hook answered by the daemon (harness/hooks_fast.py)
imports only `json`, `os`, `pathlib`, `socket` and `time`: no `subprocess`, no SQLite, no vault. The
line protocol is the daemon's (its module docstring): one JSON object per line each way.
"""

from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path
from typing import Any

SOCKET = "hooks.sock"
CLIENT_TIMEOUT_S = 0.2  # the prompt hook's wait for the daemon, connect to answer
MAX_SUN_PATH = 100  # AF_UNIX paths are at most 107 bytes on Linux


def socket_path(root: Path) -> Path | None:
    """VAULT/.rmh/hooks.sock, or None when the path is too long for a Unix socket."""
    path = root / ".rmh" / SOCKET
    return path if len(os.fsencode(str(path))) <= MAX_SUN_PATH else None


def daemon_request(root: Path, request: dict[str, Any],
                   timeout: float = CLIENT_TIMEOUT_S) -> dict[str, Any] | None:
    """The daemon's answer to `request`, or None (no daemon, too slow, a bad answer): never
    raises and never waits past `timeout` seconds in all."""
    path = socket_path(root)
    if path is None or not path.exists():
        return None
    deadline = time.monotonic() + timeout
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(timeout)
            s.connect(str(path))
            s.sendall(json.dumps(request).encode() + b"\n")
            data = b""
            while not data.endswith(b"\n"):
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                s.settimeout(left)
                chunk = s.recv(65536)
                if not chunk:
                    return None
                data += chunk
        doc = json.loads(data)
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None
