"""What README points the reader to exists: every repository path it names (`harness/...`,
`vault/...`, `bench/...`, `tests/...`, `docs/...`), every `python -m bench.X` module, every
measurement note (`NOTES-X.md`) and every BENCHMARKS.md section it cites by name."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
FOLDERS = ("harness", "vault", "sandbox", "rpc", "bench", "tests", "docs", ".ci")


def test_every_path_readme_names_exists() -> None:
    folders = "|".join(re.escape(f) for f in FOLDERS)
    pattern = r"(?<![\w/.-])((?:" + folders + r")/[\w./*-]+)"
    missing = []
    for raw in set(re.findall(pattern, README)):
        path = raw.rstrip(".,;:)")
        if path.endswith(".so"):  # built by `pip install -e`, ignored by git
            continue
        if "*" in path:
            if not list(ROOT.glob(path)):
                missing.append(path)
        elif not (ROOT / path).exists():
            missing.append(path)
    for module in set(re.findall(r"python -m (bench\.[\w.]+)", README)):
        if not (ROOT / (module.replace(".", "/") + ".py")).exists():
            missing.append(module)
    assert sorted(missing) == []


def test_every_measurement_note_readme_names_exists() -> None:
    notes = {p.stem for p in (ROOT / "docs").rglob("NOTES-*.md")}
    named = set(re.findall(r"\b(NOTES-[A-Z0-9]+)\b", README))
    assert sorted(named - notes) == []


def test_every_benchmarks_section_readme_cites_is_a_heading() -> None:
    headings = [line for line in (ROOT / "BENCHMARKS.md").read_text(encoding="utf-8").splitlines()
                if line.startswith("#")]
    text = re.sub(r"\s+", " ", README)
    cited = set(re.findall(r'BENCHMARKS\.md "([^"]+)"', text))
    cited |= set(re.findall(r'BENCHMARKS\.md "[^"]+" and "([^"]+)"', text))
    assert sorted(c for c in cited if not any(c in h for h in headings)) == []


def test_the_learning_version_readme_states_is_the_code_s() -> None:
    """README's "`LEARNING_VERSION`, N now" was 17 while the code was at 18 (session 33)."""
    from vault.learning.formulas import LEARNING_VERSION

    stated = re.findall(r"`LEARNING_VERSION`, (\d+) now", README)
    assert stated == [str(LEARNING_VERSION)]


def test_every_command_readme_shows_inline_is_one_line() -> None:
    """A command in an inline code span wrapped across lines runs as two when pasted from the
    file: the tiny-reranker recipe, `python -c "...; from` + newline + `tests...`, was a
    SyntaxError; `RMH_E2E_LLM=1 python -m pytest -q` + newline ran the whole suite. Usage
    synopses (`[--option ...]`) are not commands to paste."""
    prose = re.sub(r"^```.*?^```", "", README, flags=re.S | re.M)
    command = re.compile(r"\s*(?:[A-Z0-9_]+=\S*\s+)*(?:python3? |pip |rmh\b)")
    wrapped = [span for span in re.findall(r"(?<!`)`([^`]+)`(?!`)", prose)
               if "\n" in span and command.match(span) and " [-" not in span]
    assert wrapped == []
