"""Output helpers shared by every command: one JSON document or human text; clean failures
(including a bad date argument)."""

from __future__ import annotations

import argparse
import json
import re
import sys
from datetime import date
from typing import Any, NoReturn, TextIO

from vault import counted as counted  # the one plural rule (vault/plural.py)

from ..terminal import escaped

_JSON_RAW_CONTROL = re.compile(r"[\x7f-\x9f]")  # only ever inside a JSON string


class CommandFailed(Exception):
    """An operational error: printed as one line on stderr, exit code 1."""

    code_name = "command_failed"


def json_line(doc: Any) -> str:
    """`doc` as one line of JSON: UTF-8 as it is, or escaped to ASCII when a string in it is
    not text (a lone surrogate: a file name's bytes that were not UTF-8), which no stdout
    could print, or when stdout's encoding cannot hold it (`PYTHONIOENCODING=ascii`: its
    backslash escapes would not be JSON)."""
    text = json.dumps(doc, ensure_ascii=False, sort_keys=True)
    try:
        text.encode("utf-8")
        text.encode(getattr(sys.stdout, "encoding", None) or "utf-8")
    except (UnicodeEncodeError, LookupError):
        return json.dumps(doc, ensure_ascii=True, sort_keys=True)
    # DEL and the C1 controls as \u escapes too (json.dumps escapes only C0): the same JSON,
    # and U+009B (CSI to some terminals) from a cell's output never reaches a terminal raw
    return _JSON_RAW_CONTROL.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def for_terminal(text: str, stream: TextIO) -> str:
    """`text` as it may go to `stream`: on a terminal every control character but newline and
    tab backslash-escaped (ESC as `\\x1b`, a carriage return as `\\r` but before a newline:
    a CRLF note's lines are lines), and so are the bidirectional overrides, embeddings and
    isolates (U+202E as `\\u202e`: they reorder what follows on the line); elsewhere (a
    pipe, a file) unchanged. Human output carries text that untrusted code wrote (a cell's
    output, value and exception; a note a cell wrote, shown by `rmh read` or a snippet):
    sent raw it set the terminal's title and clipboard (OSC 0, OSC 52), cleared the screen,
    hid a line under another (CR), and made the terminal answer queries (DECRQSS, CSI 21t)
    into the input of the shell that ran rmh (SBX5_terminal.py.txt)."""
    isatty = getattr(stream, "isatty", None)
    if isatty is None or not isatty():
        return text
    return escaped(text)  # (the `rmh` process's own terminal streams escape it again: a no-op)


def emit(args: argparse.Namespace, doc: Any, human: str) -> None:
    """Print `doc` as one JSON document under --json, else the human text (`for_terminal`)."""
    if getattr(args, "json", False):
        print(json_line(doc))
    elif human:
        print(for_terminal(human.encode("utf-8", "backslashreplace").decode("utf-8"),
                           sys.stdout))


def fail(message: str) -> NoReturn:
    raise CommandFailed(message)


def iso_date(text: str) -> date:
    """argparse `type` of a YYYY-MM-DD argument; anything else is a usage error (exit 2), as
    `context --from` is: `lifecycle --today 2024-02-30` was exit 1, `command_failed`."""
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an ISO date (YYYY-MM-DD): {text!r}") from None
