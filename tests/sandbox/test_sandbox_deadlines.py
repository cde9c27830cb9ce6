"""Escape suite case 28 and the host-side caps: host functions run against the exec's deadline
(a real loopback endpoint that accepts and never answers, the real `openai` client), batches
are refused before anything is sent, a forged oversized result frame is refused by the host,
and vault writes from the REPL have per-exec and per-session quotas (case 30)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.config import LlmSection
from harness.llm import Broker
from harness.llm_provider import OpenAIProvider
from harness.rlm_tools import RlmTools
from harness.tools import vault_functions
from harness.vault_ops import VaultCalls, VaultThread
from harness.write_quota import WriteLimits, WriteQuota
from sandbox import HostFunction, Sandbox, SandboxConfig, probe
from vault import Vault

from .conftest import REAL_TIERS

# What a deadline test allows past its deadline on a loaded machine: generous, still far below
# what each test rules out (a wait for the endpoint's 5 s timeout on every retry, 14-17 s).
MARGIN_S = 3.0
# The next cell after an abandoned call: a fresh worker may have to start (seconds when the
# machine is loaded); waiting out the abandoned call's retries would take over 13 s more.
NEXT_S = 10.0


class SilentEndpoint:
    """Accepts TCP connections on loopback, reads what arrives, never answers."""

    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.connections: list[socket.socket] = []
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.getsockname()[1]}/v1"

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            self.connections.append(conn)

    def close(self) -> None:
        self.server.close()
        for conn in self.connections:
            conn.close()


@pytest.fixture(params=REAL_TIERS)
def tier(request: pytest.FixtureRequest) -> str:
    if request.param not in probe().available:
        pytest.skip(f"tier {request.param} is not available here: {probe().to_json()}")
    return str(request.param)


@pytest.fixture
def silent() -> Iterator[SilentEndpoint]:
    endpoint = SilentEndpoint()
    yield endpoint
    endpoint.close()


def _rlm_sandbox(tier: str, url: str, calls: int, root: Path) -> tuple[Sandbox, Broker]:
    section = LlmSection(base_url=url, api_key="sk-test", model="stub", timeout_s=5.0,
                         max_retries=2, calls_per_exec=calls, retry_backoff_s=0.1)
    broker = Broker(OpenAIProvider(section), section)
    rlm = RlmTools(broker)
    config = SandboxConfig(deadline_s=30, memory_mb=384, lint=False, tier=tier)
    ops = VaultCalls(Vault.init(root / "v", watch=False), VaultThread(), lambda: None)
    return Sandbox(config, rlm.functions(ops)), broker


def test_case28_rlm_call_to_a_silent_endpoint_ends_at_the_deadline(
        tier: str, silent: SilentEndpoint, tmp_path: Path) -> None:
    sb, broker = _rlm_sandbox(tier, silent.url, 15, tmp_path)
    try:
        res = sb.exec("rlm_call('some text', 'what?')", deadline_s=2.0)
        assert res.error is not None and res.error.type in ("RlmTimeout", "DeadlineExceeded")
        assert res.duration_s < 2.0 + MARGIN_S, res.duration_s  # was 16.8 s: 5 s x 3 attempts
        started = time.monotonic()
        assert sb.exec("1 + 1").value == "2"  # the supervisor answers at once afterwards,
        assert time.monotonic() - started < NEXT_S  # not after the abandoned call's retries
    finally:
        sb.close()
        broker.close()


def test_case28_large_batch_stops_at_the_deadline(tier: str, silent: SilentEndpoint,
                                                  tmp_path: Path) -> None:
    sb, broker = _rlm_sandbox(tier, silent.url, 200, tmp_path)
    try:
        cell = "rlm_batch([(f'text {i}', f'question {i}?') for i in range(64)])"
        res = sb.exec(cell, deadline_s=2.0)
        assert res.error is not None and res.error.type in ("RlmTimeout", "DeadlineExceeded")
        assert res.duration_s < 2.0 + MARGIN_S, res.duration_s  # was 14.5 s
        assert sb.exec("1 + 1").value == "2"
    finally:
        sb.close()
        broker.close()


def test_batch_over_the_budget_is_refused_before_sending(tier: str, silent: SilentEndpoint,
                                                         tmp_path: Path) -> None:
    sb, broker = _rlm_sandbox(tier, silent.url, 15, tmp_path)
    try:
        cell = "rlm_batch([(f'text {i}', f'question {i}?') for i in range(16)])"
        res = sb.exec(cell, deadline_s=10.0)
        assert res.error is not None and res.error.type == "RlmBudgetExceeded", res.to_json()
        assert "nothing was sent" in res.error.message
        assert res.duration_s < MARGIN_S  # refused at once, not at the 10 s deadline
        time.sleep(0.2)
        assert silent.connections == []  # not one request left the process
    finally:
        sb.close()
        broker.close()


def test_forged_oversized_result_is_refused_by_the_host(tier: str) -> None:
    forge = """
import os, sys, json, struct
worker = [c.cell_contents for c in ping.__closure__
          if type(c.cell_contents).__name__ == "Worker"][0]
body = json.dumps({"t": "result", "id": worker.exec_id, "ok": True, "value": "x" * 7_000_000,
                   "error": None, "threads": 1}).encode()
os.write(int(sys.argv[2]), struct.pack(">I", len(body)) + body)
import time
time.sleep(30)
"""
    functions = {"ping": HostFunction(lambda x=None: x, "Echo.", "(x=None)")}
    config = SandboxConfig(deadline_s=10, memory_mb=384, lint=False, tier=tier)
    with Sandbox(config, functions) as sb:
        res = sb.exec(forge)
        assert res.error is not None and res.error.type == "ProtocolViolation", res.to_json()
        assert res.state_lost and len(str(res.to_json())) < 100_000
        assert sb.exec("ping(2) * 21").value == "42"


def _write_sandbox(tier: str, calls: VaultCalls, limits: WriteLimits) -> Sandbox:
    functions = {"write": vault_functions(calls)["write"]}  # the REPL's own write
    config = SandboxConfig(deadline_s=20, memory_mb=384, lint=False, tier=tier)
    return Sandbox(config, WriteQuota(limits).wrap(functions))


def test_case30_write_quotas_per_exec_and_per_session(tier: str, tmp_path: Path) -> None:
    vault = Vault.init(tmp_path / "vault")
    thread = VaultThread()
    limits = WriteLimits(exec_bytes=4096, exec_notes=5, session_bytes=10_000, session_notes=8)
    with _write_sandbox(tier, VaultCalls(vault, thread, lambda: None), limits) as sb:
        res = sb.exec("for i in range(100):\n    write(f'n{i}', 'x')")
        assert res.error is not None and res.error.type == "QuotaExceeded", res.to_json()
        assert "notes written per exec" in res.error.message
        assert len(list((tmp_path / "vault").glob("n*.md"))) == 5
        res = sb.exec("write('big', 'y' * 5000)")
        assert res.error is not None and "bytes written per exec" in res.error.message
        assert sb.exec("write('n0', 'rewrite costs bytes only', overwrite=True)").ok
        res = sb.exec("for i in range(100):\n    write(f'm{i}', 'x')")
        assert res.error is not None and "notes written per session" in res.error.message
        assert len(list((tmp_path / "vault").glob("m*.md"))) == 3
    thread.close()
    vault.close()
