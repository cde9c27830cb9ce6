"""The worker runs on its own interpreter's libpython, and so every standard-library extension
loads. A shared-library build (pyenv's, say) finds libpython by an absolute RUNPATH of the
host's prefix; inside bwrap that prefix is bound at /opt/python, so the loader fell back to
the library folders and took the system's libpython of the same soname (another patch
release): `import ssl` failed (undefined symbol _PyModule_Add) and every other extension ran
against a library it was not built for. Every real tier (conftest.py's `host`)."""

from __future__ import annotations

import ast

from .conftest import Host, run_attack

_CELL = """
import ctypes, sys

class Info(ctypes.Structure):
    _fields_ = [("fname", ctypes.c_char_p), ("fbase", ctypes.c_void_p),
                ("sname", ctypes.c_char_p), ("saddr", ctypes.c_void_p)]

info = Info()  # the file the C API the interpreter calls comes from (dladdr(3))
ctypes.CDLL(None).dladdr(ctypes.cast(ctypes.pythonapi.Py_IsInitialized, ctypes.c_void_p),
                         ctypes.byref(info))
mapped = info.fname.decode()
failed = []
for name in ("ssl", "hashlib", "decimal", "sqlite3", "ctypes"):  # extensions of lib-dynload
    try:
        __import__(name)
    except ImportError as exc:
        failed.append((name, str(exc)))
mapped, sys.base_prefix, failed
"""


def test_the_worker_runs_on_its_own_prefix_s_libpython(host: Host) -> None:
    result = run_attack(host, _CELL)
    assert result.ok and result.value is not None, result.to_json()
    mapped, prefix, failed = ast.literal_eval(result.value)
    assert mapped.startswith(prefix.rstrip("/") + "/"), (mapped, prefix)
    assert failed == []
