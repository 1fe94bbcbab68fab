"""The Snakemake workflow end to end on the demo, and its lint and formatting."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, demo_with_raw_of
from preprocess.demo import LEFT_OUT
from preprocess.registry.loader import load_registry

SNAKEMAKE = [sys.executable, "-m", "snakemake"]


def _run(workdir: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    command = [*SNAKEMAKE, "-s", str(REPO / "Snakefile"), "--directory", str(workdir), "--cores", "2", *args]
    done = subprocess.run(command, capture_output=True, text=True)
    if check and done.returncode != 0:
        pytest.fail(f"snakemake failed:\n{done.stdout[-3000:]}\n{done.stderr[-6000:]}")
    return done


@pytest.fixture
def workdir(tmp_path, demo) -> Path:
    (tmp_path / "config.yaml").write_text((REPO / "config.yaml").read_text())
    return tmp_path


def test_demo_builds_and_every_path_resolves(built_demo):
    workdir, done = built_demo.workdir, built_demo.build
    summary = (workdir / "results" / "validation" / "summary.txt").read_text()
    assert "task files resolve every path" in done.stderr
    rows = json.loads((workdir / "results" / "validation" / "summary.json").read_text())["files"]
    built = {row["subset"] for row in rows}
    assert {
        "2D_Task/APTOS",
        "2D_Task/Kvasir",
        "2D_Task/MIMIC-CXR-T",
        "2D_Task/ChexpertPlus",
        "Text_Task/PubMedQA",
    } <= built
    subsets = [s.key for s in load_registry().subsets]
    assert built == set(subsets) - set(LEFT_OUT)  # all but the subsets the demo leaves out on purpose
    assert all(row["ok"] == row["paths"] and not row["missing"] for row in rows)
    assert sum(row["paths"] for row in rows) > 100
    assert "2D_Task/USData: not built: raw missing" in summary
    plan = json.loads((workdir / "results" / "plan.json").read_text())
    assert [p["subset"] for p in plan] == subsets
    usdata = next(p for p in plan if p["subset"] == "2D_Task/USData")
    assert "Request the ultrasound images from the authors" in usdata["instructions"]["usdata"]
    assert "## usdata: missing" in (workdir / "results" / "not-built.md").read_text()
    job_log = (workdir / "logs" / "convert" / "2D_Task" / "BloodMNIST" / "npz_unpack_2d.0-of-1.log").read_text()
    assert re.search(r"progress 2D_Task/BloodMNIST/npz_unpack_2d shard 1/1: (\d+)/\1 items \(100\.0%\)", job_log)

    again = _run(workdir)
    assert "Nothing to be done" in again.stdout + again.stderr


def test_splits_all_builds_the_train_split_and_every_train_data_path_resolves(workdir):
    subsets = '["2D_Task/BloodMNIST", "2D_Task/Gastrointestinal", "2D_Task/ChestImagrome", "3D_Task/CT_RATE"]'
    _run(workdir, "--config", "splits=all", f"subsets={subsets}")
    summary = json.loads((workdir / "results" / "validation" / "summary.json").read_text())
    train = [row for row in summary["files"] if row["file"].startswith("Train_Data/")]
    assert len(train) == 4 and all(row["ok"] == row["paths"] > 0 and not row["not_built"] for row in train)
    assert summary["unproduced"] == []  # the silver crops the JSONL names are all built
    manifests = workdir / "results" / "convert" / "3D_Task" / "CT_RATE"
    assert sorted(p.name for p in manifests.iterdir()) == [
        "volumes.0-of-2.tsv", "volumes.1-of-2.tsv", "volumes_train.0-of-2.tsv", "volumes_train.1-of-2.tsv"
    ]  # fmt: skip


def test_deleting_a_raw_file_is_seen_on_the_next_run(tmp_path, demo_template):
    workdir = tmp_path / "w"
    workdir.mkdir()
    (workdir / "config.yaml").write_text((REPO / "config.yaml").read_text())
    demo_with_raw_of(workdir / "demo", demo_template, {"aptos2019"})  # APTOS built, the others raw missing
    _run(workdir)
    assert (workdir / "demo" / "DATA_BASEDIR" / "2D_Images" / "APTOS").is_dir()
    (workdir / "demo" / "raw" / "aptos2019-blindness-detection" / "train_images" / "6cd606dc52e9.png").unlink()
    _run(workdir)
    check = json.loads((workdir / "results" / "check" / "sources" / "aptos2019.json").read_text())
    assert check["status"] == "incomplete"
    plan = json.loads((workdir / "results" / "plan.json").read_text())
    aptos = next(p for p in plan if p["subset"] == "2D_Task/APTOS")
    assert aptos["action"] == "skip" and aptos["reason"] == "raw incomplete"


def test_naming_a_subset_whose_raw_is_missing_stops_with_instructions(workdir):
    done = _run(workdir, "--config", "subsets=['USData']", check=False)
    assert done.returncode != 0
    assert "2D_Task/USData: not built: raw missing" in done.stderr
    assert "How to get usdata" in done.stderr


def test_lint_is_clean(tmp_path):
    for folder in ("raw", "data"):  # a config of the user's kind: real folders, no demo
        (tmp_path / folder).mkdir()
    config = tmp_path / "user.yaml"
    config.write_text(
        json.dumps({"raw_root": str(tmp_path / "raw"), "data_basedir": str(tmp_path / "data"), "subsets": "all"})
    )
    command = [*SNAKEMAKE, "--lint", "-s", str(REPO / "Snakefile"), "--directory", str(tmp_path)]
    done = subprocess.run([*command, "--configfile", str(config)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Lints for" not in done.stdout + done.stderr


def test_snakefmt_and_ruff_are_clean():
    snakefmt = shutil.which("snakefmt", path=str(Path(sys.executable).parent))
    done = subprocess.run([snakefmt, "--check", "Snakefile", "workflow"], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    done = subprocess.run([sys.executable, "-m", "ruff", "check", "."], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout
