"""Every line `rmh` prints to a terminal is text, never terminal control, wherever its words
come from: a vault folder's name (`rmh status`), a file name given to `rmh ingest` (its stderr
lines), not only a note's text and a cell's output (test_cli_exec_terminal.py). Before FIX36
`status` printed the vault's path raw and `ingest` a file's name raw on stderr, so a folder
named with ESC sequences set the terminal's title, cleared the screen or hid a line (CR);
the bidirectional overrides reached the terminal in error lines and in --json. The guard is the
`rmh` process's terminal streams (harness/terminal.py): on a pipe the bytes stay as they are."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vault import Vault

from .test_cli_exec_terminal import BIDI, CONTROLS, _rmh

# generated: every control a file name can hold (NUL cannot), each in the name
NAME = "v" + "".join(c for c in CONTROLS + BIDI if c != "\x00") + "end"
LEAKS = set(CONTROLS + BIDI) - {"\r"}  # a CR counts when it ends no line: checked apart


def _reached(text: str) -> list[str]:
    raw = sorted({f"{ord(c):#06x}" for c in text if c in LEAKS})
    lone_cr = text.replace("\r\n", "").count("\r")
    return raw + (["lone CR"] if lone_cr else [])


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("t") / NAME
    root.mkdir()
    (root / "a.md").write_text("# a\n\nbilling words\n", encoding="utf-8")
    Vault.init(root).close()
    return root


def test_status_shows_a_folder_name_as_text_on_a_terminal_and_as_it_is_on_a_pipe(
        vault: Path) -> None:
    text = _rmh(vault, ["status", "--no-dense"], terminal=True).decode("utf-8", "replace")
    assert _reached(text) == [], ascii(text)
    assert "v\\x01\\x02" in text and "\\u202e\\u2066" in text, ascii(text)
    piped = _rmh(vault, ["status", "--no-dense"], terminal=False).decode("utf-8")
    assert str(vault) in piped  # data: the name's bytes


def test_json_on_a_terminal_is_the_same_document(vault: Path) -> None:
    on_tty = _rmh(vault, ["status", "--json", "--no-dense"], terminal=True).decode("utf-8")
    assert _reached(on_tty) == [], ascii(on_tty)
    piped = _rmh(vault, ["status", "--json", "--no-dense"], terminal=False).decode("utf-8")
    assert json.loads(on_tty) == json.loads(piped)
    assert json.loads(on_tty)["vault"] == str(vault)


def test_an_ingest_file_name_on_stderr_is_text(vault: Path) -> None:
    bad = vault.parent / f"conv{NAME}.json"
    bad.write_bytes(b"\xff not a conversation")  # read with U+FFFD: a stderr line names it
    text = _rmh(vault, ["ingest", str(bad)], terminal=True).decode("utf-8", "replace")
    assert "not valid UTF-8" in text and "convv\\x01" in text, ascii(text)
    assert _reached(text) == [], ascii(text)
