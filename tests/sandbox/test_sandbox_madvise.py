"""madvise takes only the advice allocators and thread stacks use (seccomp_policy.MADVISE_ADVICE).
It was allowed with any advice: a cell's MADV_MERGEABLE returned 0 on every tier, putting its
pages into the host's KSM (where KSM runs, the time a write to a merged page takes tells the cell
whether that page's content exists in other processes' mergeable memory), and MADV_PAGEOUT
forced its pages out to the host's swap at will. Every real tier (conftest.py's `host`)."""

from __future__ import annotations

import ast

from sandbox.seccomp_policy import MADVISE_ADVICE

from .conftest import Host, run_attack

# MERGEABLE, UNMERGEABLE, PAGEOUT, COLLAPSE, HWPOISON, SOFT_OFFLINE, and values no kernel knows
_REFUSED = (12, 13, 21, 25, 100, 101, 26, 99, 104, 1 << 20, -1)

_CELL = """
import ctypes, errno, mmap
libc = ctypes.CDLL(None, use_errno=True)
libc.madvise.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
area = mmap.mmap(-1, 1 << 16, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
address = ctypes.addressof(ctypes.c_char.from_buffer(area))
def advise(advice):
    return 0 if libc.madvise(address, 1 << 16, advice) == 0 else ctypes.get_errno()
area[:4] = b"kept"
refused = {advice: advise(advice) for advice in REFUSED}
allowed = {advice: advise(advice) for advice in (0, 1, 2, 3, 14, 15, 16, 17, 20)}
freed = advise(4) == 0 and area[:4] == bytes(4)  # MADV_DONTNEED still frees (zero-fills)
refused, allowed, freed
"""


def test_madvise_takes_only_the_advice_allocators_use(host: Host) -> None:
    result = run_attack(host, _CELL.replace("REFUSED", repr(_REFUSED)))
    assert result.ok and result.value is not None, result.to_json()
    refused, allowed, freed = ast.literal_eval(result.value)
    assert refused == dict.fromkeys(_REFUSED, 1), refused  # EPERM: the filter, not the kernel
    assert set(allowed.values()) <= {0, 22}, allowed  # EINVAL: a kernel without that advice
    assert freed
    assert not set(_REFUSED) & set(MADVISE_ADVICE)
