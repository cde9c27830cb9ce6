"""A hook the warm daemon answers, without loading the CLI: the entry path of every hook.

A hook is a new process each time, so its latency is start-up plus work. `run` is tried by
the `rmh` entry (harness/entry.py) before anything else is imported; it handles one case,
the common one: ``rmh --vault V hook prompt|session-start [--client C]`` (the command
`rmh hooks install` writes) while the vault's daemon serves (its socket and the settings it
published, VAULT/.rmh/hooks-daemon.json, exist). Then it reads the client's JSON, asks the
daemon within the daemon's `wait_s` (its `[hooks] daemon_wait_s`) and prints the answer in
the client's format. It imports harness/hooks_client.py and the standard library's `json`,
`os`, `socket` and `time` only: not the configuration (dataclasses and TOML are a third of
a bare hook's CPU), no argparse, no SQLite, no vault, no numpy. It reads no environment
variable: the vault is the `--vault` argument, the settings are the daemon's.

Everything else returns None before any output, with the input already read put back as
stdin, and the full CLI runs (harness/commands/hooks.py): another command or argument
shape, no daemon or a dead daemon's socket (refused at once: the hooks' own index), a start
the daemon answers without a brief (the hooks' index not built yet), input that is not a
JSON object (the full path says so on stderr), and a prompt the daemon does not answer in
time: that one says so on stderr and goes to the full path, which recalls from the hooks'
index without asking the daemon again (`DAEMON_LATE`), exit 0.
Input over harness/hooks_client.py's MAX_INPUT_CHARS is drained and answered here as the
full path answers it: one stderr line, the empty answer, exit 0, in bounded memory.
"""

from __future__ import annotations

import io
import json
import sys
import time
from pathlib import Path

from .hooks_client import (
    DAEMON_LATE,
    EVENT_NAMES,
    answer_text,
    daemon_answer,
    prompt_text,
    read_input,
    session_name,
    settings,
    text_field,
    too_long_line,
    unanswered_line,
)

TYPE_CHECKING = False  # `typing` and `collections.abc` are not imported at run time
if TYPE_CHECKING:
    from collections.abc import Sequence

FAST_EVENTS = ("prompt", "session-start")


def parse_argv(argv: Sequence[str]) -> tuple[str, str, str] | None:
    """(vault, event, client) of ``--vault V hook EVENT [--client C]`` (`--opt=value` too),
    or None for any other shape (the full CLI parses it)."""
    words = list(argv)
    vault = ""
    if words[:1] == ["--vault"] and len(words) >= 2:
        vault, words = words[1], words[2:]
    elif words[:1] and words[0].startswith("--vault="):
        vault, words = words[0].split("=", 1)[1], words[1:]
    if not vault or len(words) < 2 or words[0] != "hook" or words[1] not in FAST_EVENTS:
        return None
    event, rest = words[1], words[2:]
    client = "claude-code"
    if rest[:1] == ["--client"] and len(rest) == 2:
        client = rest[1]
    elif len(rest) == 1 and rest[0].startswith("--client="):
        client = rest[0].split("=", 1)[1]
    elif rest:
        return None
    return (vault, event, client) if client in EVENT_NAMES else None


def run(argv: Sequence[str]) -> int | None:
    """Answer the hook of `argv` through the daemon (exit status 0), or None (module doc)."""
    shape = parse_argv(argv)
    if shape is None:
        return None
    vault, event, client = shape
    root = Path(vault).expanduser().absolute()
    published = settings(root)
    if published is None or not (root / ".rmh" / "hooks.sock").exists():
        return None
    wait = float(published["wait_s"])
    text = read_input(sys.stdin)
    if text is None:  # over the cap (drained): the full path's answer to it, at once
        print(too_long_line(event), file=sys.stderr)
        _print(answer_text(client, event, ""))
        return 0
    sys.stdin = io.StringIO(text)  # for the full CLI, should it run
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError):  # nested past the parser's depth: a traceback was
        return None                       # exit 1; the full CLI answers it (exit 0)
    if not isinstance(doc, dict):
        return None

    def field(key: str) -> str:
        return text_field(doc, key)

    session = session_name(client, field("session_id"))
    t0 = time.monotonic()
    if event == "prompt":
        got, why = daemon_answer(root, {"event": "prompt", "prompt": prompt_text(
            field("prompt")), "session": session, "own": field("session_id")}, wait, published)
    else:
        got, why = daemon_answer(root, {"event": "start", "session": session, "cwd":
                                        field("cwd"), "words": published["start_words"]}, wait,
                                  published)
    if got is not None and isinstance(got.get("text"), str):
        _print(answer_text(client, event, got["text"]))
        return 0
    if event == "prompt" and (why == "too large" or time.monotonic() - t0 >= wait):
        print(unanswered_line(why if why == "too large" else "late", wait), file=sys.stderr)
        DAEMON_LATE["prompt"] = True  # the full path recalls from the hooks' index at once
    return None  # no daemon (refused at once), too slow or too large, a start without a brief


def _print(out: str) -> None:
    if out:
        print(out)
