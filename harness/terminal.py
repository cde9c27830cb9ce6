"""Text bound for a terminal, made unable to drive it (harness/stdio.py installs it on the
`rmh` process's stdout and stderr when they are terminals).

A note's text, its title, a file name, a link target or a cell's output may hold control
characters; written raw to a terminal, ESC and CSI sequences clear the screen, move the
cursor, set the window title and the clipboard (OSC 0, OSC 52) and make the terminal answer
queries into the input of the shell that ran rmh (DECRQSS, CSI 21t; SBX5_terminal.py.txt); a
lone carriage return hides a line under the next; the bidirectional overrides reorder what
follows on the line ("Trojan Source", Boucher & Anderson 2021). `ls` prints such names with `?`
(its `-q`, the default on a terminal) and `less` shows them as `^[` for the same reason.

On a terminal every such character is backslash-escaped as Python writes it (ESC as `\\x1b`,
U+009B as `\\x9b`, U+202E as `\\u202e`, a carriage return as `\\r` but before a newline: a CRLF
note's lines stay lines). Elsewhere (a pipe, a file) output is left as it is: it is data
(`rmh read X > X.md` keeps the note's bytes), and what reads it is no terminal. `--json`
output on a terminal stays one JSON document: JSON escapes every C0 control, `json_line`
every C1 one, and a bidirectional control, the only kind left raw in it, becomes `\\u202e`, the
same string in JSON. rmh's own drawing (the embedding progress bar's carriage returns, which
redraw it in place: harness/commands/progress.py) goes through `Trusted`, unescaped."""

from __future__ import annotations

import io
import re
from typing import Any

# C0 controls but newline and tab, DEL, the C1 controls, the bidirectional embeddings,
# overrides and isolates (U+202A-202E, U+2066-2069), and a CR that does not end a line
CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]|\r(?!\n)")


def escaped(text: str) -> str:
    """`text` with every control character of `CONTROL` backslash-escaped (module docstring)."""
    return CONTROL.sub(lambda m: repr(m.group())[1:-1], text)


class Guarded(io.TextIOWrapper):
    """A text stream to a terminal whose writes are `escaped`. A write that ends in a carriage
    return keeps it until the next write: `print` writes its text and its newline apart, so
    a CRLF line's CR is known to end a line only then."""

    _held = ""

    def write(self, text: Any) -> int:
        size = len(text)
        text, held = self._held + str(text), ""
        self._held = ""
        if text.endswith("\r"):
            text, held = text[:-1], "\r"
        super().write(escaped(text))  # (its line buffering may call `flush`: nothing held)
        self._held = held
        return size

    def flush(self) -> None:
        if self._held:  # a CR that ended the output: it ends no line
            self._held = ""
            super().write("\\r")
        super().flush()


class Trusted:
    """`stream` for what rmh itself draws on a terminal (a progress bar: `\\r` redraws it),
    written as is where `stream` is `Guarded` (REV36, session 36: escaped, each frame of the
    bar was printed after the last on one line); everything else is the stream's own."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        if isinstance(self.stream, Guarded):
            self.stream.flush()  # a CR it holds is escaped first, in its place
            return io.TextIOWrapper.write(self.stream, text)
        return int(self.stream.write(text))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)
