"""A note name written as a link, as an agent copies one from a note's text (`[[Alice]]`,
`Alice#Heading`, `Alice#^block`, `[[Alice#^id|shown]]`), names no note: the error says which note
the link names, and that name reads. Before (session 42, REVIEW42) it was a bare "note not
found", on every surface."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.forks import run_cli
from vault import NoteNotFound, Vault

ROOT = Path(__file__).resolve().parents[2]
NOTES = {"People/Alice.md": "# Alice\n\nText. ^fav\n", "日本語/東京.md": "東京。\n",
         "🚀 Launch.md": "Go.\n"}


def _vault(root: Path) -> Vault:
    for path, text in NOTES.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, "utf-8")
    return Vault.init(root)


LINKED = st.tuples(
    st.sampled_from(["Alice", "People/Alice", "東京", "🚀 Launch", "people/alice"]),
    st.sampled_from(["", "#Alice", "#^fav", "#No Such Heading", "#"]),
    st.sampled_from(["", "|shown", "|"]),
    st.sampled_from([("", ""), ("[[", "]]"), ("![[", "]]")]))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(LINKED)
def test_a_name_written_as_a_link_says_the_note_it_names(tmp_path_factory: pytest.TempPathFactory,
                                                         parts: tuple[str, str, str,
                                                                      tuple[str, str]]) -> None:
    target, place, alias, (opening, closing) = parts
    written = f"{opening}{target}{place}{alias}{closing}"
    if written == target:
        return
    with _vault(tmp_path_factory.mktemp("v")) as v:
        with pytest.raises(NoteNotFound) as info:
            v.read(written)
        assert str(info.value).endswith(f"(written as a link: the note it names is {target!r})")
        assert v.read(target).note in NOTES  # the name it gives reads


def test_a_plain_missing_name_says_nothing_more(tmp_path: Path) -> None:
    with _vault(tmp_path / "v") as v, pytest.raises(NoteNotFound) as info:
        v.read("Nobody")
    assert str(info.value) == "note not found: 'Nobody'"


def test_cli_and_json_rpc_say_it(tmp_path: Path) -> None:
    root = tmp_path / "v"
    _vault(root).close()
    env = {k: v for k, v in os.environ.items() if k not in ("RMH_VAULT", "RMH_CONFIG")}
    env["PYTHONPATH"] = str(ROOT)
    r = run_cli(["--vault", str(root), "read", "Alice#^fav"], env=env, cwd=ROOT, timeout=120)
    assert (r.returncode, r.stderr) == (1, "rmh: note not found: 'Alice#^fav' (written as a "
                                           "link: the note it names is 'Alice')\n"), r.stderr
    frame = {"jsonrpc": "2.0", "id": 1, "method": "vault.read",
             "params": {"note": "[[Alice#Alice|her]]"}}
    out = subprocess.run([sys.executable, "-m", "harness", "--vault", str(root), "serve",
                          "--no-dense"], input=json.dumps(frame) + "\n", env=env, cwd=ROOT,
                         capture_output=True, text=True, timeout=120, check=False)
    error = json.loads(out.stdout)["error"]
    assert error["data"] == {"kind": "note_not_found", "note": "[[Alice#Alice|her]]",
                             "link_target": "Alice"}, error
