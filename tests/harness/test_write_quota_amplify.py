"""Host functions are charged by what they produce (issue 26 item 4): an edit that multiplies
its text (`replace` of a one-character `find`, `expected_count` times) is charged the note's
size after the edit, computed before any text is built, through `rmh exec` and `rmh serve`
(REPL and JSON-RPC), and the supervisor's memory does not grow by the size it refused to
build (before the change: +573 MiB peak RSS, bench/bench_amplify.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.tools import build_functions, vault_functions
from harness.vault_ops import VaultCalls, VaultThread
from harness.write_quota import WriteLimits, WriteQuota
from sandbox import HostFunctionError
from vault import Vault

from .test_server_e2e import CHILD_ENV, REPO, Server, make_vault

BIG = "x" * 1000
# 300,000 characters x 1,000 occurrences: a 300-million-character note if it were built
AMPLIFY = "edit('Big', 'replace', find='x', text='y' * 300_000, expected_count=1000)"
# 9,000 x 1,000 = 9,000,000 bytes: the attack (charged 9,000 bytes before); over the
# 8 MiB per-exec quota and the vault's 8 MiB note cap
JUST_OVER = "edit('Big', 'replace', find='x', text='y' * 9_000, expected_count=1000)"
CELL = f"""
out = []
for attempt in ({AMPLIFY!r}, {JUST_OVER!r}):
    try:
        eval(attempt)
        out.append('written')
    except Exception as exc:
        out.append(type(exc).__name__)
out
"""


def _vault(root: Path) -> Path:
    make_vault(root)
    (root / "Big.md").write_text(BIG, "utf-8")
    return root


def test_edit_is_charged_the_note_size_after_it(tmp_path: Path) -> None:
    vault = Vault.open(_vault(tmp_path / "v"))
    thread = VaultThread()
    try:
        quota = WriteQuota(WriteLimits(session_bytes=20_000))
        fns = quota.wrap(build_functions(vault_functions(VaultCalls(vault, thread, lambda: None))))
        edit = fns["edit"].fn
        edit("Big", "replace", text="yy", find="x", expected_count=1000)  # 2,000 bytes after
        assert quota.report()["session_bytes"] == 2000
        edit("Big", "append", text="z")  # the whole note again: 2,002 bytes (newline added)
        assert quota.report()["session_bytes"] == 4002
        before = (tmp_path / "v" / "Big.md").read_bytes()
        with pytest.raises(HostFunctionError) as refused:  # 2,000 x 9 = 18,000 > 15,998 left
            edit("Big", "replace", text="y" * 18, find="yy", expected_count=1000)
        assert refused.value.type_name == "QuotaExceeded"
        assert (tmp_path / "v" / "Big.md").read_bytes() == before
        assert quota.report()["session_bytes"] == 4002  # a refused edit costs nothing
    finally:
        thread.close()
        vault.close()


def test_amplifying_edit_through_rmh_exec_is_refused(tmp_path: Path) -> None:
    root = _vault(tmp_path / "v")
    env = {k: v for k, v in os.environ.items() if k in CHILD_ENV}
    env["PYTHONPATH"] = str(REPO)
    done = subprocess.run(
        [sys.executable, "-m", "harness", "--vault", str(root), "exec", "--no-dense", "--json",
         "--deadline", "60", "-c", CELL],
        capture_output=True, text=True, env=env, cwd=REPO, timeout=300)
    out = json.loads(done.stdout)
    assert out["ok"], out
    assert out["value"] == "['QuotaExceeded', 'QuotaExceeded']"
    assert (root / "Big.md").read_text("utf-8") == BIG


def _vm(pid: int, field: str) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(ln for ln in status.splitlines() if ln.startswith(field)).split()[1])


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/status").is_file(), reason="reads /proc/PID/status")
def test_amplifying_edit_through_rmh_serve_builds_nothing(tmp_path: Path) -> None:
    srv = Server(_vault(tmp_path / "v"), tmp_path)
    try:
        warm = srv.call("repl.exec", {"code": "edit('Big', 'append', text='')",
                                      "deadline_s": 60}, rid="warm")["result"]
        assert warm["ok"], warm
        before_kb = _vm(srv.proc.pid, "VmHWM")
        out = srv.call("repl.exec", {"code": CELL, "deadline_s": 60}, rid="amp")["result"]
        # the JSON-RPC surface has no write quota, but the same note cap, checked first
        direct = srv.call("vault.edit", {"note": "Big", "kind": "replace", "find": "x",
                                         "text": "y" * 300_000, "expected_count": 1000},
                          rid="rpc")
        peak_kb = _vm(srv.proc.pid, "VmHWM")
        assert out["ok"] and out["value"] == "['QuotaExceeded', 'QuotaExceeded']", out
        assert direct["error"]["data"]["kind"] == "quota_exceeded", direct
        # the old path built a 300-million-character string (+320-550 MiB); 50 MiB is generous
        assert peak_kb - before_kb < 50 * 1024, f"peak RSS {before_kb} kB -> {peak_kb} kB"
        assert (tmp_path / "v" / "Big.md").read_text("utf-8") == BIG
    finally:
        assert srv.finish() == 0


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/status").is_file(), reason="reads /proc/PID/status")
def test_a_slice_naming_a_huge_note_fifty_times_holds_one_copy(tmp_path: Path) -> None:
    root = _vault(tmp_path / "v")
    (root / "Huge.md").write_text("lorem ipsum dolor. " * 400_000, "utf-8")  # 7.6 MB
    srv = Server(root, tmp_path)
    try:
        warm = srv.call("repl.exec", {"code": "len(read('Huge')['text'])", "deadline_s": 60},
                        rid="warm")["result"]
        assert warm["value"] == "7600000", warm
        before_kb = _vm(srv.proc.pid, "VmHWM")
        out = srv.call("repl.exec", {"code": "len(rlm_call(['Huge'] * 50, 'What is it?'))",
                                     "deadline_s": 120}, rid="slice")["result"]
        peak_kb = _vm(srv.proc.pid, "VmHWM")
        assert out["ok"], out
        # 50 whole records would be 50 x (text + body) of 7.6 MB each: hundreds of MiB
        assert peak_kb - before_kb < 100 * 1024, f"peak RSS {before_kb} kB -> {peak_kb} kB"
    finally:
        assert srv.finish() == 0


def test_a_write_is_charged_the_folders_of_its_path(tmp_path: Path) -> None:
    """A one-byte note under a deep path pays FOLDER_BYTES per folder: the byte budget bounds
    the folders a cell can make (before: ~490 folders for one byte of quota)."""
    from harness.write_quota import FOLDER_BYTES

    vault = Vault.open(_vault(tmp_path / "v"))
    thread = VaultThread()
    try:
        quota = WriteQuota(WriteLimits(session_bytes=10 * FOLDER_BYTES))
        write = quota.wrap(build_functions(vault_functions(
            VaultCalls(vault, thread, lambda: None))))["write"].fn
        write("a/b/c.md", "x")
        assert quota.report()["session_bytes"] == 2 * FOLDER_BYTES + 1
        deep = "/".join(["d"] * 490) + "/n.md"
        with pytest.raises(HostFunctionError, match="bytes written per session"):
            write(deep, "x")
        assert not (tmp_path / "v" / "d").exists()
        write("top.md", "y" * FOLDER_BYTES)  # a note at the top pays its bytes only
        assert quota.report()["session_bytes"] == 3 * FOLDER_BYTES + 1
    finally:
        thread.close()
        vault.close()
