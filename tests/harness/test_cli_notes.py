"""The `rmh` command line as a user runs it: real subprocesses, real vault folders."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.forks import run_cli

ROOT = Path(__file__).resolve().parents[2]


def rmh(*args: str, stdin: str = "", env: dict[str, str] | None = None,
        seed: str = "0") -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k not in ("RMH_VAULT", "RMH_CONFIG")}
    base["PYTHONHASHSEED"] = seed
    base["PYTHONPATH"] = str(ROOT)
    base.update(env or {})
    return run_cli(args, env=base, cwd=ROOT, stdin=stdin, timeout=120)


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
    assert isinstance(top["score"], float) and "receipt" not in top  # compact by default
    assert "customers" in top["snippet"] and "stages" not in doc
    r = rmh("--vault", str(root), "search", "customers billing", "--json", "--no-dense",
            "--explain")
    explained = json.loads(r.stdout)
    assert "receipt" in explained["hits"][0] and "stages" in explained


def test_empty_query_and_k_0_are_usage_errors(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    for args in (("search", ""), ("search", "   "), ("search", "x", "-k", "0"),
                 ("search", "x", "-k", "-3")):
        r = rmh("--vault", str(root), *args, "--no-dense")
        assert r.returncode == 2, (args, r.stderr)
        assert "error" in r.stderr and r.stdout == ""


def test_version_help_and_completion() -> None:
    version = rmh("--version")
    assert version.returncode == 0 and version.stdout.startswith("rmh ")
    listing = rmh("--help").stdout
    for command in ("init", "search", "edit", "serve", "completion", "replay"):
        assert f"    {command} " in listing
    for shell, marker in (("bash", "complete -o filenames -F _rmh rmh"),
                          ("zsh", "#compdef rmh"), ("fish", "complete -c rmh")):
        r = rmh("completion", shell)
        assert r.returncode == 0 and marker in r.stdout
        assert "search" in r.stdout and "explain" in r.stdout and "expected-hash" in r.stdout
    assert rmh("completion", "tcsh").returncode == 2


def test_bash_completion_completes_commands_and_options() -> None:
    bash = shutil.which("bash")
    if bash is None:
        return
    script = rmh("completion", "bash").stdout
    probe = script + (
        "COMP_WORDS=(rmh --vault v se); COMP_CWORD=3; _rmh; echo \"${COMPREPLY[*]}\"\n"
        "COMP_WORDS=(rmh search --ex); COMP_CWORD=2; _rmh; echo \"${COMPREPLY[*]}\"\n")
    out = subprocess.run([bash, "--norc", "-c", probe], capture_output=True, text=True,
                         timeout=30)
    first, second = out.stdout.splitlines()[:2]
    assert "search" in first.split() and "serve" in first.split()
    assert second.split() == ["--explain"]


def test_write_refuses_an_existing_note_and_edit_keeps_the_rest(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    v = ("--vault", str(root))
    before = (root / "Billing.md").read_bytes()
    r = rmh(*v, "write", "Billing", stdin="replaced")
    assert r.returncode == 1 and "already exists" in r.stderr
    assert (root / "Billing.md").read_bytes() == before
    digest = json.loads(rmh(*v, "read", "Billing", "--json").stdout)["hash"]
    (root / "Billing.md").write_bytes(before + b"Edited in Obsidian.\n")
    r = rmh(*v, "edit", "Billing", "append", "--text", "agent line\n", "--expected-hash", digest)
    assert r.returncode == 1 and "changed since it was read" in r.stderr
    assert (root / "Billing.md").read_bytes() == before + b"Edited in Obsidian.\n"
    r = rmh(*v, "edit", "Billing", "append", "--text", "agent line\n", "--json")
    assert r.returncode == 0, r.stderr
    assert (root / "Billing.md").read_bytes() == before + b"Edited in Obsidian.\nagent line\n"
    r = rmh(*v, "write", "Billing", "--overwrite", stdin="replaced")
    assert r.returncode == 0 and (root / "Billing.md").read_text() == "replaced"


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


HEAVY = ("openai", "scipy", "onnxruntime", "tokenizers", "vault.conversation", "sandbox",
         "harness.mcp", "tqdm", "rpc", "anyio")


def loaded_after(*argv: str) -> set[str]:
    """The heavy modules in sys.modules after `rmh ARGV` ran in a fresh interpreter."""
    code = ("import sys\nfrom harness.cli import main\ntry:\n    main(sys.argv[1:])\n"
            "except SystemExit:\n    pass\n"
            f"print(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r} "
            f"or m in {HEAVY!r}), file=sys.stderr)")
    env = {k: v for k, v in os.environ.items() if k not in ("RMH_VAULT", "RMH_CONFIG")}
    env["PYTHONPATH"] = str(ROOT)
    r = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True,
                       env=env, cwd=ROOT, timeout=120)
    return set(json.loads(r.stderr.strip().splitlines()[-1].replace("'", '"')))


def test_start_up_imports_only_what_the_command_uses(tmp_path: Path) -> None:
    assert loaded_after("--help") == set()
    assert loaded_after("--version") == set()
    root = make_vault(tmp_path)
    assert loaded_after("--vault", str(root), "read", "Billing") == set()


def test_init_embeds_everything_and_search_says_when_it_must(tmp_path: Path) -> None:
    root = tmp_path / "fresh"
    root.mkdir()
    (root / "A.md").write_text("Alpha owns the billing service.\n", encoding="utf-8")
    (root / "B.md").write_text("Beta rotates certificates.\n", encoding="utf-8")
    r = rmh("--vault", str(root), "init", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["prepared"]["dense"] == "ready (exact)" and doc["prepared"]["chunks"] >= 2
    assert "\r" not in r.stderr  # no carriage-return frames off a terminal
    r = rmh("--vault", str(root), "search", "billing")
    assert r.returncode == 0 and "no embeddings yet" not in r.stderr  # nothing left to embed
    (root / "C.md").write_text("Gamma is new.\n", encoding="utf-8")
    r = rmh("--vault", str(root), "search", "gamma")
    assert r.returncode == 0 and "no embeddings yet" in r.stderr and "rmh index" in r.stderr
    assert "C.md" in r.stdout
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "A.md").write_text("Alpha.\n", encoding="utf-8")
    r = rmh("--vault", str(bare), "init", "--no-dense", "--json")
    assert json.loads(r.stdout)["prepared"]["dense"] == "skipped: no encoder"


def test_read_of_a_skipped_file_says_why(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    (root / "blob.md").write_bytes(b"\x00\x01")
    r = rmh("--vault", str(root), "read", "blob.md")
    assert r.returncode != 0 and "skipped" in r.stderr and "binary" in r.stderr, r.stderr
    assert "not found" not in r.stderr


def test_json_failures_are_one_json_document_too(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    r = rmh("--vault", str(root), "read", "nothere", "--json")
    assert r.returncode == 1 and r.stderr.startswith("rmh: ")
    doc = json.loads(r.stdout)
    assert doc["error"]["kind"] == "note_not_found" and doc["error"]["note"] == "nothere"


def test_a_note_dated_after_2262_is_indexed_and_found(tmp_path: Path) -> None:
    """An mtime past what int64 nanoseconds hold (`touch -d 2300-01-01`, a file out of an odd
    archive) stopped init, index and every search with an OverflowError; now it is a note."""
    root = make_vault(tmp_path)
    late = 10_413_792_000 * 10**9  # 2300-01-01
    os.utime(root / "Billing.md", ns=(late, late))
    (root / "Future.md").write_text("Quarterly invoices for the moon base.\n")
    os.utime(root / "Future.md", ns=(late, late))
    assert rmh("--vault", str(root), "index", "--no-dense").returncode == 0
    for query, note in [("moon base invoices", "Future.md"), ("customers", "Billing.md")]:
        r = rmh("--vault", str(root), "search", query, "--json", "--no-dense")
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout)["hits"][0]["note"] == note
    with (root / "Future.md").open("a") as fh:  # an edit moves the mtime back to now
        fh.write("And the lunar payroll.\n")
    r = rmh("--vault", str(root), "search", "lunar payroll", "--json", "--no-dense")
    assert r.returncode == 0 and json.loads(r.stdout)["hits"][0]["note"] == "Future.md"


def test_index_reports_the_changes_it_brought_in(tmp_path: Path) -> None:
    """Opening the vault already syncs it (the watcher's first scan), so `rmh index` once
    said `+0 ~0 -0 renamed 0` whatever had changed: it reports the open's changes too."""
    root = make_vault(tmp_path)
    (root / "Outside.md").write_text("written in Obsidian\n", encoding="utf-8")
    (root / "Billing.md").write_text("Billing charges weekly now.\n", encoding="utf-8")
    (root / "Notes" / "Carla.md").rename(root / "Notes" / "Carla Diaz.md")
    (root / "Alice.md").unlink()
    r = rmh("--vault", str(root), "index", "--no-dense", "--json")
    assert r.returncode == 0, r.stderr
    sync = json.loads(r.stdout)["sync"]
    assert (sync["added"], sync["updated"], sync["removed"], sync["renamed"]) == (
        ["Outside.md"], ["Billing.md"], ["Alice.md"], [["Notes/Carla.md", "Notes/Carla Diaz.md"]])
    r = rmh("--vault", str(root), "index", "--no-dense")
    assert r.stdout == "indexed 3 notes (+0 ~0 -0 renamed 0); skipped 0\n", r.stderr
