"""harness/terminal.py: the guard on the `rmh` process's terminal streams (the commands that
print through it: test_cli_terminal_names.py, test_cli_exec_terminal.py)."""

from __future__ import annotations

import io

from harness.terminal import Guarded, escaped

from .test_cli_exec_terminal import BIDI, CONTROLS


def _reached(text: str) -> list[str]:
    return sorted({f"{ord(c):#06x}" for c in text if c in CONTROLS + BIDI})


def _guarded() -> tuple[Guarded, io.BytesIO]:
    raw = io.BytesIO()
    return Guarded(raw, encoding="utf-8", write_through=True), raw


def test_the_guard_keeps_a_crlf_that_print_splits_and_escapes_a_lone_cr() -> None:
    out, raw = _guarded()
    print("line one\r\nline two\r", file=out)  # `print` writes the text, then its newline
    print("over\rwritten", file=out)
    out.write("ends in CR\r")
    out.flush()
    assert raw.getvalue().decode() == ("line one\r\nline two\r\nover\\rwritten\n"
                                       "ends in CR\\r")


def test_escaped_is_every_control_once_and_idempotent() -> None:
    text = "".join(CONTROLS + BIDI)
    once = escaped(text)
    assert escaped(once) == once and not _reached(once.replace("\n", "").replace("\t", ""))
    assert once.count("\\") == len(CONTROLS + BIDI)  # each one escaped (newline and tab are none)
