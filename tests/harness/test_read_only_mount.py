"""A read-only mount (EROFS, root too): reads that embed answer, `forget` is a refused write.

A vault indexed with `--no-dense` and then searched with dense on embeds its notes and tries
to keep what it computed (`.rmh/stamped-*.npz`, the dense store, its index). Each writer of
such a state file gives up quietly when the folder cannot be written (the value stays in
memory), but its cleanup of the temporary it never made was `unlink(missing_ok=True)`, and on
a read-only mount unlink(2) is EROFS even for a missing name: `rmh search` on a read-only
bind mount failed with `[Errno 30] Read-only file system: '.rmh/.stamped-dense-keys-1.npz.
PID.tmp'` (the absolute path of this machine), and so did `context`.

`rmh forget` erased the hooks' files first and failed there, untyped:
`[Errno 30] Read-only file system: 'VAULT/.rmh/hooks.sqlite'` (VAULT the vault's absolute path);
every other write is
refused as `read_only_vault` before it changes anything."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.harness.test_cli_notes import rmh
from tests.harness.test_read_only_vault import read_only_mount, tree

pytestmark = pytest.mark.slow
__all__ = ["read_only_mount"]  # the fixture, used by name below

READS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("search", "kiwi", "--json"), "Alpha.md"),
    (("search", "mango", "--json"), "Beta.md"),
    (("context", "hikes", "--budget", "60"), "Caro"),
    (("status", "--json"), '"read_only": true'),
)


@pytest.mark.parametrize(("args", "expected"), READS, ids=[" ".join(a[:2]) for a, _ in READS])
def test_a_read_that_embeds_answers_on_a_read_only_mount(
        read_only_mount: Path, args: tuple[str, ...], expected: str) -> None:
    root = read_only_mount
    before = tree(root)
    r = rmh("--vault", str(root), *args)
    assert r.returncode == 0, r.stderr
    assert "Errno" not in r.stderr and str(root) not in r.stderr
    if args[0] == "search":
        assert json.loads(r.stdout)["hits"][0]["note"] == expected
    else:
        assert expected in r.stdout
    assert tree(root) == before


FORGETS: tuple[tuple[str, ...], ...] = (("Beta",), ("--subject", "mango"), ("Alpha", "Beta"),
                                        ("--subject", "nothing-names-this"))


@pytest.mark.parametrize("args", FORGETS, ids=[" ".join(a) for a in FORGETS])
def test_forget_on_a_read_only_mount_is_refused_as_a_write(
        read_only_mount: Path, args: tuple[str, ...]) -> None:
    root = read_only_mount
    before = tree(root)
    r = rmh("--vault", str(root), "forget", *args, "--json")
    assert r.returncode == 1, r.stderr
    assert json.loads(r.stdout)["error"]["kind"] == "read_only_vault"
    assert tree(root) == before
