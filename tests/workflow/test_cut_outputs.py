"""How a run is cut into jobs follows its cores (issue 42: the allocation, `cores:`, `shards:`), so it must not
show in what the run writes: the same subsets built by `snakemake --cores 2` cut into many shards and cut into
one each write the same DATA_BASEDIR byte for byte (SHA-256 of every file, links by their target) and the same
fingerprints table. tests/unit/sizing/test_shard_cut.py compares the conversions' outputs called directly;
this runs the workflow: its shard counts, the shards' manifests, and the validation and fingerprints that
gather them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import REPO
from digests import tree_digests

# One subset of each way a conversion is cut: files (APTOS), npz rows (BloodMNIST), boxes of a CSV (VinDr-CXR),
# volumes, test and train (CT-RATE).
SUBSETS = ["2D_Task/APTOS", "2D_Task/BloodMNIST", "2D_Task/VindrCXR", "3D_Task/CT_RATE"]
MANY = 3


def _build(workdir: Path, demo_template: Path, shards: int) -> Path:
    workdir.mkdir(parents=True)
    values = yaml.safe_load((REPO / "config.yaml").read_text())
    values.update(subsets=SUBSETS, splits="all", shards=dict.fromkeys(SUBSETS, shards))
    (workdir / "config.yaml").write_text(yaml.safe_dump(values))
    subprocess.run(["cp", "-a", str(demo_template), str(workdir / "demo")], check=True)
    command = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--directory", str(workdir)]
    done = subprocess.run([*command, "--cores", "2"], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-5000:]
    return workdir


def _tree(workdir: Path) -> dict[str, str]:
    return tree_digests(workdir / "demo" / "DATA_BASEDIR", links_from=workdir)


def _manifests(workdir: Path) -> list[str]:
    return sorted(p.name for p in (workdir / "results" / "convert").rglob("*.tsv"))


@pytest.mark.workflow
def test_a_run_cut_into_many_shards_writes_the_bytes_of_a_run_cut_into_one(tmp_path, demo_template):
    few = _build(tmp_path / "few", demo_template, 1)
    many = _build(tmp_path / "many", demo_template, MANY)
    # the cuts differ: one job per conversion, against several for each conversion with more than one item
    assert all(name.endswith(".0-of-1.tsv") for name in _manifests(few))
    assert len(_manifests(few)) == 7  # APTOS's test conversion; test and train of the three others
    assert any(name.endswith(f"-of-{MANY}.tsv") for name in _manifests(many))
    assert len(_manifests(many)) > 2 * len(_manifests(few))
    one, cut = _tree(few), _tree(many)
    assert len([name for name in one if name.endswith(".png")]) > 50  # the four subsets' images, test and train
    assert sorted(cut) == sorted(one)
    assert [name for name in one if cut[name] != one[name]] == []
    fingerprints = "results/fingerprints.tsv"
    assert (many / fingerprints).read_bytes() == (few / fingerprints).read_bytes()
