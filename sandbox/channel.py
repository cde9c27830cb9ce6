"""Host side of the private channel: length-prefixed JSON frames, read as hostile input.

Frame: a 4-byte big-endian length, then that many bytes of UTF-8 JSON (one object). The
reader never buffers more than one frame's header plus `max_frame` bytes: a header announcing
more is a violation before its body is read. Writes are non-blocking and bounded by a deadline,
so a worker that stops reading cannot wedge the supervisor.
"""

from __future__ import annotations

import json
import os
import select
import struct
import time
from typing import Any

from .functions import reject_constant

HEADER = struct.Struct(">I")


class ProtocolViolation(Exception):
    """The worker sent something the protocol does not allow (it gets killed)."""


class WriteTimeout(Exception):
    """The worker did not drain its channel before the deadline."""


class FrameReader:
    """Incremental parser: feed bytes, get complete frames (dicts) back."""

    def __init__(self, max_frame: int) -> None:
        self.max_frame = max_frame
        self._buf = bytearray()

    @property
    def pending(self) -> int:
        return len(self._buf)

    def feed(self, data: bytes) -> list[dict[str, Any]]:
        self._buf += data
        frames: list[dict[str, Any]] = []
        while len(self._buf) >= HEADER.size:
            (size,) = HEADER.unpack_from(self._buf)
            if size > self.max_frame:
                raise ProtocolViolation(f"frame of {size} bytes exceeds the {self.max_frame} cap")
            if len(self._buf) < HEADER.size + size:
                break
            body = bytes(self._buf[HEADER.size:HEADER.size + size])
            del self._buf[:HEADER.size + size]
            try:
                frame = json.loads(body.decode("utf-8"), parse_constant=reject_constant)
            except (UnicodeDecodeError, ValueError, RecursionError) as exc:
                raise ProtocolViolation(f"frame is not JSON: {type(exc).__name__}") from None
            if not isinstance(frame, dict):
                raise ProtocolViolation("frame is not a JSON object")
            frames.append(frame)
        return frames


def encode(frame: dict[str, Any]) -> bytes:
    try:
        data = json.dumps(frame, allow_nan=False, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: JSON escapes spell it in ASCII
        data = json.dumps(frame, allow_nan=False).encode("ascii")
    return HEADER.pack(len(data)) + data


def send(fd: int, frame: dict[str, Any], deadline: float) -> None:
    """Write one frame to a non-blocking fd before `deadline` (time.monotonic)."""
    view = memoryview(encode(frame))
    while view:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise WriteTimeout("worker stopped reading its channel")
        _, writable, _ = select.select([], [fd], [], remaining)
        if not writable:
            continue
        try:
            view = view[os.write(fd, view):]
        except BlockingIOError:
            continue
