"""A warm hooks daemon: the prompt hook's memory from a vault kept open between hooks.

A hook is a new process each time, and a new process cannot prepare the search engine (and
load the embedder, for dense search) within a hook's budget on a large vault. The session
start hook therefore starts `rmh hooks daemon` in the background when none answers: one
process per vault that opens the vault with the engine (`[hooks] dense` says whether with
embeddings), prepares it with one search, and answers on the Unix socket
VAULT/.rmh/hooks.sock, one JSON line in and one out:

    {"event": "ping"}                                   -> {"ok": true}
    {"event": "start", "session": S}                    -> {"ok": true}  (a client session)
    {"event": "prompt", "prompt": P, "session": S,
     "own": CLIENT_SESSION_ID}                          -> {"text": MEMORY}
    {"event": "end", "session": S}                      -> {"ok": true}  (last one: it exits)

The prompt hook asks it first (`ask`, within `[hooks] daemon_wait_s`, CLIENT_TIMEOUT_S by
default, all told); when no daemon runs
(no socket, or a dead one's: refused at once) the hook falls back to the hooks' own FTS5
index (harness/hooks_recall.py); when the daemon does not answer in time it injects nothing
(one line on stderr), so the hook stays within its budget and never fails its client.
The daemon exits when the last client session it knows ends, after IDLE_S without a request,
or on SIGTERM; it removes its socket. Requests are answered one at a time (the vault facade
is used by one thread). A socket path too long for AF_UNIX means no daemon (the fallback).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

SOCKET = "hooks.sock"
LOG = "hooks-daemon.log"
LOCK = "hooks-daemon.lock"
PID = "hooks-daemon.pid"
CLIENT_TIMEOUT_S = 0.2  # the prompt hook's wait for the daemon, connect to answer
IDLE_S = 4 * 3600.0
MAX_REQUEST = 1 << 20
MAX_SUN_PATH = 100  # AF_UNIX paths are at most 107 bytes on Linux


def socket_path(root: Path) -> Path | None:
    """VAULT/.rmh/hooks.sock, or None when the path is too long for a Unix socket."""
    path = root / ".rmh" / SOCKET
    return path if len(os.fsencode(str(path))) <= MAX_SUN_PATH else None


def daemon_request(root: Path, request: dict[str, Any], timeout: float = CLIENT_TIMEOUT_S
        ) -> dict[str, Any] | None:
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


def spawn(root: Path, session: str) -> bool:
    """Register client `session` with the vault's daemon, starting `rmh hooks daemon` in the
    background (with that session) when none answers; True when one was started. Never
    waits for it to be ready."""
    if socket_path(root) is None or daemon_request(root, {"event": "start", "session": session}):
        return False
    log = open(root / ".rmh" / LOG, "ab")  # noqa: SIM115 (handed to the child)
    try:
        subprocess.Popen([sys.executable, "-m", "harness", "--vault", str(root),
                          "hooks", "daemon", "--session", session], stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=log, start_new_session=True,
                         close_fds=True)
    finally:
        log.close()
    return True


class Daemon:
    """The serving loop (module doc) over an open vault."""

    def __init__(self, vault: Any, *, words: int, k: int, min_share: float,
                 idle_s: float = IDLE_S) -> None:
        self.vault = vault
        self.words, self.k, self.min_share = words, k, min_share
        self.idle_s = idle_s
        self.sessions: set[str] = set()
        self.done = False

    def handle(self, request: Any) -> dict[str, Any]:
        from .hooks_memory import prompt_memory

        if not isinstance(request, dict):
            return {"error": "a request is a JSON object"}
        event, session = request.get("event"), request.get("session")
        if event == "ping":
            return {"ok": True}
        if event == "start" and isinstance(session, str):
            self.sessions.add(session)
            return {"ok": True}
        if event == "end" and isinstance(session, str):
            self.sessions.discard(session)
            self.done = not self.sessions
            return {"ok": True}
        if event == "prompt" and isinstance(request.get("prompt"), str):
            own = request.get("own")
            text = prompt_memory(self.vault, request["prompt"], self.words, k=self.k,
                                 min_share=self.min_share,
                                 session=session if isinstance(session, str) else None,
                                 own_conversation=own if isinstance(own, str) else "")
            return {"text": text}
        return {"error": f"unknown request {str(event)[:40]!r}"}

    def serve(self, path: Path) -> bool:
        """Answer on `path` until done (module doc); the socket is removed at the end. False
        at once when another daemon holds the vault's daemon lock (two session starts
        racing: one daemon serves)."""
        lock = open(path.with_name(LOCK), "a")  # noqa: SIM115 (held for the daemon's life)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            lock.close()
            return False
        pid = path.with_name(PID)
        try:
            pid.write_text(f"{os.getpid()}\n", encoding="utf-8")
            self._serve(path)
        finally:
            with contextlib.suppress(FileNotFoundError):
                pid.unlink()
            lock.close()
        return True

    def _serve(self, path: Path) -> None:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()  # a stale socket: its daemon is gone (it held the lock)
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
            server.bind(str(path))
            server.listen(16)
            server.settimeout(1.0)
            signal.signal(signal.SIGTERM, lambda *_: setattr(self, "done", True))
            last = time.monotonic()
            try:
                while not self.done and time.monotonic() - last < self.idle_s:
                    try:
                        conn, _ = server.accept()
                    except TimeoutError:
                        continue
                    last = time.monotonic()
                    with conn:
                        self._answer(conn)
            finally:
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()

    def _answer(self, conn: socket.socket) -> None:
        conn.settimeout(5.0)
        data = b""
        try:
            while not data.endswith(b"\n") and len(data) < MAX_REQUEST:
                chunk = conn.recv(65536)
                if not chunk:
                    break
                data += chunk
            try:
                reply = self.handle(json.loads(data))
            except ValueError:
                reply = {"error": "not JSON"}
            except Exception as exc:  # a failed request must not stop the daemon
                print(f"rmh hooks daemon: {type(exc).__name__}: {exc}", file=sys.stderr)
                reply = {"error": type(exc).__name__}
            conn.sendall(json.dumps(reply, ensure_ascii=False).encode() + b"\n")
        except OSError:
            return  # the hook gave up (its budget): nothing to answer
