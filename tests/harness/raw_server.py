"""A real `rmh serve --no-dense` on a vault, spoken to in raw JSON-RPC frames over its pipes:
for tests that drive one or more servers beside other writers (an editor process, a folder
renamed away) and read every answer as the server wrote it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


class RawServer:
    """`rmh --vault VAULT serve --no-dense` (RMH_VAULT and RMH_CONFIG not inherited). `call`
    may be made from several threads: one frame in flight at a time."""

    def __init__(self, vault: Path) -> None:
        env = {k: v for k, v in os.environ.items() if k not in ("RMH_VAULT", "RMH_CONFIG")}
        env["PYTHONPATH"] = str(ROOT)
        self.p = subprocess.Popen([sys.executable, "-m", "harness", "--vault", str(vault),
                                   "serve", "--no-dense"], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                                  cwd=ROOT)
        self.next = 0
        self.lock = threading.Lock()

    def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """The answer to one request (its id checked); never an internal error (-32603)."""
        assert self.p.stdin is not None and self.p.stdout is not None
        with self.lock:
            self.next += 1
            rid = self.next
            frame = {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}
            self.p.stdin.write((json.dumps(frame) + "\n").encode())
            self.p.stdin.flush()
            answer: dict[str, Any] = json.loads(self.p.stdout.readline())
        assert answer["id"] == rid
        if "error" in answer:
            assert answer["error"]["code"] != -32603, answer
        return answer

    def close(self) -> str:
        """Close its input, assert it exits 0 (within 120 s), and return its stderr."""
        assert self.p.stdin is not None and self.p.stderr is not None
        self.p.stdin.close()
        assert self.p.wait(120) == 0
        return self.p.stderr.read().decode()
