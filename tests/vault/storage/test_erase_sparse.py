"""The erasure proof and sparse files: a file of a terabyte that is all holes but a few
blocks is read in the time its data takes (storage/mentions.py `data_extents`), and finds
exactly what a dense file of the same data finds. Before, the proof read every zero byte:
`rmh forget` on a vault holding a 1 TB sparse file ran for hours."""

from __future__ import annotations

import json
import random
import resource
import subprocess
import sys
from pathlib import Path

import pytest

TB = 1 << 40
GAP = 4096  # zero bytes between two chunks in the dense twin: beyond any context looked at
CPU_S = 60  # the child's CPU limit: reading 1 TB takes hours

CHILD = """
import json, sys
from pathlib import Path
from vault.storage.erase import scan
files, needles, subject = json.loads(sys.argv[1])
out = {}
for f in files:
    proof = scan([Path(f)], needles, subject)
    out[f] = [proof.files, sum(proof.found.values()), list(proof.unread)]
print(json.dumps(out))
"""

WORDS = ["Quillon", "quillon's", "the launch code is under the loose floorboard", "xQuillon",
         "notes/Quillon.md", "filler", "QUILLON", "\x01\x02", "é", "\n", " ", "Quillonx"]


def _chunks(rng: random.Random) -> list[bytes]:
    return ["".join(rng.choice(WORDS) + rng.choice([" ", "", "\n", "\t"])
                    for _ in range(rng.randint(1, 12))).encode("utf-8")
            for _ in range(rng.randint(1, 6))]


def _sparse(path: Path, chunks: list[bytes], rng: random.Random) -> None:
    """The chunks at scattered offsets of a 1 TB file: the first at 0, the last ending at
    its end, the others anywhere (inside a block or across two)."""
    with open(path, "wb") as fh:
        fh.truncate(TB)
        fh.write(chunks[0])
        spots = sorted(rng.sample(range(1, TB // (1 << 30) - 1), len(chunks)))
        for chunk, spot in zip(chunks[1:-1], spots, strict=False):
            fh.seek(spot * (1 << 30) + rng.randrange(0, 1 << 20))
            fh.write(chunk)
        if len(chunks) > 1:
            fh.seek(TB - len(chunks[-1]))
            fh.write(chunks[-1])


def _dense(path: Path, chunks: list[bytes]) -> None:
    path.write_bytes((b"\0" * GAP).join(chunks))


@pytest.mark.parametrize("seed", range(6))
def test_the_proof_reads_a_sparse_terabyte_by_its_data_and_counts_as_on_dense_bytes(
        tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    chunks = _chunks(rng)
    sparse, dense = tmp_path / "sparse.md", tmp_path / "dense.md"
    try:
        _sparse(sparse, chunks, rng)
    except OSError as exc:  # a file system with no files of 1 TB
        pytest.skip(f"no sparse terabyte here: {exc}")
    _dense(dense, chunks)
    needles = ["the launch code is under the loose floorboard", "notes/Quillon.md"]

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_CPU, (CPU_S, CPU_S))

    run = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps([[str(sparse), str(dense)], needles,
                                                  "Quillon"])],
        capture_output=True, text=True, preexec_fn=limit, check=False,
        cwd=Path(__file__).resolve().parents[3])  # the checkout's rmh first on sys.path
    assert run.returncode == 0, f"scan of a sparse 1 TB file: rc {run.returncode} " \
        f"(CPU limit {CPU_S} s) {run.stderr[-500:]}"
    counts = json.loads(run.stdout)
    assert counts[str(sparse)] == counts[str(dense)]
    assert counts[str(dense)][0] == 1
