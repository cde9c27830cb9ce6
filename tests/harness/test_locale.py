"""`rmh` under a locale whose encoding is not UTF-8 (harness/entry.py runs itself again in
Python's UTF-8 mode): note names, their links and the arguments naming them are UTF-8
whatever the locale says. Before, an ASCII locale (`LC_ALL=C PYTHONUTF8=0`) refused
`rmh read Zoë` and `rmh write Ünïcode` (`path_refused`: not valid unicode) and searched for
surrogates, and a Latin-1 locale indexed `Zoë.md` as `ZoÃ«.md`, so `[[Zoë]]` dangled. Real
processes; the Latin-1 locale is compiled with `localedef` into the test's folder."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NOTES = {"Zoë": "Zoë runs the café.\n", "Index": "See [[Zoë]] about the café.\n"}


def run(*argv: str | bytes, env: dict[str, str] | None = None,
        stdin: str = "") -> subprocess.CompletedProcess[bytes]:
    base = {k: v for k, v in os.environ.items()
            if k not in ("RMH_VAULT", "RMH_CONFIG", "PYTHONIOENCODING", "PYTHONUTF8")
            and not k.startswith("LC_") and k != "LANG"}
    base["PYTHONPATH"] = str(ROOT)
    base.update(env or {})
    return subprocess.run([sys.executable, "-m", "harness", *argv], cwd=ROOT, env=base,
                          input=stdin.encode(), capture_output=True, timeout=120, check=False)


def locales(tmp_path: Path) -> list[tuple[dict[str, str], str]]:
    """The non-UTF-8 locales to run under, with their encoding: ASCII always, Latin-1 where
    localedef can make it."""
    found = [({"LC_ALL": "C", "PYTHONUTF8": "0"}, "ascii")]
    if shutil.which("localedef"):
        (tmp_path / "loc").mkdir()
        subprocess.run(["localedef", "-i", "en_US", "-f", "ISO-8859-1",
                        str(tmp_path / "loc" / "en_US.ISO-8859-1")],
                       capture_output=True, check=False)  # 1: made, with warnings
        if (tmp_path / "loc" / "en_US.ISO-8859-1").is_dir():
            found.append(({"LC_ALL": "en_US.ISO-8859-1", "LOCPATH": str(tmp_path / "loc")},
                          "latin-1"))
    return found


def test_notes_with_non_ascii_names_work_under_a_non_utf8_locale(tmp_path: Path) -> None:
    root = tmp_path / "v"
    assert run("init", str(root), "--no-dense").returncode == 0
    for name, text in NOTES.items():
        assert run("--vault", str(root), "write", name, stdin=text).returncode == 0
    v = ("--vault", str(root))
    for i, (env, encoding) in enumerate(locales(tmp_path)):
        (root / f"Editor {i}.md").write_text("Saved by an editor: [[Zoë]].\n", encoding="utf-8")
        # typed on a UTF-8 terminal, and (Latin-1) on one of the locale's own
        names: list[str | bytes] = ["Zoë"]
        if encoding != "ascii":
            names.append("Zoë".encode(encoding))
        for typed in names:
            r = run(*v, "read", typed, env=env)
            assert r.returncode == 0, (env, typed, r.stderr)
            # printed in the locale's encoding, as before (escaped where it cannot)
            assert r.stdout == NOTES["Zoë"].encode(encoding, "backslashreplace"), env
        new = f"Ünïcode {i}"
        assert run(*v, "write", new, stdin="ü\n", env=env).returncode == 0, env
        assert (root / f"{new}.md").read_text(encoding="utf-8") == "ü\n"
        r = run(*v, "search", "café", "--no-dense", "--json", env=env)
        doc = json.loads(r.stdout.decode(encoding))
        assert doc["query"] == "café", env
        assert {hit["note"] for hit in doc["hits"]} >= {"Zoë.md", "Index.md"}, env
        assert doc["hits"][0]["title"] == "Zoë", env
        r = run(*v, "backlinks", "Zoë", "--json", env=env)
        assert r.returncode == 0, (env, r.stderr)
        assert set(json.loads(r.stdout.decode(encoding))["backlinks"]) == {
            "Index.md", *(f"Editor {j}.md" for j in range(i + 1))}, env
        r = run(*v, "doctor", "--json", env=env)
        assert json.loads(r.stdout.decode(encoding))["vault"]["dangling_links"] == [], env
