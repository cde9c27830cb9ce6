"""README's JSON-RPC error list names every application code rmh can answer, with its number,
and the CLI's `kind` list names every kind only the CLI gives (a new kind or code must be
documented where a client author looks for it)."""

from __future__ import annotations

import re
from pathlib import Path

from harness.commands.forget import ErasureIncomplete
from harness.commands.operation_commands import ArgumentRefused
from harness.commands.output import CommandFailed
from harness.config import ConfigError
from harness.ray_jobs import RayFailed
from harness.stdio import StreamError
from rpc.errors import APPLICATION_CODES, APPLICATION_FALLBACK

README = Path(__file__).resolve().parents[2] / "README.md"
# In rpc/errors.py's table since the first commit, raised by no code of rmh.
NEVER_RAISED = {"exec_busy"}


def readme() -> str:
    return re.sub(r"\s+", " ", README.read_text(encoding="utf-8"))


def test_every_application_code_is_listed_with_its_number() -> None:
    text = readme()
    missing = [f"{code} {kind}" for kind, (code, _) in APPLICATION_CODES.items()
               if kind not in NEVER_RAISED and f"{code} {kind}" not in text]
    assert missing == []
    assert str(APPLICATION_FALLBACK[0]) in text


def test_every_cli_only_kind_is_listed() -> None:
    text = readme()
    kinds = [cls.code_name for cls in (ConfigError, CommandFailed, ArgumentRefused,
                                       ErasureIncomplete, RayFailed, StreamError)]
    assert [kind for kind in kinds if f"`{kind}`" not in text] == []
