"""The demo, train split included (`splits: all`), built through the SLURM profile equals the local build byte
for byte, and every Train_Data JSONL path resolves.

Needs a running cluster (`.ci/slurm.sh start`, as `make slurm-test` and CI do); skipped elsewhere.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO
from preprocess.demo import write_demo

pytestmark = pytest.mark.skipif(
    os.environ.get("MEDHEB_SLURM") != "1", reason="set MEDHEB_SLURM=1 with a running cluster (make slurm-test)"
)


def _build(workdir: Path, *options: str) -> subprocess.CompletedProcess:
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "config.yaml").write_text((REPO / "config.yaml").read_text())
    write_demo(workdir / "demo")  # as `make demo` does before it runs Snakemake
    command = [
        "timeout",
        "-s",
        "INT",
        "-k",
        "60",
        "1800",
        sys.executable,
        "-m",
        "snakemake",
        "-s",
        str(REPO / "Snakefile"),
        "--directory",
        str(workdir),
        *options,
    ]
    done = subprocess.run(command, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-5000:]
    return done


def _tree(workdir: Path) -> dict[str, str]:
    """Every file of the built DATA_BASEDIR by content; links by their target relative to the workdir."""
    base = workdir / "demo" / "DATA_BASEDIR"
    found = {}
    for path in sorted(base.rglob("*")):
        relative = str(path.relative_to(base))
        if path.is_symlink():
            found[relative] = "link:" + os.path.relpath(os.readlink(path), workdir)
        elif path.is_file():
            found[relative] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def test_slurm_build_equals_local_build(tmp_path):
    before = set(subprocess.run(["sacct", "-n", "-X", "-o", "JobID"], capture_output=True, text=True).stdout.split())
    _build(tmp_path / "local", "--cores", "2", "--config", "splits=all")
    _build(tmp_path / "slurm", "--profile", str(REPO / "profiles" / "slurm-ci"), "--config", "splits=all")
    local, cluster = _tree(tmp_path / "local"), _tree(tmp_path / "slurm")
    assert len(local) > 500
    assert cluster == local
    summary = json.loads((tmp_path / "slurm" / "results" / "validation" / "summary.json").read_text())
    train = [row for row in summary["files"] if row["file"].startswith("Train_Data/")]
    train = [row for row in train if not row["subset"].startswith("Text_Task/")]  # a text file names no image
    assert len(train) >= 5 and all(row["ok"] == row["paths"] > 0 and not row["not_built"] for row in train)
    assert summary["unproduced"] == [] and summary["failed"] == []
    jobs = subprocess.run(
        ["sacct", "-n", "-X", "-P", "-o", "JobID,JobName,State"], capture_output=True, text=True, check=True
    ).stdout.split()
    ours = [line.split("|") for line in jobs if line.split("|")[0] not in before]
    print(f"{len(ours)} SLURM jobs: " + ", ".join(sorted({state for _, _, state in ours})))
    assert len(ours) >= 100  # the whole demo: checks, plan, conversions, validations, contact sheets
    assert {state for _, _, state in ours} == {"COMPLETED"}
