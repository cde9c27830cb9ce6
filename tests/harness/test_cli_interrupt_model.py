"""Ctrl-C while `rmh search` starts onnxruntime: the CLI's usual interruption (one line "rmh:
interrupted", exit 1), not "model unavailable: model.onnx (initialization failed)" (session
26). The SIGINT is made deterministic by an onnxruntime whose import fails as pybind11's
module init makes it fail when a SIGINT lands in it: ImportError caused by the
KeyboardInterrupt."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.harness.test_cli_notes import ROOT, rmh

pytestmark = pytest.mark.slow

FAKE = 'raise ImportError("initialization failed") from KeyboardInterrupt()\n'


def test_an_interrupted_model_start_is_an_interruption(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    assert rmh("--vault", str(root), "init").returncode == 0
    (root / "Apples.md").write_text("Apples grow on trees.\n", encoding="utf-8")
    fake = tmp_path / "fake" / "onnxruntime"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text(FAKE, encoding="utf-8")
    env = {"PYTHONPATH": os.pathsep.join([str(fake.parent), str(ROOT)])}
    for args in (("search", "how do apples grow"), ("search", "trees", "--json")):
        r = rmh("--vault", str(root), *args, env=env)
        assert r.returncode == 1 and r.stderr.endswith("\nrmh: interrupted\n"), (args, r.stderr)
        assert "model_unavailable" not in r.stdout and "model unavailable" not in r.stderr
        assert "Traceback" not in r.stderr
