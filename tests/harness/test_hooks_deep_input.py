"""Hook input nested past the JSON parser's depth is a HookInputError like any other input
that is no hook's (PLUG5, session 31): it was a bare RecursionError, and the hook's one line
on stderr read "RecursionError: maximum recursion depth exceeded while decoding a JSON array
from a unicode string"."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from harness.hooks import HookInput, HookInputError
from tests.harness.test_hooks_session import rmh, two_notes

DEPTH = sys.getrecursionlimit() * 2
DEEP = {"array": "[" * DEPTH + "]" * DEPTH,
        "object": '{"a":' * DEPTH + "1" + "}" * DEPTH,
        "in a field": '{"session_id": "s", "prompt": ' + "[" * DEPTH + "]" * DEPTH + "}",
        "unclosed": "[" * 100_000}


@pytest.mark.parametrize("name", sorted(DEEP))
def test_input_nested_past_the_parser_is_a_hook_input_error(name: str) -> None:
    with pytest.raises(HookInputError, match="nested past the parser's depth"):
        HookInput.parse(DEEP[name])


def test_the_hook_says_so_in_its_one_line(tmp_path: Path) -> None:
    root = two_notes(tmp_path / "vault")
    (root / "rmh.toml").write_text("[hooks]\ndaemon = false\n", "utf-8")
    assert rmh(root, "init", "--no-dense").returncode == 0
    for event in ("prompt", "session-end"):
        out = rmh(root, "hook", event, "--client", "claude-code", stdin=DEEP["array"])
        assert out.returncode == 0 and out.stdout == "", out
        assert out.stderr.splitlines() == [
            f"rmh hook {event}: HookInputError: hook input is not JSON a hook sends (nested "
            "past the parser's depth)"], out.stderr
    ok = rmh(root, "hook", "prompt", "--client", "claude-code",
             stdin=json.dumps({"session_id": "s", "prompt": "nightly job"}))
    assert ok.returncode == 0 and "Traceback" not in ok.stderr
