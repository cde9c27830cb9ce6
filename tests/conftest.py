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

A test session leaves nothing in the temporary folder. The controller (or a session without
xdist) makes one folder of its own there (`rmh-tests-*`, mode 1777 like /tmp: the
unprivileged test users write in it too) and points TMPDIR (inherited by the workers and
every process a test starts) and `tempfile` at it; pytest's own `tmp_path` folders stay where
they were (PYTEST_DEBUG_TEMPROOT, pytest's retention keeps its last three). At the session's
end, anything a test, a helper or a process it started left in that folder (`LEFT_ALLOWED`
aside) is listed and fails the session; the folder is removed either way. Before (HOUSE41)
a session could leave an `rmh-forks-*` folder in /tmp (the shared fork server of a server
killed at a timeout, and of every script that used them), with nothing to notice it.
"""

from __future__ import annotations

import compileall
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
    settings.load_profile("ci")


ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("harness", "vault", "sandbox", "rpc", "bench")


# What may stay in a session's temporary folder (removed with it): onnxruntime (1.2x's
# telemetry library) writes `$TMPDIR/.ses` at its import, before any API could turn it off;
# a local Ray cluster keeps its session's logs in `$TMPDIR/ray` after `ray.shutdown()` by
# design (tests/harness/test_ray_index.py; another worker's cluster may still be using it).
LEFT_ALLOWED = frozenset({".ses", "ray"})
_OWN_TMP = "RMH_TESTS_TMPDIR"  # the session's folder, for the workers' and our own checks


def pytest_configure(config: pytest.Config) -> None:
    """The session's own temporary folder (module docstring); made by the controller only,
    before pytest makes its `tmp_path` root and before any worker starts."""
    if os.environ.get("PYTEST_XDIST_WORKER") or os.environ.get(_OWN_TMP):
        return
    outer = tempfile.gettempdir()
    os.environ.setdefault("PYTEST_DEBUG_TEMPROOT", outer)
    own = tempfile.mkdtemp(prefix="rmh-tests-", dir=outer)
    os.chmod(own, 0o1777)
    os.environ[_OWN_TMP] = own
    os.environ["TMPDIR"] = own
    tempfile.tempdir = own


def pytest_unconfigure(config: pytest.Config) -> None:
    """The session's folder goes, whatever happened (`pytest_sessionfinish` judged it)."""
    own = os.environ.get(_OWN_TMP)
    if own and not os.environ.get("PYTEST_XDIST_WORKER") and tempfile.tempdir == own:
        shutil.rmtree(own, ignore_errors=True)
        os.environ.pop(_OWN_TMP, None)


def left_in(folder: str) -> list[str]:
    """What lies in `folder` but `LEFT_ALLOWED`, sorted."""
    try:
        return sorted(set(os.listdir(folder)) - LEFT_ALLOWED)
    except FileNotFoundError:
        return []


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
    """The shared fork servers of `tests.forks.run_cli` end with the session; then whatever
    the session left in its temporary folder fails it (module docstring)."""
    from tests import forks

    forks.close_shared()
    own = os.environ.get(_OWN_TMP)
    if not own or os.environ.get("PYTEST_XDIST_WORKER") or tempfile.tempdir != own:
        return
    left = left_in(own)
    if left:
        print(f"\nthe test session left these in its temporary folder {own}: "
              f"{', '.join(left[:20])}" + (" ..." if len(left) > 20 else ""), file=sys.stderr)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


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
