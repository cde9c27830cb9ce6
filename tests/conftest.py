"""Suite-wide settings.

Under CI (`CI=true`, as `.ci/run` is started) hypothesis runs derandomized: the same examples on
every run, so a landing never depends on luck. Locally it explores with fresh random seeds,
which is how new edge cases get found (and then pinned as plain tests).

No test writes to the real home: the user-level embedding cache (harness/config.py [embed]
shared_cache) is pointed at a file in the test's own tmp folder through $RMH_EMBED_CACHE, and
$XDG_CACHE_HOME at a folder beside it; the embedder's saved optimized graph ([embed]
graph_cache, ~90 MB) at one folder for the whole session through $RMH_GRAPH_CACHE;
subprocesses inherit all three (tests that build a child's environment from scratch pass
them on).

The suite starts hundreds of `python -m harness` and sandbox processes. Where bytecode writing
is off (PYTHONDONTWRITEBYTECODE, common in containers and CI images) each of them would compile
every module of ours from source again (about a quarter of a CLI process's CPU): the session
compiles our packages once at its start (`__pycache__`, git-ignored; a read-only checkout just
skips it). Python reads a `.pyc` only while it matches its source, so nothing runs stale code.
Under pytest-xdist (the README's command: `-n 2`) the controller compiles before it starts the
workers (its session start runs ours first), so the workers skip it.
"""

from __future__ import annotations

import compileall
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
    settings.load_profile("ci")


ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("harness", "vault", "sandbox", "rpc", "bench")


def pytest_sessionstart(session: pytest.Session) -> None:
    """Bytecode for our packages, for the processes the tests start (module docstring)."""
    if os.environ.get("PYTEST_XDIST_WORKER"):  # the controller compiled before it started us
        return
    for package in PACKAGES:
        try:
            compileall.compile_dir(ROOT / package, quiet=2, workers=1)
        except OSError:  # a read-only checkout: the processes compile from source
            return


def pytest_sessionfinish(session: pytest.Session) -> None:
    """The shared fork servers of `tests.forks.run_cli` end with the session."""
    from tests import forks

    forks.close_shared()


@pytest.fixture(scope="session")
def _graph_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One folder for the embedder's optimized graph (~90 MB) for the whole session."""
    return tmp_path_factory.mktemp("rmh-graph-cache")


@pytest.fixture(autouse=True)
def _no_real_home_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, _graph_cache: Path
                        ) -> Iterator[None]:
    monkeypatch.setenv("RMH_EMBED_CACHE", str(tmp_path / "rmh-cache" / "embeddings.sqlite"))
    monkeypatch.setenv("RMH_GRAPH_CACHE", str(_graph_cache))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    yield
