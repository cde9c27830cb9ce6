"""The wall clock that bounds a reranker's model runs (rmh.toml `[rerank] timeout_s`).

vault reads no clock (vault/retrieval/cross_encoder.py `RunBound`): the shell decides how long
a run may take and hands vault this bound, which tells onnxruntime to stop a run still going
after `seconds` (a timer thread, cancelled when the run ends). A query whose run was stopped
keeps the fused order, and its receipt says "failed: the model ran over 30 s".
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

TIMEOUT_S = 30.0  # one run of the model (a batch of pairs), then it is stopped


@dataclass(frozen=True)
class WallClock:
    """Stop a run still going after `seconds` of wall-clock time (above 0)."""

    seconds: float = TIMEOUT_S

    def __post_init__(self) -> None:
        if not self.seconds > 0:
            raise ValueError(f"a run bound must be above 0 s, not {self.seconds!r}")

    @contextmanager
    def watching(self, stop: Callable[[], None]) -> Iterator[None]:
        timer = threading.Timer(self.seconds, stop)
        timer.daemon = True
        timer.start()
        try:
            yield
        finally:
            timer.cancel()

    def __str__(self) -> str:
        return f"{self.seconds:g} s"
