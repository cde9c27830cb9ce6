"""Hostile cells against a real `rmh serve` on each sandbox tier this machine runs.

The escape suite (tests/sandbox) drives a `Sandbox` in-process; here the supervisor is the
served process itself, as an agent meets it: its stdout is the JSON-RPC channel and its
environment holds the API key. A cell tries to change the supervisor's rlimits (prlimit on the
server's pid and on its own parent), to read /proc/<pid>/environ, and to forge a response by
writing to /proc/<pid>/fd/1. On the host: the server's /proc/PID/limits are unchanged, no
canary appears in any byte the server wrote, its stdout holds only well-formed JSON-RPC
responses to the requests sent (each answered once, nothing forged), and the next exec works.
The attack reaches the worker past the courtesy lint (`run = exec; run(source)`): the lint is
not a boundary (sandbox/lint.py), so the test must not lean on it.
"""

from __future__ import annotations

import json
import secrets
from pathlib import Path
from typing import Any

import pytest

from sandbox import TIER_BWRAP, TIER_LANDLOCK, TIER_SECCOMP, probe

from .test_server_e2e import Server, make_vault

pytestmark = pytest.mark.slow

TIER_FLAGS = {TIER_BWRAP: "bwrap", TIER_LANDLOCK: "landlock", TIER_SECCOMP: "seccomp"}
FORGED = "FORGED-BY-CELL"

ATTACK = """
import os, resource
def attempt(f):
    try:
        return "ok: " + repr(f())[:200]
    except BaseException as exc:
        return "refused: " + type(exc).__name__
def forge_text(pid):
    with open(f"/proc/{pid}/fd/1", "w") as out:
        out.write('{"jsonrpc": "2.0", "id": "attack", "result": "@FORGED@"}\\n')
    return "written"
def forge_raw(pid):
    fd = os.open(f"/proc/{pid}/fd/1", os.O_WRONLY | os.O_APPEND)
    return os.write(fd, b'{"jsonrpc": "2.0", "id": 1, "result": "@FORGED@"}\\n')
out = {"own_env": sorted(os.environ.items())}
for pid in sorted({@SERVER@, os.getppid()}):
    out[f"nofile{pid}"] = attempt(lambda: resource.prlimit(pid, resource.RLIMIT_NOFILE, (4, 4)))
    out[f"as{pid}"] = attempt(lambda: resource.prlimit(pid, resource.RLIMIT_AS, (1 << 20,) * 2))
    out[f"core{pid}"] = attempt(lambda: resource.prlimit(pid, resource.RLIMIT_CORE, (0, 0)))
    out[f"environ{pid}"] = attempt(lambda: open(f"/proc/{pid}/environ", "rb").read())
    out[f"fd1text{pid}"] = attempt(lambda: forge_text(pid))
    out[f"fd1raw{pid}"] = attempt(lambda: forge_raw(pid))
out
"""


def limits(pid: int) -> str:
    return Path(f"/proc/{pid}/limits").read_text(encoding="ascii")


def served_tiers() -> list[Any]:
    return [pytest.param(t, marks=pytest.mark.skipif(
        t not in probe().available, reason=f"tier {t} is not available here"))
        for t in TIER_FLAGS]


def check_stdout(server: Server, sent: list[Any], canaries: list[str]) -> None:
    """Only well-formed responses, one per request sent, nothing forged, no canary."""
    ids = []
    for line in server.lines:
        text = line.decode("utf-8")
        assert FORGED not in text and not any(c in text for c in canaries), text[:300]
        msg = json.loads(text)
        assert isinstance(msg, dict) and msg.get("jsonrpc") == "2.0", text[:300]
        assert ("result" in msg) != ("error" in msg) and "id" in msg, text[:300]
        ids.append(msg["id"])
    assert sorted(map(str, ids)) == sorted(map(str, sent))


@pytest.mark.parametrize("tier", served_tiers())
def test_served_cell_cannot_touch_the_supervisor(tier: str, tmp_path: Path) -> None:
    canary = "canary-" + secrets.token_hex(12)
    key = "sk-canary-" + secrets.token_hex(12)
    env = {"RMH_SERVED_CANARY": canary}
    if tier != TIER_SECCOMP:  # the seccomp tier is refused while a key is set (below)
        env["OPENAI_API_KEY"] = key
    server = Server(make_vault(tmp_path / "vault"), tmp_path, "--tier", TIER_FLAGS[tier],
                    env_extra=env)
    try:
        sent: list[Any] = []

        def call(method: str, params: Any = None) -> Any:
            sent.append(len(sent) + 1)
            return server.call(method, params, rid=sent[-1])

        warm = call("repl.exec", {"code": "1 + 1"})["result"]
        assert warm["ok"] and warm["value"] == "2", warm
        assert call("status")["result"]["isolation_tier"] == tier
        before = limits(server.proc.pid)
        source = ATTACK.replace("@SERVER@", str(server.proc.pid)).replace("@FORGED@", FORGED)
        attack = call("repl.exec", {"code": f"run = exec\nrun({source!r})\nout"})
        assert "result" in attack, attack
        assert limits(server.proc.pid) == before
        assert attack["result"]["ok"], attack  # the cell ran; each attempt was refused
        if attack["result"]["ok"]:
            value = attack["result"]["value"]
            for name in ("nofile", "as", "core", "environ", "fd1text", "fd1raw"):
                assert f"'{name}{server.proc.pid}': 'ok" not in value, (name, value)
        after = call("repl.exec", {"code": "search('hiking')[0]['note']"})["result"]
        assert after["ok"] and after["value"] == "'people/Caroline.md'", after
        assert call("ping")["result"] == {}
        assert limits(server.proc.pid) == before
        assert server.finish() == 0
        check_stdout(server, sent, [canary, key])
        assert canary not in server.stderr_path.read_text() and key not in \
            server.stderr_path.read_text()
    finally:
        if server.proc.poll() is None:
            server.proc.kill()
            server.proc.wait()


@pytest.mark.skipif(TIER_SECCOMP not in probe().available, reason="no seccomp here")
def test_served_seccomp_tier_refuses_while_a_key_is_set(tmp_path: Path) -> None:
    key = "sk-canary-" + secrets.token_hex(12)
    server = Server(make_vault(tmp_path / "vault"), tmp_path, "--tier", "seccomp",
                    env_extra={"OPENAI_API_KEY": key})
    try:
        out = server.call("repl.exec", {"code": "open('/proc/self/environ').read()"})
        assert out["error"]["data"]["kind"] in ("sandbox_error", "sandbox_refused"), out
        assert server.call("ping", rid=2)["result"] == {}
        assert server.finish() == 0
        check_stdout(server, [1, 2], [key])
    finally:
        if server.proc.poll() is None:
            server.proc.kill()
            server.proc.wait()
