"""No futex of the worker reaches another process's waiters (seccomp_policy.FUTEX_OPS).

A futex without FUTEX_PRIVATE_FLAG on a page of a file is keyed on the file, whoever maps it (a
read-only MAP_PRIVATE view is enough). The filter allowed such operations, so a cell that could
read a file another process waits on woke that process's waiter (FUTEX_WAKE returned 1),
requeued it onto a word of its own (its real wake-up then woke nobody: it slept to its timeout)
or could take its wake-ups by waiting on the same word. The seccomp tier reads any file its uid
can (a process-shared lock in /dev/shm or LMDB's lock.mdb); every tier reads the interpreter's
own files, which is what the waiter here uses: a thread of this process waits on a word of a
standard-library module, the same file the worker reads under whatever path its tier binds
it. Every real tier (conftest.py's `host`)."""

from __future__ import annotations

import ast
import colorsys
import ctypes
import errno
import os
import platform
import threading
import time

from .conftest import Host, run_attack

_FUTEX = 202 if platform.machine() == "x86_64" else 98
_WAIT, _WAKE, _REQUEUE = 0, 1, 3
# The word: one of the first 1,000 of the page, by pid, so that two runs of this test at once
# (the interpreter's files are shared by the whole machine) never wait on the same word.
_OFFSET = (os.getpid() % 1000) * 4

_CELL = """
import ctypes, errno, importlib.util, os
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                      ctypes.c_long)
fd = os.open(importlib.util.find_spec("colorsys").origin, os.O_RDONLY)
theirs = ctypes.c_void_p(libc.mmap(None, 4096, 1, 2, fd, 0) + @OFFSET@)  # PROT_READ, MAP_PRIVATE
own, other = ctypes.c_int(0), ctypes.c_int(0)
def futex(addr, op, val, val2=None, addr2=None, val3=0):
    r = libc.syscall(@NR@, addr, op, val, val2, addr2, val3)
    return r if r >= 0 else errno.errorcode[ctypes.get_errno()]
brief = (ctypes.c_long * 2)(0, 50_000_000)
many = ctypes.c_void_p(0x7FFFFFFF)
{"wake": futex(theirs, 1, 0x7FFFFFFF),
 "wake_bitset": futex(theirs, 10, 0x7FFFFFFF, None, None, 0xFFFFFFFF),
 "requeue": futex(theirs, 3, 0, many, ctypes.byref(own)),
 "wake_op": futex(theirs, 5, 1, many, ctypes.byref(other)),
 "wait_shared": futex(ctypes.byref(own), 0, 0, brief),
 "wait_bitset_shared": futex(ctypes.byref(own), 9, 0, brief, None, 0xFFFFFFFF),
 "wake_private": futex(ctypes.byref(own), 1 | 128, 1),
 "wait_private": futex(ctypes.byref(own), 0 | 128, 0, brief)}
"""


class _Waiter:
    """A thread of this process in a shared FUTEX_WAIT on a word of colorsys.py (`_OFFSET`,
    mapped read-only), as another process would wait on a process-shared lock."""

    def __init__(self) -> None:
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.libc.syscall.restype = ctypes.c_long
        self.libc.mmap.restype = ctypes.c_void_p
        self.libc.mmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                                   ctypes.c_int, ctypes.c_long)
        assert colorsys.__file__ is not None
        fd = os.open(colorsys.__file__, os.O_RDONLY)
        try:
            self.word = ctypes.c_void_p(self.libc.mmap(None, 4096, 1, 2, fd, 0) + _OFFSET)
        finally:
            os.close(fd)
        self.value = ctypes.c_uint32.from_address(self.word.value or 0).value
        self.answer: int | None = None
        self.thread = threading.Thread(target=self._wait, daemon=True)

    def _wait(self) -> None:
        limit = (ctypes.c_long * 2)(30, 0)
        r = self.libc.syscall(_FUTEX, self.word, _WAIT, ctypes.c_uint32(self.value), limit,
                              None, 0)
        self.answer = 0 if r == 0 else ctypes.get_errno()

    def start(self) -> None:
        """Start waiting; return once the thread sleeps on the word (polled)."""
        self.thread.start()
        while self.queued() != 1:
            assert self.thread.is_alive(), f"the waiter ended at once: {self.answer}"
            time.sleep(0.01)

    def queued(self) -> int:
        """How many waiters sleep on the word: a FUTEX_REQUEUE of none woken and all moved onto
        the same word counts them and wakes nobody (/proc/self/task/TID/syscall is closed to
        an unprivileged user in this non-dumpable process)."""
        return int(self.libc.syscall(_FUTEX, self.word, _REQUEUE, 0,
                                     ctypes.c_void_p(0x7FFFFFFF), self.word, 0))

    def wake(self) -> int:
        """Its partner's FUTEX_WAKE on the word: how many waiters it woke."""
        return int(self.libc.syscall(_FUTEX, self.word, _WAKE, 1, None, None, 0))


def test_no_shared_futex_reaches_a_waiter_in_another_process(host: Host) -> None:
    waiter = _Waiter()
    waiter.start()
    try:
        result = run_attack(host, _CELL.replace("@NR@", str(_FUTEX)).replace("@OFFSET@",
                                                                            str(_OFFSET)))
        assert result.ok and result.value is not None, result.to_json()
        answers = ast.literal_eval(result.value)
        assert waiter.thread.is_alive() and waiter.answer is None, "the cell woke the waiter"
        assert {key: answers[key] for key in ("wake", "wake_bitset", "requeue", "wake_op")} \
            == dict.fromkeys(("wake", "wake_bitset", "requeue", "wake_op"), "EPERM"), answers
        # A shared wait is never queued (glibc's join polls): EAGAIN, "the word changed".
        assert answers["wait_shared"] == answers["wait_bitset_shared"] == "EAGAIN", answers
        assert answers["wake_private"] == 0, answers  # the worker's own futexes still work
        assert answers["wait_private"] == "ETIMEDOUT", answers
        assert waiter.queued() == 1, "the cell moved the waiter off its word"
    finally:
        woke = waiter.wake()  # its partner's wake-up reaches it
        waiter.thread.join(timeout=60)
    assert woke == 1 and waiter.answer == 0, (woke, waiter.answer, errno.errorcode.get(
        waiter.answer or 0))
