"""The `rmh` entry point (harness/entry.py): Ctrl-C is one line and exit 1 wherever it lands,
also while the command's modules are still importing (a real process: the SIGINT is sent
by the process itself the moment it starts importing numpy, so no timing is involved)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Python's own SIGINT handler raises KeyboardInterrupt at the next bytecode of the import
INTERRUPT_AT_IMPORT = """
import importlib.abc, os, signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)

class Interrupt(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == sys.argv[1]:
            sys.meta_path.remove(self)
            os.kill(os.getpid(), signal.SIGINT)
        return None

sys.meta_path.insert(0, Interrupt())
from harness.entry import main
sys.exit(main(sys.argv[2:]))
"""


def interrupted(module: str, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("RMH_VAULT", "RMH_CONFIG")}
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run([sys.executable, "-c", INTERRUPT_AT_IMPORT, module, *argv],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


def test_ctrl_c_while_the_cli_imports_is_one_line_and_exit_1(tmp_path: Path) -> None:
    for module in ("harness.cli", "numpy"):
        r = interrupted(module, "--vault", str(tmp_path), "search", "anything")
        assert (r.returncode, r.stderr, r.stdout) == (1, "rmh: interrupted\n", ""), module


# A KeyboardInterrupt raised in Python code that a C extension runs with PyRun_String (the
# tokenizers and onnxruntime imports do: Ctrl-C lands there while the embedder loads) is
# marked unhandled by CPython, which then killed `python -m harness` with SIGINT at exit
# whatever main returned: "rmh: interrupted", then exit -2 (130 in a shell).
INTERRUPT_IN_EXTENSION_CODE = """
import ctypes, sys
import vault
from harness.entry import main

run = ctypes.pythonapi.PyRun_String
run.restype = ctypes.py_object
run.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.py_object, ctypes.py_object]

def open_interrupted(*args, **kwargs):
    run(b"raise KeyboardInterrupt", 257, {}, {})  # 257: Py_file_input

vault.Vault.open = vault.Vault.init = open_interrupted
sys.exit(main(sys.argv[1:]))
"""


def test_ctrl_c_inside_an_extensions_python_code_is_exit_1(tmp_path: Path) -> None:
    (tmp_path / "interrupt_in_extension.py").write_text(INTERRUPT_IN_EXTENSION_CODE)
    env = {k: v for k, v in os.environ.items() if k not in ("RMH_VAULT", "RMH_CONFIG")}
    env["PYTHONPATH"] = os.pathsep.join((str(ROOT), str(tmp_path)))
    (tmp_path / "v" / ".rmh").mkdir(parents=True)
    for argv in (["--vault", str(tmp_path / "v"), "status"], ["demo", str(tmp_path / "d")]):
        r = subprocess.run([sys.executable, "-m", "interrupt_in_extension", *argv], cwd=ROOT,
                           env=env, capture_output=True, text=True, timeout=120)
        assert (r.returncode, r.stderr, r.stdout) == (1, "rmh: interrupted\n", ""), argv
