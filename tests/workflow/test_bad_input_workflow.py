"""The bad-input corpus through Snakemake end to end: a build with the raw root read-only, the skip mode naming
exactly the planted faults, and a real run whose bad input names the rule's log."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from badinput import BLOOD, _edit_npz, _set_label, _tree
from conftest import REPO
from preprocess.registry.loader import load_registry


def _snakemake(workdir: Path, *args: str) -> subprocess.CompletedProcess:
    command = [
        sys.executable,
        "-m",
        "snakemake",
        "-s",
        str(REPO / "Snakefile"),
        "--directory",
        str(workdir),
        "--cores",
        "2",
        *args,
    ]
    return subprocess.run(command, capture_output=True, text=True)


def test_raw_root_read_only_build_succeeds_and_raw_is_untouched(built_demo):
    """The session's demo build ran with its raw root read-only (conftest.built_demo)."""
    assert "task files resolve every path" in built_demo.build.stderr
    assert built_demo.raw_after == built_demo.raw_before
    print(f"raw root {built_demo.raw_protection}")


@pytest.mark.registry_wide
@pytest.mark.workflow
def test_skip_mode_reports_exactly_the_planted_faults(tmp_path, demo_template):
    workdir = tmp_path / "w"
    workdir.mkdir()
    values = yaml.safe_load((REPO / "config.yaml").read_text())
    values["on_bad_input"] = "skip"
    faulty = {"ct_rate", "vindr_cxr", "kvasir_seg"}  # the sources of the three planted faults
    # every subset that reads them (a clean build of the whole demo is the session's shared one)
    values["subsets"] = [s.key for s in load_registry().subsets if faulty & set(s.source_ids)]
    (workdir / "config.yaml").write_text(yaml.safe_dump(values))
    subprocess.run(["cp", "-a", str(demo_template), str(workdir / "demo")], check=True)
    raw = workdir / "demo" / "raw"
    volume = next((raw / "CT-RATE").rglob("valid_2_b_1.nii.gz"))
    volume.write_bytes(volume.read_bytes()[:3000])  # 1: a truncated CT volume
    dicom = raw / "vindr-cxr" / "test" / "9f8e7d6c5b4a39281706f5e4d3c2b1a0.dicom"
    dicom.write_bytes(dicom.read_bytes()[:-3000])  # 2: a DICOM with its pixel data cut
    kvasir = raw / "Kvasir-SEG" / "images" / "cju0roawvklrq0799vmjorwfv.jpg"
    kvasir.unlink()  # 3: a test image listed in split.csv but absent
    overrides = yaml.safe_load((workdir / "demo" / "registry-overrides.yaml").read_text())
    for source in sorted(faulty):  # the counts now fall one short of the demo's own
        for spec in overrides["sources"][source]["files"]:
            spec.pop("md5", None)
            if "min_count" in spec:
                spec["min_count"] = 1
    (workdir / "demo" / "registry-overrides.yaml").write_text(yaml.safe_dump(overrides))
    done = _snakemake(workdir)
    assert done.returncode == 0, done.stderr[-4000:]
    summary = json.loads((workdir / "results" / "validation" / "summary.json").read_text())
    items = {Path(item["item"]).name: item["times"] for item in summary["skipped_items"]}
    # exactly the three planted items; the CT volume was left out once (its slices and DRR come from one read)
    assert items == {
        "valid_2_b_1.nii.gz": 1,
        "9f8e7d6c5b4a39281706f5e4d3c2b1a0.dicom": 1,
        "cju0roawvklrq0799vmjorwfv": 1,
    }
    assert "3 bad raw items skipped (on_bad_input: skip)" in done.stderr


@pytest.mark.workflow
def test_a_real_snakemake_run_with_a_bad_input_names_the_rule_log(tmp_path, demo_template):
    """`snakemake --cores 1` for BloodMNIST alone, its MedMNIST archive holding a label -1: the convert rule's log
    holds the message, the terminal its line naming the log and a closing hint naming that log, no traceback."""
    workdir = tmp_path / "w"
    workdir.mkdir()
    values = yaml.safe_load((REPO / "config.yaml").read_text())
    values.update(subsets=["2D_Task/BloodMNIST"], verify_checksums=False)
    (workdir / "config.yaml").write_text(yaml.safe_dump(values))
    subprocess.run(["cp", "-a", str(demo_template), str(workdir / "demo")], check=True)
    _edit_npz(workdir / "demo" / "raw" / BLOOD, "test_labels", _set_label(2, -1))
    raw = _tree(workdir / "demo" / "raw", ())
    command = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--directory", str(workdir)]
    done = subprocess.run([*command, "--cores", "1"], capture_output=True, text=True)
    assert done.returncode == 1, done.stderr[-4000:]
    log = "logs/convert/2D_Task/BloodMNIST/npz_unpack_2d.0-of-1.log"
    message = "bloodmnist_224.npz[test_labels] row 2: label [-1] is not a class index 0..7"
    text = (workdir / log).read_text()
    assert text.startswith("2D_Task/BloodMNIST/npz_unpack_2d shard 1/1:") and f"error: {workdir}/demo/raw/" in text
    assert text.rstrip().endswith(f"{message} (8 class names in the registry); the archive is not the published one, "
                                  "download it again")  # fmt: skip
    assert f"error in rule convert (log {log}): {workdir}/demo/raw/MedMNIST/{message}" in done.stderr
    assert f"\nA step failed (log: {log}): its error line above" in done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    assert not (workdir / "results" / "convert" / "2D_Task" / "BloodMNIST" / "npz_unpack_2d.0-of-1.tsv").exists()
    assert _tree(workdir / "demo" / "raw", ()) == raw
