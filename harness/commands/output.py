"""Output helpers shared by every command: one JSON document or human text; clean failures
(including a bad date argument)."""

from __future__ import annotations

import argparse
import json
import sys
from datetime import date
from typing import Any, NoReturn


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
    return text


def emit(args: argparse.Namespace, doc: Any, human: str) -> None:
    """Print `doc` as one JSON document under --json, else the human text."""
    if getattr(args, "json", False):
        print(json_line(doc))
    elif human:
        print(human.encode("utf-8", "backslashreplace").decode("utf-8"))


def fail(message: str) -> NoReturn:
    raise CommandFailed(message)


def iso_date(text: str) -> date:
    """argparse `type` of a YYYY-MM-DD argument; anything else is a usage error (exit 2), as
    `context --from` is: `lifecycle --today 2024-02-30` was exit 1, `command_failed`."""
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an ISO date (YYYY-MM-DD): {text!r}") from None
