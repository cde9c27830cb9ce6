"""Does an MCP server command answer? Spawn it as a client would and ask (`rmh setup`).

`check_server(command, args)` starts the command with a pipe on stdin and stdout, sends an MCP
`initialize`, `notifications/initialized` and `tools/list` (one JSON message per line, as the
stdio transport says), closes stdin, and reads the answers. OK means both requests were
answered without an error and the tool list is not empty; otherwise `reason` says what went
wrong (the command did not start, exited, timed out, answered an error), with the last lines
of its stderr.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

PROTOCOL_VERSION = "2025-06-18"
STDERR_TAIL = 600  # characters of the server's stderr shown when the check fails


@dataclass(frozen=True)
class CheckResult:
    """What the check saw: ok, the tool names, the negotiated version, or why it failed."""

    ok: bool
    tools: tuple[str, ...] = ()
    protocol_version: str = ""
    server: str = ""
    reason: str = ""
    stderr: str = field(default="", repr=False)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"ok": self.ok, "tools": list(self.tools),
                               "protocolVersion": self.protocol_version, "server": self.server}
        if not self.ok:
            out["reason"] = self.reason
            out["stderr"] = self.stderr
        return out


def _frames() -> bytes:
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": PROTOCOL_VERSION, "capabilities": {},
                    "clientInfo": {"name": "rmh-setup-check", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}},
    ]
    return b"".join(json.dumps(m).encode() + b"\n" for m in messages)


def _answers(stdout: bytes) -> dict[Any, dict[str, Any]]:
    out: dict[Any, dict[str, Any]] = {}
    for line in stdout.splitlines():
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if isinstance(msg, dict) and "id" in msg:
            out[msg["id"]] = msg
    return out


def check_server(command: str, args: Sequence[str], *, timeout_s: float = 180.0,
                 cwd: str | None = None) -> CheckResult:
    """Spawn `command args` and run the MCP handshake and tools/list against it."""
    try:
        proc = subprocess.run([command, *args], input=_frames(), capture_output=True,
                              timeout=timeout_s, cwd=cwd, check=False)
    except FileNotFoundError:
        return CheckResult(False, reason=f"cannot run {command}: no such file")
    except PermissionError:
        return CheckResult(False, reason=f"cannot run {command}: not executable")
    except subprocess.TimeoutExpired as exc:
        err = (exc.stderr or b"").decode("utf-8", "replace")[-STDERR_TAIL:]
        return CheckResult(False, reason=f"no answer within {timeout_s:.0f} s", stderr=err)
    err = proc.stderr.decode("utf-8", "replace")[-STDERR_TAIL:]
    answers = _answers(proc.stdout)
    init, listed = answers.get(1, {}), answers.get(2, {})
    for label, msg in (("initialize", init), ("tools/list", listed)):
        if "result" not in msg:
            why = msg.get("error", {}).get("message") if msg else None
            detail = f"answered an error: {why}" if why else (
                f"no answer (exit code {proc.returncode})")
            return CheckResult(False, reason=f"{label}: {detail}", stderr=err)
    tools = tuple(str(t.get("name")) for t in listed["result"].get("tools", [])
                  if isinstance(t, dict))
    info = init["result"].get("serverInfo", {})
    result = CheckResult(bool(tools), tools=tools,
                         protocol_version=str(init["result"].get("protocolVersion", "")),
                         server=f"{info.get('name', '?')} {info.get('version', '')}".strip(),
                         reason="" if tools else "tools/list is empty", stderr=err)
    return result
