"""The Snakemake workflow end to end on the demo, and its lint and formatting."""

from __future__ import annotations

import base64
import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import DEMO_LEFT_OUT, REPO, demo_with_raw_of, job_pids
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
    assert built == set(subsets) - set(DEMO_LEFT_OUT)  # all but the subsets the demo leaves out on purpose
    assert all(row["ok"] == row["paths"] and not row["missing"] for row in rows)
    assert sum(row["paths"] for row in rows) > 100
    assert "2D_Task/USData: not built: raw missing" in summary
    plan = json.loads((workdir / "results" / "plan.json").read_text())
    assert [p["subset"] for p in plan] == subsets
    usdata = next(p for p in plan if p["subset"] == "2D_Task/USData")
    assert "from the public Google Drive link" in usdata["instructions"]["usdata"]
    assert "## usdata: missing" in (workdir / "results" / "not-built.md").read_text()
    job_log = (workdir / "logs" / "convert" / "2D_Task" / "BloodMNIST" / "npz_unpack_2d.0-of-1.log").read_text()
    assert re.search(r"progress 2D_Task/BloodMNIST/npz_unpack_2d shard 1/1: (\d+)/\1 items \(100\.0%\)", job_log)

    again = _run(workdir)
    assert "Nothing to be done" in again.stdout + again.stderr


@pytest.mark.workflow
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


@pytest.mark.workflow
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


@pytest.mark.workflow
def test_naming_a_subset_whose_raw_is_missing_stops_with_instructions(workdir):
    done = _run(workdir, "--config", "subsets=['USData']", check=False)
    assert done.returncode != 0
    assert "2D_Task/USData: not built: raw missing" in done.stderr
    assert "How to get usdata" in done.stderr


@pytest.mark.workflow
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


def _small_workdir(tmp_path: Path, demo_template: Path, sources: set[str]) -> Path:
    """A work folder with the shipped config and a demo whose raw root holds only `sources`' downloads."""
    workdir = tmp_path / "w"
    workdir.mkdir()
    (workdir / "config.yaml").write_text((REPO / "config.yaml").read_text())
    demo_with_raw_of(workdir / "demo", demo_template, sources)
    return workdir


@pytest.mark.workflow
def test_a_record_renamed_in_the_release_files_rebuilds_the_conversion_that_reads_them(tmp_path, demo_template):
    workdir = _small_workdir(tmp_path, demo_template, {"vqa_rad", "kvasir_v2"})
    selection = ("--config", "splits=all", 'subsets=["2D_Task/VQA-RAD", "2D_Task/Kvasir"]')
    _run(workdir, *selection)
    data = workdir / "demo" / "DATA_BASEDIR"
    # Record-driven names (release/releasenames.py): a VQA-RAD test image is named by its task JSON record,
    # a Kvasir train image by its Train_Data JSONL record. Rename one image in each release file.
    renames = {
        data / "2D_Task" / "VQA-RAD" / "VQA_test.json": ("head/synpic54610.png", "head/renamed_54610.png"),
        data / "Train_Data" / "2D_Task" / "Kvasir" / "Kvasir_train.jsonl": (
            "datasets/train/polyps/06a3b9e0-poly-4c1d.jpg",
            "datasets/train/polyps_renamed/06a3b9e0-poly-4c1d.jpg",
        ),
    }
    for path, (old, new) in renames.items():
        text = path.read_text()
        assert old in text
        path.write_text(text.replace(old, new))
    dry = _run(workdir, *selection, "-n")
    again = set(re.findall(r"output: results/convert/(\S+)\.tsv", dry.stdout))
    # The conversions that read the renamed records, and no other (Kvasir's test images come from the raw
    # folders). A train conversion reads every Train_Data JSONL to find its subset's records, so VQA-RAD's
    # is redone too.
    assert again == {
        "2D_Task/VQA-RAD/parquet_records.0-of-1",
        "2D_Task/Kvasir/train_images.0-of-1",
        "2D_Task/VQA-RAD/parquet_records_train.0-of-1",
    }, dry.stdout
    _run(workdir, *selection)  # validation passes: every renamed path resolves
    head = data / "2D_Images" / "VQA-RAD" / "test" / "head"
    assert (head / "renamed_54610.png").read_bytes() == (head / "synpic54610.png").read_bytes()  # the first build's
    polyp = "06a3b9e0-poly-4c1d.jpg"
    train = data / "2D_Images" / "kvasir-dataset" / "datasets" / "train"
    raw = workdir / "demo" / "raw" / "kvasir-dataset" / "kvasir-dataset-v2"
    assert (train / "polyps_renamed" / polyp).read_bytes() == (raw / "polyps" / polyp).read_bytes()


@pytest.mark.workflow
def test_a_train_build_after_a_test_only_build_of_other_subsets_checks_those_again(tmp_path, demo_template):
    workdir = _small_workdir(tmp_path, demo_template, {"vqa_rad", "aptos2019"})
    _run(workdir, "--config", 'subsets=["2D_Task/VQA-RAD"]')  # test only: VQA-RAD's train parquet not looked for
    report = workdir / "results" / "check" / "sources" / "vqa_rad.json"
    assert [f["id"] for f in json.loads(report.read_text())["files"]] == ["test"]
    # splits: all asks VQA-RAD's source for its train file too: the run-wide summaries may not trust the
    # test-only check of it (before: `unexpected StopIteration` in validation_summary, on every rerun).
    _run(workdir, "--config", "splits=all", 'subsets=["2D_Task/APTOS"]')
    assert [f["id"] for f in json.loads(report.read_text())["files"]] == ["test", "train"]
    summary = json.loads((workdir / "results" / "validation" / "summary.json").read_text())
    assert {row["subset"] for row in summary["files"]} == {"2D_Task/APTOS", "2D_Task/VQA-RAD"}
    again = _run(workdir, "--config", "splits=all", 'subsets=["2D_Task/APTOS"]')
    assert "Nothing to be done" in again.stdout + again.stderr


def _incomplete_outputs(workdir: Path) -> list[Path]:
    """The outputs Snakemake marked as being made (`.snakemake/incomplete/`, base64 names)."""
    folder = workdir / ".snakemake" / "incomplete"
    markers = folder.iterdir() if folder.is_dir() else []
    return [workdir / base64.b64decode(m.name).decode() for m in markers if m.name != "migration_underway"]


@pytest.mark.workflow
def test_after_a_sigkill_of_snakemake_itself_unlock_and_the_usual_command_resume(tmp_path, demo_template):
    workdir = _small_workdir(tmp_path, demo_template, {"aptos2019"})
    command = [*SNAKEMAKE, "-s", str(REPO / "Snakefile"), "--directory", str(workdir), "--cores", "2"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 300
    while not job_pids(workdir) and time.monotonic() < deadline:  # the first jobs: the raw checks
        time.sleep(0.02)
    process.kill()  # SIGKILL of the main process alone: its running jobs go on and finish their outputs
    process.wait()
    while job_pids(workdir) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not job_pids(workdir)
    finished = [path for path in _incomplete_outputs(workdir) if path.is_file()]
    assert finished, "no job was running when Snakemake was killed"  # whole, but marked incomplete
    _run(workdir, "--unlock")  # what docs/guide/cluster.md says to type
    done = _run(workdir)  # the usual command (before: IncompleteFilesException, results/check/sources/*.json)
    assert "task files resolve every path" in done.stderr
    assert not _incomplete_outputs(workdir)
