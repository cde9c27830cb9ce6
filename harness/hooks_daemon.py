"""A warm hooks daemon: the prompt hook's memory from a vault kept open between hooks.

A hook is a new process each time, and a new process cannot prepare the search engine (and
load the embedder, for dense search) within a hook's budget on a large vault. The session
start hook therefore starts `rmh hooks daemon` in the background when none answers: one
process per vault that opens the vault with the engine (`[hooks] dense` says whether with
embeddings), prepares it with one search, and answers on the Unix socket
VAULT/.rmh/hooks.sock, one JSON line in and one out:

    {"event": "ping"}                                   -> {"ok": true}
    {"event": "start", "session": S}                    -> {"ok": true}  (a client session)
    {"event": "start", "session": S, "cwd": DIR,
     "words": N}                                        -> {"ok": true, "text": BRIEF}
    {"event": "prompt", "prompt": P, "session": S,
     "own": CLIENT_SESSION_ID}                          -> {"text": MEMORY}
    {"event": "end", "session": S}                      -> {"ok": true}  (last one: it exits)

(the session-start brief, `hooks_recall.brief`, given only when the hooks' own index exists.)
A hook answered by the daemon runs without loading the CLI or the configuration
(harness/hooks_fast.py): while it serves, the daemon publishes VAULT/.rmh/hooks-daemon.json
(its pid, `wait_s` = its `[hooks] daemon_wait_s`, `start_words`), so a changed `[hooks]`
section applies from the next daemon on. The client side is harness/hooks_client.py.
The prompt hook asks it first (`daemon_request`, within `[hooks] daemon_wait_s`, CLIENT_TIMEOUT_S by
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

from vault import held_state

from .hooks_client import (
    CLIENT_TIMEOUT_S,
    SETTINGS,
    SOCKET,
    daemon_request,
    own_file,
    root_id,
    socket_path,
)

__all__ = ["CLIENT_TIMEOUT_S", "SETTINGS", "SOCKET", "Daemon", "daemon_request", "socket_path",
           "spawn"]

LOG = "hooks-daemon.log"
LOCK = "hooks-daemon.lock"
PID = "hooks-daemon.pid"
IDLE_S = 4 * 3600.0
MAX_REQUEST = 1 << 20


def spawn(root: Path, session: str) -> bool:
    """Register client `session` with the vault's daemon, starting `rmh hooks daemon` in the
    background (with that session) when none answers; True when one was started. Never
    waits for it to be ready."""
    if socket_path(root) is None or daemon_request(root, {"event": "start", "session": session}):
        return False
    log = own_file(held_state(root) / LOG, "ab")  # handed to the child
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
                 idle_s: float = IDLE_S, wait_s: float = CLIENT_TIMEOUT_S,
                 start_words: int = 150) -> None:
        self.vault = vault
        self.words, self.k, self.min_share = words, k, min_share
        self.wait_s, self.start_words = wait_s, start_words
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
            return {"ok": True, **self._brief(request)}
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

    def _brief(self, request: dict[str, Any]) -> dict[str, Any]:
        """{"text": the session-start brief} when the request asks for one (`cwd`, `words`)
        and the hooks' index exists; {} otherwise (the hook then builds it itself)."""
        from .hooks_index import index_path
        from .hooks_recall import brief

        cwd, words = request.get("cwd"), request.get("words")
        if (not isinstance(cwd, str) or not isinstance(words, int) or isinstance(words, bool)
                or not index_path(self.vault.root).exists()):
            return {}
        return {"text": brief(self.vault.root, cwd, max(0, words))}

    def serve(self, path: Path) -> bool:
        """Answer on `path` until done (module doc); the socket is removed at the end. False
        at once when another daemon holds the vault's daemon lock (two session starts
        racing: one daemon serves)."""
        lock = own_file(path.with_name(LOCK), "a")  # held for the daemon's life
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            lock.close()
            return False
        pid, published = path.with_name(PID), path.with_name(SETTINGS)
        try:
            from vault import replace_whole

            # whole, never through a link planted at a name (vault.replace_whole); published:
            # what a hook asking this daemon uses (hooks_fast.py)
            if not (replace_whole(pid, (f"{os.getpid()}\n".encode(),)) and replace_whole(
                    published, (json.dumps({"pid": os.getpid(), "wait_s": self.wait_s,
                                            "start_words": self.start_words,
                                            "root": root_id(self.vault.root)}).encode(),))):
                raise OSError(f"cannot write {PID} or {SETTINGS} in .rmh")
            self._serve(path)
        finally:
            for done in (published, pid):
                with contextlib.suppress(FileNotFoundError):
                    done.unlink()
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
