"""The rehearsal at real sizes (benchmarks/rehearsal.py, `make rehearsal`), small: one source (APTOS, RGB PNG
2416x1736) at two real-size items through the workflow, about 40 s. The full rehearsal (every source) takes
minutes and stays out of the suite; its output is in docs/benchmarks.md."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys

import pytest
from PIL import Image

from conftest import REPO

SCRIPT = REPO / "benchmarks" / "rehearsal.py"
ITEMS = 2


def _module():
    spec = importlib.util.spec_from_file_location("rehearsal", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def rehearsal(tmp_path_factory):
    folder = tmp_path_factory.mktemp("rehearsal")
    command = [sys.executable, str(SCRIPT), "--items", str(ITEMS), "--sources", "aptos2019", "--keep", str(folder)]
    done = subprocess.run([*command, "--json", str(folder / "rows.json")], capture_output=True, text=True)
    assert done.returncode in (0, 1), done.stdout[-3000:] + done.stderr[-3000:]  # 1: a bar fails, reported
    return folder, done, json.loads((folder / "rows.json").read_text())


@pytest.mark.workflow
def test_the_rehearsal_prints_a_row_per_kind_and_per_job(rehearsal):
    folder, done, rows = rehearsal
    assert "kind/dataset" in done.stdout and "peak MB" in done.stdout
    assert [k["key"] for k in rows["kinds"]] == ["image_folder/aptos2019"]
    (job,) = rows["jobs"]
    assert job["manifest"] == "results/convert/2D_Task/APTOS/image_folder.0-of-1.tsv"
    assert "2D_Task/APTOS/image_folder.0-of-1" in done.stdout
    # What it read is Snakemake's own record of the job: its benchmark file and the build's log.
    assert (folder / "build/results/benchmarks/convert/2D_Task/APTOS/image_folder.0-of-1.tsv").is_file()
    assert "resources:" in (folder / "build/snakemake.log").read_text()
    # The items and bytes are those of the images the fakes hold (APTOS test images are PNG copies, one each).
    images = sorted((folder / "fakes/raw/aptos2019-blindness-detection").rglob("*.png"))
    assert job["items"] == len(images) == ITEMS
    assert all(Image.open(p).size == (2416, 1736) for p in images)
    assert job["bytes"] == sum(p.stat().st_size for p in images)
    assert job["wall_s"] > 0
    # The peak is the kernel's high-water mark the job logged, not only Snakemake's 0.5 s samples, which miss
    # a job this short (0.6 MB once): a Python process with numpy and Pillow loaded holds well over 30 MB.
    log = (folder / "build/logs/convert/2D_Task/APTOS/image_folder.0-of-1.log").read_text()
    assert "peak memory: this process " in log
    assert job["max_rss_mb"] >= max(30, job["sampled_rss_mb"])


@pytest.mark.workflow  # its fixture runs the workflow (the rehearsal builds through Snakemake)
def test_each_job_declares_enough_memory_and_time(rehearsal):
    _, _, rows = rehearsal
    for job in rows["jobs"]:
        assert job["max_rss_mb"] <= job["declared_mem_mb"], job
        assert job["declared_runtime_min"] * 60 >= 2 * job["wall_s"], job


@pytest.mark.workflow  # its fixture runs the workflow (the rehearsal builds through Snakemake)
def test_no_job_declares_more_than_4x_its_peak_plus_500_mb(rehearsal):
    _, _, rows = rehearsal
    for job in rows["jobs"]:
        assert job["declared_mem_mb"] <= 4 * job["max_rss_mb"] + 500, job


def test_declared_resources_are_read_from_each_convert_job_of_snakemakes_log():
    log = """
[Thu Dec  3 09:07:40 2026]
localrule convert:
    input: results/check/sources/aptos2019.json
    output: results/convert/2D_Task/APTOS/image_folder.0-of-1.tsv
    wildcards: group=2D_Task, folder=APTOS, conversion=image_folder, shard=0, shards=1
    resources: tmpdir=/tmp, runtime=60, mem_mb=1000, mem=1 GB, mem_mib=954

rule convert:
    output: results/convert/3D_Task/X/volume_slices.1-of-3.tsv
    resources: tmpdir=/tmp, mem_mb=2500, mem_mib=2385, runtime=12
rule validate_subset:
    output: results/validation/subsets/2D_Task/APTOS.json
    resources: tmpdir=/tmp, runtime=10, mem_mb=1000
"""
    found = _module().declared_resources(log)
    assert set(found) == {
        "results/convert/2D_Task/APTOS/image_folder.0-of-1.tsv",
        "results/convert/3D_Task/X/volume_slices.1-of-3.tsv",
    }
    assert found["results/convert/3D_Task/X/volume_slices.1-of-3.tsv"]["mem_mb"] == "2500"
    assert found["results/convert/3D_Task/X/volume_slices.1-of-3.tsv"]["runtime"] == "12"
    assert found["results/convert/2D_Task/APTOS/image_folder.0-of-1.tsv"]["runtime"] == "60"
