"""The REPL's write quota charges a `write` the folders its note's path may create
(`folder_charge`): generated paths that try to make more folders than they are charged for
(`./`, `//`, `a/./b`, `..`, backslashes, slash and dot look-alikes, NUL, surrounding spaces,
trailing slashes, deep nesting) never do. Each write either is refused, charged nothing and
makes no folder, or makes at most one folder per FOLDER_BYTES it was charged beyond its
content; nothing is made outside the vault; an `edit` makes no folder whatever it names.
Session 25's probe (docs/measurements/session25/rev_write_quota.py.txt) as a suite test."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.tools import build_functions, vault_functions
from harness.vault_ops import VaultCalls, VaultThread
from harness.write_quota import FOLDER_BYTES, WriteLimits, WriteQuota
from sandbox import HostFunctionError
from vault import Vault

NAME = st.text(st.sampled_from("abxyz09é"), min_size=1, max_size=4)
TRICK = st.sampled_from([".", "", "..", " ", "\\", "\uff0f", "\u2215", "\u2044", "\ufe68",
                         "\u29f8", "\u2024", "\x00", "a\\b", "q\u2215r", ". ", " ."])
PART = st.one_of(NAME, NAME, TRICK)
SEP = st.sampled_from(["/", "/", "/", "//", "/./"])


@st.composite
def note_paths(draw: st.DrawFn) -> str:
    parts = draw(st.lists(PART, min_size=1, max_size=8))
    path = parts[0]
    for part in parts[1:]:
        path += draw(SEP) + part
    path = draw(st.sampled_from(["", "./", "/", " "])) + path
    return path + draw(st.sampled_from(["", ".md", "/", ".md  ", "/x.md"]))


def _folders(top: Path) -> set[str]:
    return {str(Path(d).relative_to(top)) for d, _, _ in os.walk(top)
            if ".rmh" not in Path(d).relative_to(top).parts}


@pytest.fixture
def quota_vault(tmp_path: Path) -> Iterator[tuple[Path, WriteQuota, dict[str, Any]]]:
    root = tmp_path / "v"
    root.mkdir()
    (root / "A.md").write_text("hello\n", encoding="utf-8")
    vault = Vault.init(root)
    thread = VaultThread()
    quota = WriteQuota(WriteLimits(exec_bytes=1 << 40, exec_notes=1 << 20,
                                   session_bytes=1 << 40, session_notes=1 << 20))
    functions = quota.wrap(build_functions(vault_functions(
        VaultCalls(vault, thread, lambda: None))))
    try:
        yield tmp_path, quota, {name: functions[name].fn for name in ("write", "edit")}
    finally:
        thread.close()
        vault.close()


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(path=note_paths(), content=st.text(st.sampled_from("xé\n"), max_size=20))
def test_no_write_makes_more_folders_than_it_is_charged_for(
        quota_vault: tuple[Path, WriteQuota, dict[str, Any]], path: str, content: str) -> None:
    top, quota, fn = quota_vault
    before, spent = _folders(top), quota.report()["session_bytes"]
    try:
        fn["write"](path, content)
        written = True
    except HostFunctionError:
        written = False
    made = _folders(top) - before
    charged = quota.report()["session_bytes"] - spent
    assert all(m == "v" or m.startswith("v" + os.sep) for m in made), (path, made)
    if not written:
        assert (charged, made) == (0, set()), (path, charged, made)
        return
    beyond = charged - len(content.encode("utf-8"))
    assert beyond >= 0 and len(made) * FOLDER_BYTES <= beyond, (path, charged, sorted(made))


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(path=note_paths())
def test_an_edit_makes_no_folder(quota_vault: tuple[Path, WriteQuota, dict[str, Any]],
                                 path: str) -> None:
    top, _, fn = quota_vault
    before = _folders(top)
    with contextlib.suppress(HostFunctionError):
        fn["edit"](path, "append", "x")
    assert _folders(top) == before, path
