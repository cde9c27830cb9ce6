"""Progress of long CLI work (embedding) on stderr, through tqdm.

From the first report (the embedder says how many chunks it will embed before it starts),
something is shown at least every `interval` seconds (2 s), even while one slice of chunks
is being embedded and the count does not move:
- on a terminal: one tqdm bar, redrawn in place (its elapsed time and rate refresh on every
  beat);
- anywhere else (a log file, a pipe, CI): no carriage-return frames; a plain line when the
  work starts, one per beat ("embedding: 512/4096 chunks (12%), 6 s"), and one at the end.
stdout is never touched (`--json` documents and `rmh serve` stay clean). The beat is a
daemon thread that `close` (or the last report) stops.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Any, TextIO

from .output import counted

INTERVAL_S = 2.0


class Progress:
    """A `Progress` callback (`(done, total, what)`, vault.retrieval.encoders) for one task."""

    def __init__(self, stream: TextIO | None = None, *, announce: str = "",
                 interval: float = INTERVAL_S) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.announce = announce  # printed once before the first step (e.g. why it embeds)
        self.interval = interval
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._bar: Any = None
        self._started = False
        self._state = (0, 0, "")
        self._t0 = 0.0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._beat: threading.Thread | None = None

    def __call__(self, done: int, total: int, what: str) -> None:
        with self._lock:
            self._state = (done, total, what)
            if not self._started:
                self._start(total, what)
            if self._bar is not None:
                self._bar.update(done - self._bar.n)
        if done >= total:
            self.close(f"{what}: {done}/{total} chunks done")

    def _start(self, total: int, what: str) -> None:
        self._started = True
        self._t0 = time.monotonic()
        if self.announce:
            print(self.announce, file=self.stream, flush=True)
        if self.tty:
            from tqdm import tqdm

            from ..terminal import Trusted

            # its own frames: a guarded terminal stream (harness/terminal.py) keeps its CRs
            self._bar = tqdm(total=total, desc=what, unit="chunk", file=Trusted(self.stream),
                             leave=True, dynamic_ncols=True, mininterval=0.0)
        else:
            print(f"{what}: {counted(total, 'chunk')} ...", file=self.stream, flush=True)
        if total > 0:
            self._beat = threading.Thread(target=self._beats, name="rmh-progress", daemon=True)
            self._beat.start()

    def _beats(self) -> None:
        while not self._stop.wait(self.interval):
            with self._lock:
                if self._stop.is_set():
                    return
                if self._bar is not None:
                    self._bar.refresh()
                    continue
                done, total, what = self._state
                share = f" ({100 * done // total}%)" if total else ""
                print(f"{what}: {done}/{total} chunks{share}, "
                      f"{time.monotonic() - self._t0:.0f} s", file=self.stream, flush=True)

    def close(self, line: str = "") -> None:
        """End the task: stop the beat, close the bar (a terminal) or print `line`."""
        with self._lock:
            self._stop.set()
            beat, self._beat = self._beat, None
            if self._bar is not None:
                self._bar.close()
                self._bar = None
            elif line and not self.tty and self._started:
                print(line, file=self.stream, flush=True)
                self._started = False
        if beat is not None and beat is not threading.current_thread():
            beat.join()
