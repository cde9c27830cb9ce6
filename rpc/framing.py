"""Newline-delimited JSON framing with a hard cap on frame size.

One JSON message per line, UTF-8, terminated by `\\n` (a trailing `\\r` is tolerated; blank
lines are ignored). `LineSplitter` is the pure core: it turns a stream of byte chunks into
frames. Its memory is bounded by `max_frame` plus one chunk whatever the input: a line longer
than `max_frame` is reported once, as `FrameTooLarge`, the moment it crosses the cap, and its
remaining bytes are dropped (never buffered) until the next newline, where the reader resyncs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

DEFAULT_MAX_FRAME = 8 * 1024 * 1024


@dataclass(frozen=True)
class FrameTooLarge:
    """A line crossed the cap; it is being discarded up to the next newline."""

    limit: int


Frame = bytes | FrameTooLarge


class LineSplitter:
    """Incremental NDJSON splitter: `feed(chunk)` and `close()` return complete frames."""

    def __init__(self, max_frame: int = DEFAULT_MAX_FRAME) -> None:
        if max_frame < 1:
            raise ValueError("max_frame must be positive")
        self.max_frame = max_frame
        self._buf = bytearray()
        self._discarding = False

    def feed(self, chunk: bytes) -> list[Frame]:
        """Consume `chunk`; return the frames it completes, in order."""
        out: list[Frame] = []
        start = 0
        n = len(chunk)
        while start < n:
            nl = chunk.find(b"\n", start)
            end = n if nl < 0 else nl
            if self._discarding:
                if nl >= 0:
                    self._discarding = False
            else:
                piece = chunk[start:end]
                if len(self._buf) + len(piece) > self.max_frame:
                    self._buf.clear()
                    out.append(FrameTooLarge(self.max_frame))
                    self._discarding = nl < 0
                else:
                    self._buf += piece
                    if nl >= 0:
                        self._emit(out)
            if nl < 0:
                break
            start = nl + 1
        return out

    def close(self) -> list[Frame]:
        """End of input: a final line without a newline is still a frame."""
        out: list[Frame] = []
        if not self._discarding:
            self._emit(out)
        self._buf.clear()
        self._discarding = False
        return out

    @property
    def buffered(self) -> int:
        """Bytes held for the current incomplete line (bounded by max_frame)."""
        return len(self._buf)

    def _emit(self, out: list[Frame]) -> None:
        line = bytes(self._buf).rstrip(b"\r")
        self._buf.clear()
        if line.strip():
            out.append(line)


def encode(message: Any) -> bytes:
    """One frame: compact JSON (no NaN/Infinity) plus `\\n`. JSON escapes every newline."""
    text = json.dumps(message, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    try:
        return text.encode("utf-8") + b"\n"
    except UnicodeEncodeError:  # a lone surrogate: escape everything instead
        text = json.dumps(message, ensure_ascii=True, separators=(",", ":"), allow_nan=False)
        return text.encode("ascii") + b"\n"
