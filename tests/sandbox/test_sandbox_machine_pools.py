"""A cell takes nothing from a pool the whole machine shares (SBX12, session 37).

Huge pages: mmap(MAP_HUGETLB) takes its pages from the machine's one hugetlb pool
(vm.nr_hugepages: what databases, virtual machines and DPDK reserve at boot), and the kernel
reserves them at mmap time, before a page is touched. The filter allowed every mmap flag, so
one cell on any tier, root's or an unprivileged user's, reserved the whole pool (16 of 16 pages
in SBX12's probe) and kept it across cells until its sandbox closed, while every other process
of the machine got ENOMEM for a huge page. The filter now refuses mmap with MAP_HUGETLB (EPERM);
every other mmap is allowed as before. Per real tier, lint off, `run_attack`'s invariants.
"""

from __future__ import annotations

import ast
import errno

from .conftest import Host, run_attack

_MAP = """
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                      ctypes.c_long]
libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
def try_map(flags):
    addr = libc.mmap(None, 2 << 20, 3, flags, -1, 0)  # PROT_READ|PROT_WRITE, 2 MiB
    if addr in (None, ctypes.c_void_p(-1).value):
        return ctypes.get_errno()
    libc.munmap(addr, 2 << 20)
    return 0
PRIVATE_ANON, SHARED_ANON, HUGETLB, HUGE_2MB = 0x22, 0x21, 0x40000, 21 << 26
POPULATE, NORESERVE = 0x8000, 0x4000
(try_map(PRIVATE_ANON | HUGETLB), try_map(SHARED_ANON | HUGETLB),
 try_map(PRIVATE_ANON | HUGETLB | HUGE_2MB), try_map(PRIVATE_ANON),
 try_map(PRIVATE_ANON | POPULATE | NORESERVE), try_map(SHARED_ANON))
"""


def test_a_cell_reserves_no_huge_page_of_the_machines_pool(host: Host) -> None:
    res = run_attack(host, _MAP)
    assert res.ok and res.value is not None, res.to_json()
    huge, huge_shared, huge_sized, *plain = ast.literal_eval(res.value)
    # main: ENOMEM where the pool is empty, 0 (a reserved huge page) where it is not
    assert (huge, huge_shared, huge_sized) == (errno.EPERM,) * 3, (host.tier, res.value)
    assert plain == [0, 0, 0], (host.tier, res.value)  # every other mapping as before
