"""The list operation on a folder reached through a symlink, in-process: out of the vault, into
it, looping, broken or climbing out with "../..", at any depth and whatever follows it, every
listing answers path_refused (-32002) with the reason a read or a write through the same link
gives, never -32602 "no notes under" (session 26: a link out answered invalid params; a read
through a link inside answered note_not_found), and nothing outside shows; a real folder with
no notes still answers -32602."""

from __future__ import annotations

import json
import os
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.methods import Harness
from tests.harness.test_vault_list import rpc

SECRET = "PLUM-4410-OUTSIDE"
LEAVES, INSIDE = "symlink leaves the vault", "symlink inside the vault"
# each link (vault path) -> the reason every folder through it is refused for
LINKS = {"out": LEAVES, "broken": LEAVES, "real/up": LEAVES, "real/deep/out2": LEAVES,
         "outfile.md": LEAVES, "in": INSIDE, "loop": INSIDE, "real/deep/back": INSIDE}
NAME = st.text(st.sampled_from("abcXY_-é 1"), min_size=1, max_size=6).map(str.strip).filter(
    bool)


def _links(root: Path, outside: Path) -> None:
    (root / "real" / "deep").mkdir(parents=True)
    (root / "real" / "deep" / "Kept.md").write_text("kept\n", encoding="utf-8")
    outside.mkdir()
    (outside / "secret.md").write_text(f"{SECRET}\n", encoding="utf-8")
    (outside / "sub").mkdir()
    (outside / "sub" / "more.md").write_text(f"{SECRET}\n", encoding="utf-8")
    os.symlink(outside, root / "out")
    os.symlink(outside / "sub", root / "real" / "deep" / "out2")
    os.symlink(outside / "secret.md", root / "outfile.md")
    os.symlink(outside / "gone", root / "broken")
    os.symlink("../..", root / "real" / "up")
    os.symlink(root / "real", root / "in")
    os.symlink("loop", root / "loop")
    os.symlink("..", root / "real" / "deep" / "back")


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(link=st.sampled_from(sorted(LINKS)), tail=st.lists(NAME, max_size=3),
       what=st.sampled_from(["notes", "folders", "tags", "recent"]),
       slash=st.sampled_from(["", "/"]), tag=st.sampled_from([None, "x"]))
def test_a_folder_through_a_symlink_is_refused_as_a_path(
        harness: Harness, link: str, tail: list[str], what: str, slash: str,
        tag: str | None) -> None:
    root = harness.vault.root
    if not (root / "out").is_symlink():
        _links(root, root.parent / "outside")
    folder = "/".join([link, *tail]) + slash
    params = {"what": what, "folder": folder, **({"tag": tag} if tag else {})}
    out = rpc(harness, "vault.list", params)
    assert out.get("error", {}).get("code") == -32002, (folder, out)
    assert out["error"]["data"] == {"kind": "path_refused", "path": folder,
                                    "reason": LINKS[link]}, out
    assert SECRET not in json.dumps(out)
    # a read and a write through the same link: refused with the same reason, a link inside
    # too (the scan follows none, so no note has that path; a read said note_not_found)
    for method, extra in (("vault.read", {}), ("vault.write", {"content": "x"})):
        for name in ("secret", "Kept"):  # outside, and a note the inside links reach
            note = folder.rstrip("/") + "/" + name
            err = rpc(harness, method, {"note": note, **extra})["error"]["data"]
            assert (err["kind"], err["reason"]) == ("path_refused", LINKS[link]), (method, err)
            assert SECRET not in json.dumps(err)


def test_real_folders_list_and_a_missing_one_is_a_bad_argument(harness: Harness) -> None:
    root = harness.vault.root
    _links(root, root.parent / "outside")
    harness.vault.live.sync()
    page = rpc(harness, "vault.list", {"folder": "real/deep"})["result"]
    assert page["items"] == [{"note": "real/deep/Kept.md"}]
    for folder in ("real/nothing", "real/deep/Kept.md", "nowhere/x", "Alpha.md"):
        missing = rpc(harness, "vault.list", {"folder": folder})["error"]
        assert missing["code"] == -32602 and missing["data"]["param"] == "folder", missing
    everything = rpc(harness, "vault.list", {"what": "recent", "limit": 100})["result"]
    assert SECRET not in json.dumps(everything)
    assert [i["note"] for i in everything["items"]] != [] and all(
        not i["note"].startswith(("out", "in/", "loop", "broken")) for i in everything["items"])
