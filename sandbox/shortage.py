"""Probe answers kept for the process's life, save those a passing shortage decided.

The probes (`probe`, the private root's check, the cpu cgroup's setup) run once per process
and their answers are kept. A probe that failed only because the supervisor was short of
something that comes back (descriptors: EMFILE, ENFILE; memory: ENOMEM; processes or a
cgroup's room: EAGAIN; space: ENOSPC) must not be kept: `rmh serve`'s first sandbox started
while its descriptors were exhausted left every later sandbox with no tier and no cpu cgroup
for the server's life (session 39, NOTES-SBX15). Such an answer is returned to its caller and
the next call probes again.

`kept` is functools.cache (cache_clear too) with that exception; a probe calls `note(exc)`
on a failure, and a kept function whose computation noted a passing shortage (itself, or a
kept function it called) returns its answer without keeping it.
"""

from __future__ import annotations

import errno
import functools
import threading
from collections.abc import Callable
from typing import Any, Generic, ParamSpec, TypeVar, cast

PASSING = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOMEM, errno.EAGAIN, errno.ENOSPC})
_P = ParamSpec("_P")
_R = TypeVar("_R")
_LOCAL = threading.local()


def passing(exc: BaseException | None) -> bool:
    """Whether `exc`, or an error that caused it (a few links down), is a passing shortage."""
    for _ in range(8):
        if exc is None:
            return False
        if isinstance(exc, OSError) and exc.errno in PASSING:
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def seen() -> int:
    """How many passing shortages this thread has noted (a counter: compare two readings)."""
    return int(getattr(_LOCAL, "seen", 0))


def note(exc: BaseException) -> bool:
    """Record `exc` where it is a passing shortage (the enclosing kept function then keeps
    nothing); whether it was one."""
    if not passing(exc):
        return False
    _LOCAL.seen = seen() + 1
    return True


class _Unkept(Exception):
    def __init__(self, value: Any) -> None:
        super().__init__()
        self.value = value


class kept(Generic[_P, _R]):  # a decorator, named as one
    """functools.cache, save an answer computed while a passing shortage was noted;
    `cache_clear` as functools.cache's."""

    def __init__(self, function: Callable[_P, _R]) -> None:
        self._function = function
        self._cache = functools.cache(self._compute)
        functools.update_wrapper(self, function)

    def _compute(self, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        before = seen()
        value = self._function(*args, **kwargs)
        if seen() != before:
            raise _Unkept(value)  # functools.cache keeps no raised call
        return value

    def __call__(self, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return cast(Callable[_P, _R], self._cache)(*args, **kwargs)
        except _Unkept as unkept:
            _LOCAL.seen = seen() + 1  # an enclosing kept function keeps nothing either
            return cast(_R, unkept.value)

    def cache_clear(self) -> None:
        """Forget every kept answer (a test's fresh process)."""
        self._cache.cache_clear()
