"""Progress you can see: from the first report, a line (or a bar refresh) at least every
interval while the count does not move; plain lines off a terminal, never stdout."""

from __future__ import annotations

import io
import threading

from harness.commands.progress import Progress


class Stream(io.StringIO):
    """A text stream whose writes another thread can wait for."""

    def __init__(self, tty: bool = False) -> None:
        super().__init__()
        self.tty = tty
        self.changed = threading.Condition()

    def isatty(self) -> bool:
        return self.tty

    def write(self, text: str) -> int:
        with self.changed:
            n = super().write(text)
            self.changed.notify_all()
            return n

    def wait_for(self, lines: int) -> list[str]:
        with self.changed:
            assert self.changed.wait_for(lambda: self.getvalue().count("\n") >= lines, 60)
            return self.getvalue().splitlines()


def test_a_plain_line_every_interval_while_the_count_stands_still() -> None:
    stream = Stream()
    progress = Progress(stream, interval=0.01)
    progress(0, 1000, "embedding")  # the embedder announces its work before the first slice
    lines = stream.wait_for(4)  # the start line, then beats while no slice has finished
    assert lines[0] == "embedding: 1000 chunks ..."
    assert all(line.startswith("embedding: 0/1000 chunks (0%), ") for line in lines[1:4])
    progress(512, 1000, "embedding")
    while not stream.getvalue().splitlines()[-1].startswith("embedding: 512/1000"):
        stream.wait_for(stream.getvalue().count("\n") + 1)
    progress(1000, 1000, "embedding")
    final = stream.getvalue().splitlines()
    assert final[-1] == "embedding: 1000/1000 chunks done"
    settled = stream.getvalue()
    assert not any(t.name == "rmh-progress" and t.is_alive() for t in threading.enumerate())
    assert stream.getvalue() == settled  # the beat stopped with the work
    assert "\r" not in settled


def test_on_a_terminal_the_bar_is_drawn_from_the_first_report() -> None:
    stream = Stream(tty=True)
    progress = Progress(stream, interval=0.01)
    progress(0, 10, "embedding")
    with stream.changed:
        assert stream.changed.wait_for(lambda: "0/10" in stream.getvalue(), 60)
    progress(10, 10, "embedding")
    assert "10/10" in stream.getvalue()
    assert not any(t.name == "rmh-progress" and t.is_alive() for t in threading.enumerate())


BAR_ON_A_TERMINAL = """
from harness.stdio import install
install()  # as `rmh` starts: a terminal's stderr escapes control characters (terminal.py)
from harness.commands.progress import Progress
progress = Progress(interval=100)
for done in range(4):
    progress(done, 3, "embedding")
"""


def test_the_bar_redraws_in_place_on_the_guarded_terminal_stream() -> None:
    """Run as `rmh` runs, on a real pseudo-terminal: the bar's carriage returns reach the
    terminal as such (REV36: harness/stdio.py's guard escaped them, so each frame was printed
    after the last on one line, `\\rembedding:   0%|...\\rembedding:  33%|...`)."""
    import fcntl
    import os
    import pty
    import struct
    import subprocess
    import sys
    import termios
    from pathlib import Path

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    child = subprocess.Popen([sys.executable, "-c", BAR_ON_A_TERMINAL], stdin=slave,
                             stdout=slave, stderr=slave, cwd=Path(__file__).parents[2])
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    assert child.wait(60) == 0, out
    assert b"3/3" in out, out
    assert out.count(b"\r") - out.count(b"\r\n") >= 3, out  # one per frame
    assert b"\\r" not in out, out
