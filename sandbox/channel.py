"""Host side of the private channel: length-prefixed JSON frames, read as hostile input.

Frame: a 4-byte big-endian length, then that many bytes of UTF-8 JSON (one object). The
reader never buffers more than one frame's header plus `max_frame` bytes: a header announcing
more is a violation before its body is read. Writes are non-blocking and bounded by a deadline,
so a worker that stops reading cannot wedge the supervisor.

A frame is parsed whole, and a small JSON value costs the parser ~20 times its bytes (an 8 MiB
call frame of 2.8 million `{}` took the supervisor's RSS from 17 to 239 MB and was accepted,
once per call, 50 calls a cell), so a frame may hold at most `max_values` values (object keys
included; a string, a note's whole body, is one), counted on the bytes before any is built.
"""

from __future__ import annotations

import json
import os
import re
import select
import struct
import time
from typing import Any

from .functions import reject_constant

HEADER = struct.Struct(">I")
# Values in one frame at most: honest frames hold a few (a result's texts, a call's
# arguments: rlm_batch at most 64 pairs of 50 notes or hits); 2**18 of the costliest (`{}`)
# are ~25 MB to parse.
MAX_VALUES = 1 << 18
_STRUCTURAL = (b",", b":", b"[", b"{")
# A string (an unterminated one runs to the end: no match ever fails, so the scan is linear
# whatever the bytes) or one of the bytes a value follows.
_TOKEN = re.compile(rb'"[^"\\]*(?:\\(?:.|\Z)[^"\\]*)*(?:"|\Z)|[,:\[{]', re.DOTALL)


def values_over(body: bytes, cap: int) -> bool:
    """True when `body`, if it is JSON, may hold more than `cap` values (keys included): every
    value but the outermost follows a `[`, `{`, `,` or `:` outside a string, so that count
    plus one bounds them, and each string is one. Strings are told apart (one linear scan
    that stops after at most 2 * `cap` tokens and builds nothing) only when the raw count of
    those bytes reaches `cap`: a note's body full of commas is still one value."""
    if sum(map(body.count, _STRUCTURAL)) < cap:
        return False
    marks = strings = 0
    for match in _TOKEN.finditer(body):
        if body[match.start()] == 0x22:  # '"'
            strings += 1
        else:
            marks += 1
        if marks >= cap or strings > cap:
            return True
    return marks >= cap


class ProtocolViolation(Exception):
    """The worker sent something the protocol does not allow (it gets killed)."""


class WriteTimeout(Exception):
    """The worker did not drain its channel before the deadline."""


class FrameReader:
    """Incremental parser: feed bytes, get complete frames (dicts) back."""

    def __init__(self, max_frame: int, max_values: int = MAX_VALUES) -> None:
        self.max_frame, self.max_values = max_frame, max_values
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
            with memoryview(self._buf) as view:  # one copy of the body, not two
                body = bytes(view[HEADER.size:HEADER.size + size])
            del self._buf[:HEADER.size + size]
            if values_over(body, self.max_values):
                raise ProtocolViolation(f"frame holds more than {self.max_values} JSON values")
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
