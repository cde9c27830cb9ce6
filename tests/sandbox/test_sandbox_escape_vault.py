"""Escape suite, cases 12 and 25: the vault API under attack, and write durability."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

from vault import Vault

from .conftest import Host, run_attack


def test_case12_vault_api_path_attacks(host: Host) -> None:
    before = set(os.listdir(host.vault_dir))
    res = run_attack(host, """
    names = ["../x.md", "/etc/x.md", "a\\x00b.md", "a\\x01b.md", "a\\u2215b.md", "a\\uff0fb.md",
             "planted/x.md", "n" * 10000 + ".md", "..\\\\x.md", ".rmh/x.md"]
    out = {}
    for name in names:
        try:
            write(name, "pwned")
            out[name[:12]] = "OK"
        except HostError as exc:
            out[name[:12]] = type(exc).__name__
    for body in ("x" * 10**8, "y" * (9 * 2**20)):
        try:
            write("big.md", body)
            out[len(body)] = "OK"
        except (HostError, ValueError, MemoryError) as exc:
            out[len(body)] = type(exc).__name__
    try:
        for i in range(100000):
            write(f"spam{i}.md", "s")
    except HostError as exc:
        out["loop"] = type(exc).__name__
    out
    """, vault_may_change=True, deadline_s=600)
    # ~50 durable writes (each fsyncs the note, its folder and the index): seconds on an idle
    # machine, minutes on a loaded disk. What ends the loop must be the call limit, so the
    # deadline is only a hang guard, far above any load (120 s was hit after 51 writes).
    assert res.ok and res.value is not None, res.to_json()
    assert "'OK'" not in res.value, res.value
    assert "'loop': 'HostCallLimit'" in res.value and "PathRefused" in res.value
    new = set(os.listdir(host.vault_dir)) - before
    assert all(n.startswith("spam") and n.endswith(".md") for n in new), new
    assert (host.vault_dir / "home.md").read_text() == "# Home\nkeep me\n"


def test_case25_kill_worker_during_writes(host: Host) -> None:
    a, b = "A" * 200_000, "B" * 200_000
    host.vault.write("torn.md", a)
    host.started.clear()
    results = []
    cell = host.code(f"""
mark_started()
i = 0
while True:
    write("torn.md", {b!r} if i % 2 == 0 else {a!r})
    i += 1
""")
    runner = threading.Thread(target=lambda: results.append(host.sb.exec(cell, deadline_s=30)))
    runner.start()
    assert host.started.wait(30)
    host.sb.cancel()
    runner.join(30)
    assert results[0].error is not None and results[0].error.type in ("Cancelled",
                                                                      "HostCallLimit")
    assert (host.vault_dir / "torn.md").read_text() in (a, b)
    assert host.sb.exec("ping(1)").ok


def test_case25_kill_supervisor_between_temp_and_rename(tmp_path: Path) -> None:
    vault_dir = tmp_path / "v"
    Vault.init(vault_dir).write("n.md", "old content\n")
    script = textwrap.dedent(f"""
        import os, signal
        from pathlib import Path
        from vault import Vault
        v = Vault.open(Path({str(vault_dir)!r}))
        os.replace = lambda *a, **k: os.kill(os.getpid(), signal.SIGKILL)
        v.write("n.md", "new content\\n")
    """)
    run = subprocess.run([sys.executable, "-c", script], cwd=Path(__file__).parents[2],
                         capture_output=True, timeout=60, check=False)
    assert run.returncode == -9, run.stderr
    leftovers = [p.name for p in vault_dir.iterdir() if "rmh-tmp" in p.name]
    assert leftovers, "the kill should have left a temp file behind"
    v = Vault.open(vault_dir)
    assert v.read("n.md").text == "old content\n"
    assert not [p.name for p in vault_dir.iterdir() if "rmh-tmp" in p.name]
    v.close()
