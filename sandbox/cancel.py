"""A cancel that cannot be lost: `CancelToken`, handed to `Sandbox.exec` by whoever may cancel.

`Sandbox.cancel()` ends the exec running now, which races with an exec that is about to start
(a cancel that arrives while the exec waits for the sandbox's lock, or for a thread, would
find nothing running and be lost, and the cell would then run to its end). A token removes the
race: `token.cancel()` marks it; an exec started with a cancelled token does not run its cell
(it answers `Cancelled` at once), and one that is running when the token is cancelled is ended
like `Sandbox.cancel()` ends it (its worker killed, even while a host call is running for it).
A token belongs to one exec; cancelling it never touches another exec.
"""

from __future__ import annotations

import threading
from collections.abc import Callable


class CancelToken:
    """One exec's cancel switch (thread-safe; `cancel()` may come from any thread)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cancelled = False
        self._hook: Callable[[], object] | None = None

    @property
    def cancelled(self) -> bool:
        with self._lock:
            return self._cancelled

    def cancel(self) -> None:
        """Cancel the exec this token was (or will be) given to; idempotent."""
        with self._lock:
            self._cancelled = True
            hook = self._hook
        if hook is not None:
            hook()

    def attach(self, hook: Callable[[], object]) -> bool:
        """Called by the sandbox as the exec starts: `hook` ends it when cancelled later.
        False when the token was already cancelled (the exec must not run)."""
        with self._lock:
            if self._cancelled:
                return False
            self._hook = hook
            return True

    def detach(self) -> None:
        """Called by the sandbox as the exec ends."""
        with self._lock:
            self._hook = None
