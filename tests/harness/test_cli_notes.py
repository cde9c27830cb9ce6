"""The `rmh` command line as a user runs it: real subprocesses, real vault folders."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def rmh(*args: str, stdin: str = "", env: dict[str, str] | None = None,
        seed: str = "0") -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k not in ("RMH_VAULT", "RMH_CONFIG")}
    base["PYTHONHASHSEED"] = seed
    base["PYTHONPATH"] = str(ROOT)
    base.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "harness", *args],
        input=stdin, capture_output=True, text=True, env=base, cwd=ROOT, timeout=120,
    )


def make_vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    assert rmh("--vault", str(root), "init").returncode == 0
    for name, text in {
        "Alice": "Alice owns the [[Billing]] service.\n",
        "Billing": "Billing charges customers every month. #service\n",
        "Notes/Carla": "Carla rotates the certificates with [[Alice]].\n",
    }.items():
        r = rmh("--vault", str(root), "write", name, stdin=text)
        assert r.returncode == 0, r.stderr
    return root


def test_no_vault_fails_loudly(tmp_path: Path) -> None:
    r = rmh("search", "x", env={"HOME": str(tmp_path)})
    assert r.returncode == 1
    assert r.stderr.count("\n") == 1 and "RMH_VAULT" in r.stderr
    r = rmh("--vault", str(tmp_path / "nothing"), "search", "x")
    assert r.returncode == 1 and "not a vault" in r.stderr


def test_usage_error_exit_2() -> None:
    assert rmh("search").returncode == 2
    assert rmh("no-such-command").returncode == 2


def test_search_json_shape(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    r = rmh("--vault", str(root), "search", "customers billing", "--json", "--no-dense")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert r.stdout.count("\n") == 1
    top = doc["hits"][0]
    assert top["note"] == "Billing.md" and top["title"] == "Billing"
    assert isinstance(top["score"], float) and "receipt" in top


def test_env_var_names_the_vault(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    r = rmh("read", "Carla", env={"RMH_VAULT": str(root)})
    assert r.returncode == 0 and "certificates" in r.stdout


def test_move_links_backlinks_delete_doctor(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    v = ("--vault", str(root))
    r = rmh(*v, "move", "Billing", "Services/Billing Service", "--json")
    assert json.loads(r.stdout)["rewritten"] == ["Alice.md"]
    links = json.loads(rmh(*v, "links", "Alice", "--json").stdout)["links"]
    assert links[0]["resolved"] == "Services/Billing Service.md"
    back = json.loads(rmh(*v, "backlinks", "Alice", "--json").stdout)["backlinks"]
    assert back == ["Notes/Carla.md"]
    assert rmh(*v, "delete", "Carla").returncode == 0
    doctor = json.loads(rmh(*v, "doctor", "--json").stdout)
    assert doctor["vault"]["counts"]["notes"] == 2
    r = rmh(*v, "read", "Carla")
    assert r.returncode == 1 and "not found" in r.stderr


def test_same_search_same_bytes_under_two_hash_seeds(tmp_path: Path) -> None:
    # Two copies of one vault written by hand (no learned state yet): a search is also a usage
    # event (it warms neighbours, on the wall clock), so each copy answers its first search
    # from the same, empty learned state.
    root = tmp_path / "hand"
    (root / "Notes").mkdir(parents=True)
    (root / "Alice.md").write_text("Alice owns the [[Billing]] service.\n", encoding="utf-8")
    (root / "Billing.md").write_text("Billing charges customers monthly.\n", encoding="utf-8")
    (root / "Notes" / "Carla.md").write_text("Carla rotates certificates with [[Alice]].\n",
                                             encoding="utf-8")
    assert rmh("--vault", str(root), "init").returncode == 0
    twin = tmp_path / "twin"
    shutil.copytree(root, twin)
    query = ("search", "alice billing certificates", "--json")
    a = rmh("--vault", str(root), *query, seed="1")
    b = rmh("--vault", str(twin), *query, seed="4242")
    assert a.returncode == 0 and a.stdout == b.stdout
    assert json.loads(a.stdout)["hits"]


def test_read_of_a_skipped_file_says_why(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    (root / "blob.md").write_bytes(b"\x00\x01")
    r = rmh("--vault", str(root), "read", "blob.md")
    assert r.returncode != 0 and "skipped" in r.stderr and "binary" in r.stderr, r.stderr
    assert "not found" not in r.stderr
