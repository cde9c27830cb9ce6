"""An end-to-end session against `rmh serve` as a real subprocess, raw JSON-RPC on its pipes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
# the test-isolated cache paths (tests/conftest.py) travel with the child
CHILD_ENV = ("PATH", "HOME", "LANG", "TMPDIR", "RMH_EMBED_CACHE", "XDG_CACHE_HOME",
             "RMH_GRAPH_CACHE")

pytestmark = pytest.mark.slow


def make_vault(root: Path) -> Path:
    (root / ".rmh").mkdir(parents=True)
    (root / "people").mkdir()
    (root / "people" / "Caroline.md").write_text(
        "---\naliases: [Caro]\n---\nCaroline likes hiking and works on [[Project Atlas]].\n",
        encoding="utf-8",
    )
    (root / "Project Atlas.md").write_text(
        "Project Atlas is the auth rewrite, due on Monday. Owner: [[Caroline]].\n",
        encoding="utf-8",
    )
    (root / "Lunch.md").write_text("Lunch on Tuesday with Bob at the noodle bar.\n", "utf-8")
    return root


def _hangup_default() -> None:
    """SIGHUP at its default in the served child: a suite run under `nohup` inherits it ignored,
    and `rmh serve` keeps an inherited ignore, so the SIGHUP case would stop nothing."""
    signal.signal(signal.SIGHUP, signal.SIG_DFL)


def _hangup_ignored() -> bool:
    return signal.getsignal(signal.SIGHUP) is signal.SIG_IGN


class Server:
    """`python -m harness serve` with line-oriented access to its stdout."""

    def __init__(self, vault: Path, tmp: Path, *extra: str,
                 env_extra: dict[str, str] | None = None, dense: bool = False) -> None:
        env = {k: v for k, v in os.environ.items() if k in CHILD_ENV}
        env["PYTHONPATH"] = str(REPO)
        env.update(env_extra or {})
        self.stderr_path = tmp / "stderr.log"
        self._stderr = self.stderr_path.open("wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "harness", "--vault", str(vault), "serve",
             *([] if dense else ["--no-dense"]), "--log-level", "info", *extra],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr,
            cwd=REPO, env=env, preexec_fn=_hangup_default if _hangup_ignored() else None,
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.stdin, self.stdout = self.proc.stdin, self.proc.stdout
        self.lines: list[bytes] = []  # every byte the server wrote to stdout

    def send_raw(self, data: bytes) -> None:
        self.stdin.write(data)
        self.stdin.flush()

    def send(self, method: str, params: Any = None, rid: Any = None) -> None:
        msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        if rid is not None:
            msg["id"] = rid
        self.send_raw(json.dumps(msg).encode() + b"\n")

    def recv(self) -> Any:
        line = self.stdout.readline()
        assert line, f"server closed stdout; stderr:\n{self.stderr_path.read_text()}"
        self.lines.append(line)
        return json.loads(line)

    def call(self, method: str, params: Any = None, rid: Any = 1) -> Any:
        self.send(method, params, rid)
        out = self.recv()
        assert out["id"] == rid
        return out

    def finish(self) -> int:
        self.stdin.close()
        rest = self.stdout.read()
        self.lines += rest.splitlines(keepends=True)
        code = self.proc.wait(timeout=60)
        self._stderr.close()
        return code


@pytest.fixture
def server(tmp_path: Path) -> Any:
    srv = Server(make_vault(tmp_path / "vault"), tmp_path)
    yield srv
    if srv.proc.poll() is None:
        srv.proc.kill()
        srv.proc.wait()


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="reads /proc/PID/fd")
def _nameless_code_files(pid: int, state: Path) -> list[str]:
    """What `pid` holds open in `state` with no name that is not a store's private copy
    (private_copy.py: a copy begins as the named store it copies, magic and all; a loaded
    store's mapping holds its copy's descriptor): int8 code rows, 384 bytes each (MiniLM)."""
    heads = {f.read_bytes()[:8] for f in state.rglob("*") if f.is_file()}
    found = []
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        target = os.readlink(fd) if fd.is_symlink() else ""
        if target.startswith(str(state) + "/") and target.endswith("(deleted)"):
            data = fd.read_bytes()
            if data and len(data) % 384 == 0 and data[:8] not in heads:
                found.append(target)
    return found


def test_dense_ivf_codes_live_in_a_nameless_file_in_the_vault_state(tmp_path: Path) -> None:
    """Above dense_approx_above chunks the served vault's IVF keeps its codes in a file in
    .rmh/ that has no name: the server holds it open, no one sees it, it goes with the server;
    searches and an edit find the right notes through it (the real MiniLM encoder)."""
    vault = make_vault(tmp_path / "vault")
    (vault / "rmh.toml").write_text("[search]\ndense_approx_above = 2\n", encoding="utf-8")
    state = vault / ".rmh"
    srv = Server(vault, tmp_path, dense=True)
    try:
        hits = srv.call("vault.search", {"query": "the auth rewrite", "k": 3})["result"]
        assert hits["hits"][0]["note"] == "Project Atlas.md"
        why = srv.call("vault.search", {"query": "noodle bar lunch", "k": 1, "explain": True})
        assert why["result"]["hits"][0]["note"] == "Lunch.md"
        assert _nameless_code_files(srv.proc.pid, state)  # the codes file, open and nameless
        assert not any(p.name.startswith("tmp") for p in state.iterdir())
        srv.call("vault.write", {"note": "Kayak", "content": "Kayaking on the fjord at dawn."})
        after = srv.call("vault.search", {"query": "kayak fjord", "k": 1})["result"]
        assert after["hits"][0]["note"] == "Kayak.md"
    finally:
        assert srv.finish() == 0
    assert not any(p.name.startswith("tmp") for p in state.iterdir())


def test_full_session(server: Server, tmp_path: Path) -> None:
    st = server.call("status")["result"]
    assert st["index"]["notes"] == 3 and st["version"] and "isolation_tier" in st
    assert st["changes"]["auto_sync"] is True and st["changes"]["stat_loop"] in ("c", "python")
    assert st["llm"]["provider"] == "extractive"  # no endpoint configured: offline answers
    sid = server.call("session.start", {})["result"]["session"]

    hits = server.call("vault.search", {"query": "auth rewrite Monday", "k": 2})["result"]
    assert hits["hits"][0]["note"] == "Project Atlas.md" and len(hits["hits"]) <= 2
    note = server.call("vault.read", {"note": "Caro"})["result"]
    assert note["note"] == "people/Caroline.md" and "hiking" in note["text"]
    wrote = server.call("vault.write", {"note": "inbox/Idea", "content": "See [[Lunch]]."})
    assert wrote["result"]["note"] == "inbox/Idea.md"
    links = server.call("vault.links", {"note": "inbox/Idea.md"})["result"]
    assert links[0]["resolved"] == "Lunch.md"
    assert server.call("vault.backlinks", {"note": "Lunch"})["result"] == ["inbox/Idea.md"]
    assert "people/Caroline.md" in server.call("vault.neighbors", {"note": "Project Atlas"})[
        "result"]
    moved = server.call("vault.move", {"note": "Lunch", "new": "food/Lunch.md"})["result"]
    assert moved["note"] == "food/Lunch.md" and moved["old"] == "Lunch.md"
    gone = server.call("vault.delete", {"note": "inbox/idea"})["result"]  # named loosely
    assert gone["trash"] and gone["note"] == "inbox/Idea.md"  # answered with its real path

    # errors: bad params name the parameter; domain errors use the application table
    bad = server.call("vault.search", {"query": "x", "k": "ten"})["error"]
    assert bad["code"] == -32602 and bad["data"]["param"] == "k"
    missing = server.call("vault.search", {})["error"]
    assert missing["code"] == -32602 and missing["data"]["param"] == "query"
    nf = server.call("vault.read", {"note": "Nobody"})["error"]
    assert nf["code"] == -32003 and nf["data"] == {"kind": "note_not_found", "note": "Nobody"}
    assert server.call("vault.nope")["error"]["code"] == -32601

    ended = server.call("session.end")["result"]
    assert ended["session"] == sid
    assert server.call("session.end")["error"]["code"] == -32041
    assert server.finish() == 0
    for line in server.lines:  # nothing but protocol on stdout
        msg = json.loads(line)
        assert msg["jsonrpc"] == "2.0" and "id" in msg
    assert (tmp_path / "vault" / "food" / "Lunch.md").exists()


def test_repl_exec_with_host_functions(server: Server) -> None:
    out = server.call("repl.exec", {"code": "print('to stdout?')\nhits = search('hiking')\n"
                                             "hits[0]['note']"})["result"]
    assert out["ok"], out
    assert out["stdout"] == "to stdout?\n" and out["value"] == "'people/Caroline.md'"
    doc = server.call("repl.exec", {"code": "help(neighbors)"}, rid=2)["result"]
    assert "hops" in doc["stdout"]
    err = server.call("repl.exec", {"code": "read('Nobody')"}, rid=3)["result"]
    assert not err["ok"] and err["error"]["type"] == "NoteNotFound"
    kept = server.call("repl.exec", {"code": "hits[0]['title']"}, rid=4)["result"]
    assert kept["value"] == "'Caroline'"  # the namespace persists between execs
    server.call("repl.reset", rid=5)
    lost = server.call("repl.exec", {"code": "hits"}, rid=6)["result"]
    assert lost["error"]["type"] == "NameError"
    assert server.finish() == 0
    assert all(json.loads(line)["id"] is not None for line in server.lines)


def test_cancel_running_exec_while_ping_answers(server: Server) -> None:
    server.send("repl.exec", {"code": "import time\nwhile True: time.sleep(0.01)"}, "loop")
    assert server.call("ping", rid="p")["result"] == {}  # answered while the exec runs
    assert server.call("vault.search", {"query": "noodle"}, rid="s")["result"]["hits"]
    server.send("$/cancelRequest", {"id": "loop"})
    out = server.recv()
    assert out["id"] == "loop" and out["error"]["code"] == -32800
    again = server.call("repl.exec", {"code": "1 + 1"}, rid="after")["result"]
    assert again["value"] == "2"
    assert server.finish() == 0


def test_duplicate_id_and_garbage_on_the_wire(server: Server) -> None:
    server.send("repl.exec", {"code": "import time\ntime.sleep(30)"}, 7)
    server.send("ping", None, 7)
    dup = server.recv()
    assert dup["id"] == 7 and dup["error"]["data"]["reason"] == "duplicate id in flight"
    server.send_raw(b"\xff\xfe garbage\n")
    assert server.recv()["error"]["code"] == -32700
    server.send_raw(b'{"jsonrpc": "1.0", "method": "ping", "id": 8}\n')
    assert server.recv()["error"]["code"] == -32600
    server.send("notifications/cancelled", {"requestId": 7})
    assert server.call("ping", rid=9)["result"] == {}
    assert server.finish() == 0


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP],
                         ids=lambda s: signal.Signals(s).name)
def test_a_stop_signal_flushes_session_end_and_exits_cleanly(server: Server,
                                                             signum: int) -> None:
    """SIGHUP too (ADVRPC, session 26): at its default it killed the server with the running
    exec unanswered and the session left to the next connection's recovery."""
    server.call("session.start", {"session": "term-test"})
    server.send("repl.exec", {"code": "import time\ntime.sleep(60)"}, "long")
    assert server.call("ping", rid="p")["result"] == {}
    server.proc.send_signal(signum)
    out = server.recv()
    assert out["id"] == "long" and out["error"]["data"]["kind"] == "server_shutting_down"
    assert server.proc.wait(timeout=60) == 0
    assert "session term-test ended" in server.stderr_path.read_text()


def test_sigterm_stops_a_server_whose_client_does_not_read(server: Server) -> None:
    """ADVRPC: 20 MB of answers nobody read held the server in write(2); SIGTERM never ended
    it (150 s and counting) and its session was never ended."""
    server.call("vault.write", {"note": "Big", "content": "word " * 200_000})
    for i in range(20):
        server.send("vault.read", {"note": "Big"}, rid=f"r{i}")
    time.sleep(2.0)  # the pipe is full
    server.proc.send_signal(signal.SIGTERM)
    assert server.proc.wait(timeout=60) == 0
    assert "ended" in server.stderr_path.read_text()


def test_100_mb_line_is_refused_in_bounded_memory(server: Server) -> None:
    chunk = b"x" * (1 << 20)
    done = threading.Event()
    assert server.call("ping", rid=0)["result"] == {}
    before_kb = _vm(server.proc.pid, "VmRSS")

    def flood() -> None:
        for _ in range(100):
            server.send_raw(chunk)
        server.send_raw(b"\n")
        done.set()

    writer = threading.Thread(target=flood)
    writer.start()
    first = server.recv()
    assert first["id"] is None and first["error"]["data"]["reason"] == "frame too large"
    writer.join(timeout=120)
    assert done.is_set()
    assert server.call("ping", rid=1)["result"] == {}
    peak_kb = _vm(server.proc.pid, "VmHWM")
    assert peak_kb - before_kb < 48 * 1024, f"RSS {before_kb} kB -> peak {peak_kb} kB"
    assert server.finish() == 0


def _vm(pid: int, field: str) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(ln for ln in status.splitlines() if ln.startswith(field)).split()[1])
