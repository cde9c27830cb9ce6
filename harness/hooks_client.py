"""What a hook needs to be answered by the daemon, in the standard library alone: where the
daemon's socket is, the settings it publishes, one request with a hard wait, and the
clients' wire format (their event names, the answer's shape, the learning session's name).

A hook answered by the daemon (harness/hooks_fast.py) imports only this module, `json`,
`os`, `socket` and `time`: no dataclasses, no TOML, no argparse, no `subprocess`, no SQLite,
no vault. harness/hooks.py builds its client table on the one here; the line protocol is
the daemon's (harness/hooks_daemon.py).
"""

from __future__ import annotations

import json
import os
import socket
import stat
import time
from pathlib import Path
from typing import IO, Any

TYPE_CHECKING = False  # `typing` is not imported at run time (a hook's start-up)
if TYPE_CHECKING:
    from typing import Any

SOCKET = "hooks.sock"
SETTINGS = "hooks-daemon.json"  # what the daemon publishes for the hooks (`settings`)
CLIENT_TIMEOUT_S = 0.2  # the prompt hook's wait for the daemon, connect to answer
MAX_WAIT_S = 60.0  # the most any hook waits for the daemon: [hooks] daemon_wait_s's bound
MAX_SETTINGS_BYTES = 65_536
MAX_SUN_PATH = 100  # AF_UNIX paths are at most 107 bytes on Linux
# The most characters of a client's hook input read (`read_input`): a prompt is at most a
# model's context (under 1 MB); 8 Mi characters hold ~32 MiB at most as text.
MAX_INPUT_CHARS = 8 << 20
DRAIN_CHUNK = 1 << 16
# The most bytes of the daemon's answer read (`daemon_answer`): a prompt's memory is at most
# [hooks] prompt_words (<= 100,000 words, config_schema.MAX_WORDS), well under 16 MiB as JSON.
MAX_ANSWER_BYTES = 16 << 20
ANSWER_CHUNK = 1 << 16


# rmh event -> each client's event name (harness/hooks.py's table, module docstring there)
EVENT_NAMES: dict[str, dict[str, str]] = {
    "claude-code": {"session-start": "SessionStart", "prompt": "UserPromptSubmit",
                    "session-end": "SessionEnd", "pre-compact": "PreCompact"},
    "codex": {"session-start": "SessionStart", "prompt": "UserPromptSubmit",
              "session-end": "Stop", "pre-compact": "PreCompact"},
    "gemini": {"session-start": "SessionStart", "prompt": "BeforeAgent",
               "session-end": "SessionEnd", "pre-compact": "PreCompress"},
}
JSON_ALWAYS = frozenset({"gemini"})  # stdout must be JSON even with nothing to say
# Set by harness/hooks_fast.py when this process's prompt hook already waited for the daemon
# in vain: the full CLI's path, which runs next in the same process, then recalls from the
# hooks' index at once instead of waiting for the daemon a second time.
DAEMON_LATE = {"prompt": False}


def late_line(wait_s: float) -> str:
    """The stderr line of a prompt the daemon did not answer within `wait_s`: the hooks'
    index answers it instead (a loaded machine, a daemon busy with another prompt)."""
    return (f"rmh hook prompt: the hooks daemon did not answer in time ({wait_s:g} s, "
            "[hooks] daemon_wait_s); recalled from the hooks' index instead")


def answer_text(client: str, event: str, text: str) -> str:
    """What to print on stdout: `text` as the client's additional context, or the empty
    answer when `text` is empty or the event injects nothing."""
    if text and event in ("session-start", "prompt"):
        doc = {"hookSpecificOutput": {"hookEventName": EVENT_NAMES[client][event],
                                      "additionalContext": text}}
        return json.dumps(doc, ensure_ascii=False)
    return "{}" if client in JSON_ALWAYS else ""


def text_field(doc: dict[str, Any], key: str) -> str:
    """`doc[key]` when it is a string ("" else), each lone surrogate made U+FFFD: JSON's
    "\\ud800" (a string cut mid-emoji) or a byte stdin could not decode is valid input, but
    UTF-8 cannot write it (the journal, the ledger), which failed a hook that found memory."""
    value = doc.get(key)
    if not isinstance(value, str):
        return ""
    return value.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


PROMPT_CHARS = 1 << 15  # a prompt's head and tail that recall reads (`prompt_text`)


def prompt_text(prompt: str) -> str:
    """What the prompt hook recalls for: the prompt, or of one longer than 2 * PROMPT_CHARS
    (a pasted log, a file) its first and last PROMPT_CHARS characters, where the ask is.
    Recall's cost grows with the prompt (about 3 s of CPU per MiB of distinct words), so an
    8 Mi-character prompt outlasted the client's 10 s timeout: nothing came back."""
    if len(prompt) <= 2 * PROMPT_CHARS:
        return prompt
    return prompt[:PROMPT_CHARS] + "\n…\n" + prompt[-PROMPT_CHARS:]


def session_name(client: str, session_id: str) -> str:
    """The learning session a client session's hooks log under ("hook-<client>-<id>")."""
    return f"hook-{client}-{session_id or 'unknown'}"


def root_id(root: Path) -> list[int] | None:
    """The vault folder's identity, [device, inode], or None when it cannot be read: what ties
    the hooks' files in `.rmh` (the daemon's settings, the hooks' index) to the vault they
    were made for. Another vault's whole `.rmh` moved in carries that vault's identity, so its
    daemon is not asked and its index not read for this vault's prompts (STORE17, session
    42: they were, README's old Known limits); a vault copied elsewhere has a new one, and
    its hooks' index is made again by the next refresh."""
    try:
        info = os.stat(root)
    except OSError:
        return None
    return [info.st_dev, info.st_ino]


def state_fd(root: Path) -> int | None:
    """A descriptor of the folder VAULT/.rmh, or None where `.rmh` is no folder or a symlink
    (O_NOFOLLOW): the daemon's settings and socket are found through it, never through a link
    put in `.rmh`'s place, which named another vault's daemon (its notes were injected as this
    vault's memory, HOUSE40); the full path then refuses such a `.rmh` (PathRefused) and says
    so on stderr. The caller closes it."""
    try:
        return os.open(root / ".rmh", os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None


def settings(root: Path) -> dict[str, Any] | None:
    """The settings the running daemon published (VAULT/.rmh/hooks-daemon.json: its pid,
    `wait_s` = its `[hooks] daemon_wait_s`, `start_words`, its vault's `root_id`), or None (no
    daemon, unreadable, or not what a daemon writes). The hook must never hold its client: a
    FIFO in the file's place is not read (opened plainly, it waits for a writer forever), and
    a wait that is not a number from 0 to MAX_WAIT_S (NaN, 1e308: past what a socket timeout
    takes) is refused."""
    state = state_fd(root)
    if state is None:
        return None
    try:
        fd = os.open(SETTINGS, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOFOLLOW,
                     dir_fd=state)
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_SETTINGS_BYTES:
                return None
            doc = json.loads(os.read(fd, MAX_SETTINGS_BYTES))
        finally:
            os.close(fd)
    except (OSError, ValueError, RecursionError):
        return None
    finally:
        os.close(state)
    if not isinstance(doc, dict):
        return None
    wait = doc.get("wait_s")
    ok = (isinstance(wait, (int, float)) and not isinstance(wait, bool)
          and 0 <= wait <= MAX_WAIT_S and isinstance(doc.get("start_words"), int))
    return doc if ok else None


def socket_path(root: Path) -> Path | None:
    """VAULT/.rmh/hooks.sock, or None when the path is too long for a Unix socket."""
    path = root / ".rmh" / SOCKET
    return path if len(os.fsencode(str(path))) <= MAX_SUN_PATH else None


def daemon_request(root: Path, request: dict[str, Any],
                   timeout: float = CLIENT_TIMEOUT_S) -> dict[str, Any] | None:
    """The daemon's answer to `request`, or None (no daemon, too slow, a bad or oversized
    answer): `daemon_answer` without the reason."""
    return daemon_answer(root, request, timeout)[0]


def daemon_answer(root: Path, request: dict[str, Any], timeout: float = CLIENT_TIMEOUT_S,
                  published: dict[str, Any] | None = None) -> tuple[dict[str, Any] | None, str]:
    """(the daemon's answer to `request`, "") or (None, why: "none", "late", "too large" or
    "bad"). Never raises, never waits past `timeout` seconds in all, and never holds more than
    MAX_ANSWER_BYTES of the answer: a broken or hostile daemon that sends without end (or
    never ends its line) costs the hook that much memory and that much time at most, then the
    hook goes on as with a late daemon (HOUSE41: the reply was read into memory unbounded).
    A daemon that published another vault's identity (`root_id`: its `.rmh` moved in whole)
    is not asked: "none" (settings without one, as an older daemon's, are asked as before).
    `published`: the settings the caller has read already (`settings`), not read again."""
    published = settings(root) if published is None else published
    if published is not None and "root" in published and published["root"] != root_id(root):
        return None, "none"
    path, state = socket_path(root), state_fd(root)
    if state is None:
        return None, "none"
    deadline = time.monotonic() + timeout
    try:
        held = f"/proc/self/fd/{state}/{SOCKET}"  # the folder checked, whatever `.rmh` is now
        if not os.path.isdir("/proc/self/fd") and path is not None:
            held = str(path)  # no /proc: the plain path, the symlink checked just before
        if path is None or not os.path.exists(held):
            return None, "none"
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(timeout)
            s.connect(held)
            s.sendall(json.dumps(request).encode() + b"\n")
            data = bytearray()
            while b"\n" not in data:
                left = deadline - time.monotonic()
                if left <= 0:
                    return None, "late"
                s.settimeout(left)
                chunk = s.recv(min(ANSWER_CHUNK, MAX_ANSWER_BYTES + 1 - len(data)))
                if not chunk:
                    return None, "bad"
                data += chunk
                if len(data) > MAX_ANSWER_BYTES and b"\n" not in data:
                    return None, "too large"
        doc = json.loads(data[:data.index(b"\n")])
    except TimeoutError:
        return None, "late"
    except (OSError, ValueError, RecursionError):  # an answer nested past the parser too
        return None, "bad"
    finally:
        os.close(state)
    return (doc, "") if isinstance(doc, dict) else (None, "bad")


def unanswered_line(why: str, wait_s: float) -> str:
    """The stderr line of a prompt the daemon did not answer usably (`daemon_answer`'s
    reason): late, or an answer over MAX_ANSWER_BYTES; "" for no daemon or a bad answer."""
    if why == "too large":
        return (f"rmh hook prompt: the hooks daemon's answer was over {MAX_ANSWER_BYTES} "
                "bytes; recalled from the hooks' index instead")
    return late_line(wait_s) if why == "late" else ""


def read_input(stream: IO[str], limit: int = MAX_INPUT_CHARS) -> str | None:
    """The client's whole hook input from `stream`, or None when it is longer than `limit`
    characters: then the rest is read and dropped in DRAIN_CHUNK pieces to its end (a client
    still writing would get EPIPE), so memory stays O(limit) whatever the client sends."""
    text = stream.read(limit + 1)
    if len(text) <= limit:
        return text
    raw = getattr(stream, "buffer", None)  # the bytes: undecodable ones are dropped too
    drain = raw.read if raw is not None else stream.read
    while drain(DRAIN_CHUNK):
        pass
    return None


def too_long_line(event: str) -> str:
    """The stderr line of a hook whose input `read_input` refused."""
    return (f"rmh hook {event}: the hook input is longer than {MAX_INPUT_CHARS} characters; "
            "nothing was read of it")


def own_file(path: Path, mode: str) -> IO[Any]:
    """`path`, a file of `.rmh/` (the daemon's log and lock, the hooks' journals), opened to
    append (`mode` "a" or "ab"), never through a symlink: one planted there is removed first
    (appending wrote into the file it named, outside the vault too), and O_NOFOLLOW refuses
    one put back in between."""
    if path.is_symlink():
        path.unlink()
    flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC | os.O_NOFOLLOW
    return os.fdopen(os.open(path, flags, 0o666), mode)
