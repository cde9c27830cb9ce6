"""Fixtures for the escape suite: one real sandbox per tier, with host-side tripwires.

Every attack runs through `run_attack`, which checks the suite's invariants on the host:
I1 canaries outside the vault unchanged and no escape marker created; I2 the loopback TCP and
UDP listeners received nothing; I3 the supervisor's secret never appears in a result; I5 the
vault's bytes unchanged (unless the case writes through the vault API); I4+I6 the supervisor
answers the next ordinary exec, which also calls a host function, correctly.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import socket
import textwrap
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from sandbox import (
    TIER_BWRAP,
    TIER_LANDLOCK,
    TIER_SECCOMP,
    ExecResult,
    HostFunction,
    HostFunctionError,
    Sandbox,
    SandboxConfig,
    probe,
)
from vault import Vault, VaultError

# Every real tier (sandbox/registry.py lists what each tier does not guarantee).
REAL_TIERS = (TIER_BWRAP, TIER_LANDLOCK, TIER_SECCOMP)
SECRET_VAR = "RMH_ESCAPE_SUITE_SECRET"


def _vault_digest(root: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith(".rmh") or path.is_dir():
            continue
        data = path.read_bytes() if not path.is_symlink() else os.readlink(path).encode()
        out[rel] = hashlib.sha256(data).hexdigest()
    return out


@dataclass
class Host:
    """A sandbox and the host-side tripwires around it."""

    tier: str
    sb: Sandbox
    vault: Vault
    vault_dir: Path
    outside: Path  # a folder outside the vault holding the canary
    canary: Path
    marker: str  # escape attempts write to paths starting with this; none may appear
    tcp: socket.socket
    udp: socket.socket
    secret: str
    started: threading.Event = field(default_factory=threading.Event)

    @property
    def subs(self) -> dict[str, str]:
        return {
            "CANARY": str(self.canary), "ESC": self.marker, "VAULT": str(self.vault_dir),
            "PORT": str(self.tcp.getsockname()[1]), "UPORT": str(self.udp.getsockname()[1]),
            "SUPPID": str(os.getpid()), "SECRETVAR": SECRET_VAR,
        }

    def code(self, source: str) -> str:
        text = textwrap.dedent(source)
        for key, value in self.subs.items():
            text = text.replace(f"@{key}@", value)
        return text

    def markers(self) -> list[str]:
        folder, prefix = os.path.split(self.marker)
        return sorted(n for n in os.listdir(folder) if n.startswith(prefix))


def _functions(vault: Vault, started: threading.Event) -> dict[str, HostFunction]:
    def write(note: str, content: str) -> dict[str, Any]:
        try:
            return {"note": vault.write(note, content).note}
        except VaultError as exc:
            raise HostFunctionError(type(exc).__name__, str(exc)) from None

    def read(note: str) -> str:
        try:
            return vault.read(note).text
        except VaultError as exc:
            raise HostFunctionError(type(exc).__name__, str(exc)) from None

    def ping(x: Any = None) -> Any:
        return x

    def mark_started() -> None:
        started.set()

    return {
        "write": HostFunction(write, "Write a note.", "(note, content)"),
        "read": HostFunction(read, "Read a note.", "(note)"),
        "ping": HostFunction(ping, "Echo the argument.", "(x=None)"),
        "mark_started": HostFunction(mark_started, "Tell the test the cell runs.", "()"),
    }


@pytest.fixture(scope="session", autouse=True)
def supervisor_secret() -> Iterator[str]:
    value = "sk-" + secrets.token_hex(16)
    os.environ[SECRET_VAR] = value
    yield value
    os.environ.pop(SECRET_VAR, None)


@pytest.fixture(scope="session", params=REAL_TIERS)
def host(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
         supervisor_secret: str) -> Iterator[Host]:
    tier = str(request.param)
    if tier not in probe().available:
        pytest.skip(f"tier {tier} is not available here: {probe().to_json()}")
    base = tmp_path_factory.mktemp(f"escape-{tier.split('+')[0]}")
    vault_dir, outside = base / "vault", base / "outside"
    outside.mkdir()
    vault = Vault.init(vault_dir)
    vault.write("home.md", "# Home\nkeep me\n")
    canary = outside / "canary.txt"
    canary.write_text("canary")
    (vault_dir / "planted").symlink_to(outside, target_is_directory=True)
    tcp = socket.create_server(("127.0.0.1", 0))
    tcp.setblocking(False)
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    udp.setblocking(False)
    started = threading.Event()
    config = SandboxConfig(deadline_s=5.0, memory_mb=384, scratch_mb=16, max_calls=50,
                           lint=False, tier=tier, open_files=128)
    sb = Sandbox(config, _functions(vault, started))
    marker = f"/tmp/rmh-escape-{secrets.token_hex(6)}"
    yield Host(tier, sb, vault, vault_dir, outside, canary, marker, tcp, udp,
               supervisor_secret, started)
    sb.close()
    vault.close()
    tcp.close()
    udp.close()


def run_attack(host: Host, source: str, *, deadline_s: float = 5.0,
               vault_may_change: bool = False) -> ExecResult:
    """Run one hostile cell and assert the invariants; return its result for case checks."""
    before = _vault_digest(host.vault_dir)
    outside_before = sorted(os.listdir(host.outside))
    result = host.sb.exec(host.code(source), deadline_s=deadline_s)
    assert host.canary.read_text() == "canary", "I1: canary changed"
    assert sorted(os.listdir(host.outside)) == outside_before, "I1: file appeared outside"
    assert host.markers() == [], f"I1: escape marker created: {host.markers()}"
    with pytest.raises(BlockingIOError):
        host.tcp.accept()
    with pytest.raises(BlockingIOError):
        host.udp.recvfrom(100)
    assert host.secret not in json.dumps(result.to_json()), "I3: secret leaked"
    if not vault_may_change:
        assert _vault_digest(host.vault_dir) == before, "I5: vault changed"
    after = host.sb.exec("ping(21) * 2", deadline_s=30)
    assert after.ok and after.value == "42", f"I4/I6: next exec failed: {after.to_json()}"
    return result
