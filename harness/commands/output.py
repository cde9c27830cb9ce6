"""Output helpers shared by every command: one JSON document or human text; clean failures
(including a bad date argument)."""

from __future__ import annotations

import argparse
import json
from datetime import date
from typing import Any, NoReturn


class CommandFailed(Exception):
    """An operational error: printed as one line on stderr, exit code 1."""


def emit(args: argparse.Namespace, doc: Any, human: str) -> None:
    """Print `doc` as one JSON document under --json, else the human text."""
    if getattr(args, "json", False):
        print(json.dumps(doc, ensure_ascii=False, sort_keys=True))
    elif human:
        print(human)


def fail(message: str) -> NoReturn:
    raise CommandFailed(message)


def iso_date(text: str | None) -> date | None:
    """A YYYY-MM-DD argument (None stays None); anything else fails the command."""
    if text is None:
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        fail(f"not an ISO date: {text!r}")
