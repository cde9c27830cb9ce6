"""Progress of long CLI work (embedding) on stderr, through tqdm.

On a terminal: one tqdm bar, redrawn in place. Anywhere else (a log file, a pipe, CI): no
carriage-return frames at all; one plain line when the work starts and one when it ends, so a
log stays readable. stdout is never touched (`--json` documents and `rmh serve` stay clean).
"""

from __future__ import annotations

import sys
from typing import Any, TextIO


class Progress:
    """A `Progress` callback (`(done, total, what)`, vault.retrieval.encoders) for one task."""

    def __init__(self, stream: TextIO | None = None, *, announce: str = "") -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.announce = announce  # printed once before the first step (e.g. why it embeds)
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._bar: Any = None
        self._started = False

    def __call__(self, done: int, total: int, what: str) -> None:
        if not self._started:
            self._started = True
            if self.announce:
                print(self.announce, file=self.stream, flush=True)
            if self.tty:
                from tqdm import tqdm

                self._bar = tqdm(total=total, desc=what, unit="chunk", file=self.stream,
                                 leave=True, dynamic_ncols=True)
            else:
                print(f"{what}: {total} chunks ...", file=self.stream, flush=True)
        if self._bar is not None:
            self._bar.update(done - self._bar.n)
        if done >= total:
            self.close(f"{what}: {done}/{total} chunks done")

    def close(self, line: str = "") -> None:
        """End the task: close the bar (a terminal) or print `line` (anything else)."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        elif line and not self.tty:
            print(line, file=self.stream, flush=True)
