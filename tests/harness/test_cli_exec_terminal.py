"""A cell's output reaches the terminal of the person running `rmh exec` as text, never as
terminal control: its output, value and exception were written raw, so a cell set the
terminal's title and clipboard (OSC 0, OSC 52), cleared the screen, hid a line under another
(CR) and made the terminal answer queries into the shell's input (SBX5_terminal.py.txt).
A note a cell wrote reaches it the same way later, through `rmh read` and a search's
snippet. On a pipe the bytes stay exactly what the cell wrote (scripts read them)."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tty
from pathlib import Path

import pytest

from sandbox import probe
from vault import Vault

REPO = Path(__file__).resolve().parents[2]
# every control character but newline and tab: C0, DEL, C1 (generated, each in every place)
CONTROLS = [chr(c) for c in [*range(0x00, 0x20), *range(0x7F, 0xA0)] if chr(c) not in "\n\t"]
# where a cell can put text: stdout, stderr, its value's repr, its exception's message
_CELL = """
import sys
chars = {chars!r}
print("out" + chars + "end")
print("err" + chars + "end", file=sys.stderr)
class V:
    def __repr__(self):
        return "val" + chars + "end"
v = V()
{last}
"""
# the bidirectional embeddings, overrides and isolates: they reorder how a line is shown
BIDI = [chr(c) for c in [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]]
PLACES = {"value": "v", "exception": "raise ValueError('exc' + chars + 'end')"}


def _run(vault: Path, code: str, *, terminal: bool) -> bytes:
    return _rmh(vault, ["exec", "--no-dense", "-c", code], terminal=terminal)


def _rmh(vault: Path, command: list[str], *, terminal: bool) -> bytes:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RMH_")}
    env["PYTHONPATH"] = str(REPO)
    argv = [sys.executable, "-m", "harness", "--vault", str(vault), *command]
    if not terminal:
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, env=env,
                              cwd=REPO, timeout=120, check=False)
        return done.stdout + done.stderr
    master, slave = os.openpty()
    tty.setraw(slave)  # no newline translation: the bytes as rmh wrote them
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave,
                            env=env, cwd=REPO)
    os.close(slave)
    data = b""
    try:
        while chunk := _read(master):
            data += chunk
    finally:
        os.close(master)
        proc.wait(timeout=120)
    return data


def _read(fd: int) -> bytes:
    try:
        return os.read(fd, 65536)
    except OSError:  # EIO: the terminal's other side closed
        return b""


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not probe().available:
        pytest.skip("no sandbox tier works here")
    root = tmp_path_factory.mktemp("v")
    (root / "a.md").write_text("# a\n", encoding="utf-8")
    Vault.init(root).close()
    return root


@pytest.mark.parametrize("place", sorted(PLACES))
def test_no_control_character_reaches_the_terminal(vault: Path, place: str) -> None:
    code = _CELL.format(chars="".join(CONTROLS + BIDI), last=PLACES[place])
    text = _run(vault, code, terminal=True).decode("utf-8", "replace")
    for tag in ("out", "err", "val" if place == "value" else "exc"):
        assert f"{tag}\\x00" in text, text[-2000:]  # shown, escaped
        assert "\\u202e" in text, text[-2000:]
    reached = sorted({f"{ord(c):#04x}" for c in text if c in CONTROLS + BIDI})
    assert reached == [], text[-2000:]


def test_json_on_a_terminal_holds_no_raw_control(vault: Path) -> None:
    """--json escapes C0 (json.dumps) and now DEL and C1 too; the document is the same."""
    chars = "".join(CONTROLS)
    data = _rmh(vault, ["exec", "--no-dense", "--json", "-c", f"print('out' + {chars!r})"],
                terminal=True)
    text = data.decode("utf-8")
    assert sorted({f"{ord(c):#04x}" for c in text if c in CONTROLS}) == [], ascii(text)
    assert json.loads(text.strip().splitlines()[-1])["stdout"] == f"out{chars}\n"


def test_a_pipe_gets_the_cells_bytes(vault: Path) -> None:
    chars = "".join(CONTROLS)
    data = _run(vault, _CELL.format(chars=chars, last="v"), terminal=False)
    text = data.decode("utf-8")
    for tag in ("out", "err", "val"):
        assert f"{tag}{chars}end" in text, ascii(text[-2000:])


# the commands that show a note's text, its tags or a snippet of it (human output)
SHOWING = [["read", "written-by-a-cell"], ["search", "--no-dense", "zebraquartz"],
           ["list", "tags"], ["context", "zebraquartz"], ["ask", "--no-dense", "zebraquartz"],
           ["list", "notes"], ["links", "written-by-a-cell"], ["why", "written-by-a-cell"]]
# in a tag: what a YAML list item holds on one line
TAG_CONTROLS = "\x1b]0;t\x07\x1b[2J\x9b31m"


@pytest.fixture(scope="module")
def note_by_a_cell(vault: Path) -> Path:
    body = "".join(c for c in CONTROLS if c != "\x00")  # a NUL makes a note binary: refused
    text = (f"---\ntags: [tagz{TAG_CONTROLS}]\n---\n# t\n\nzebraquartz {body} end "
            f"#hash{TAG_CONTROLS}\n")
    written = _run(vault, f"write('written-by-a-cell', {text!r}, overwrite=True)",
                   terminal=False)
    assert b"written-by-a-cell" in written and b"Error" not in written, written[-2000:]
    return vault


@pytest.mark.parametrize("command", SHOWING, ids=["-".join(c[:2]) for c in SHOWING])
def test_a_note_a_cell_wrote_reaches_the_terminal_as_text(note_by_a_cell: Path,
                                                          command: list[str]) -> None:
    data = _rmh(note_by_a_cell, command, terminal=True)
    text = data.decode("utf-8", "replace")
    reached = sorted({f"{ord(c):#04x}" for c in text if c in CONTROLS})
    assert reached == [], text[-2000:]


@pytest.mark.parametrize("seed", range(2))
def test_a_note_with_crlf_line_ends_shows_its_lines_on_a_terminal(tmp_path: Path,
                                                                  seed: int) -> None:
    """A note saved with CRLF line ends (on Windows) is shown by `rmh read` on a terminal as
    its lines: a CR before a newline moves nothing over text, so it is not escaped (it was:
    every line ended in a visible `\\r`); a CR inside a line still is."""
    rng = random.Random(seed)
    lines = [" ".join(rng.choice(["alpha", "beta", "[[b]]", "#tag", "é", "x"])
                      for _ in range(rng.randrange(1, 6))) for _ in range(rng.randrange(2, 8))]
    hidden = rng.randrange(len(lines))
    lines[hidden] += "\rcovered"
    (tmp_path / "a.md").write_bytes(("---\ntitle: A\n---\n" + "\n".join(lines) + "\n")
                                    .replace("\n", "\r\n").encode("utf-8"))
    Vault.init(tmp_path).close()
    text = _rmh(tmp_path, ["read", "a.md"], terminal=True).decode("utf-8")
    for line in lines:
        assert line.replace("\r", "\\r") + "\r\n" in text, ascii(text)
    assert text.count("\\r") == 1 and text.count("\r") == len(lines) + 3, ascii(text)
