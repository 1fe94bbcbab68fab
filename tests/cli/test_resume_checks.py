"""Issue 28, items 5-8, through the commands a user types: a resume that checks what it trusts, manifests whose
bytes do not depend on timing, bad headers and record paths that end in a named error (not a crash), and
`shards` keys that are checked.

A killed run is made by a driver that runs `python -m preprocess ...` and SIGKILLs its whole process group
right after the journal has recorded a chosen item (the batch written out first, as a kill just after a batch
would leave it). Each resume case ends equal, byte for byte, to a clean build of a fresh copy of the demo with
the final configuration: the DATA_BASEDIR tree and the shard's manifest.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import os
import shutil
import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import nibabel as nib
import numpy as np
import pytest
import yaml

from conftest import REPO, demo_config_file

DRIVER = textwrap.dedent(
    """
    import os, signal, sys
    from preprocess import cli
    from preprocess.convert import journal

    after, on_problem = int(os.environ.get("KILL_AFTER_ITEMS", "0")), os.environ.get("KILL_ON_PROBLEM") == "1"
    original, recorded = journal.Journal.record, [0]

    def record(self, label, rows, problems, *rest):
        original(self, label, rows, problems, *rest)
        recorded[0] += 1
        if (after and recorded[0] >= after) or (on_problem and problems):
            self.flush()
            os.killpg(0, signal.SIGKILL)

    journal.Journal.record = record
    sys.exit(cli.main(sys.argv[1:]))
    """
)
CT_RATE_VOLUME = "CT-RATE/dataset/valid_fixed/valid_1/valid_1_a/valid_1_a_1.nii.gz"  # the plan's first item
MANIFEST = Path("results/convert/3D_Task/CT_RATE/volumes.0-of-1.tsv")


def _convert(demo: Path, subset: str = "CT_RATE", workers: int = 1, kill: dict | None = None, **config):
    """`python -m preprocess convert SUBSET` on a demo copy (killed as `kill` says), its config `config`."""
    config_file = demo_config_file(demo, demo / "config.json", **config)
    command = [sys.executable, "-c", DRIVER, "convert", subset, "--config", str(config_file)]
    command += ["--results", str(demo / "results"), "--workers", str(workers)]
    env = {**os.environ, "PYTHONPATH": str(REPO), **(kill or {})}
    return subprocess.run(
        command, cwd=demo, env=env, capture_output=True, text=True, start_new_session=True, timeout=120
    )


def _tree(folder: Path) -> dict[str, bytes | str]:
    """Every file's bytes and every link's target under a folder."""
    found = {}
    for path in sorted(folder.rglob("*")):
        if path.is_symlink():
            found[str(path.relative_to(folder))] = os.readlink(path)
        elif path.is_file():
            found[str(path.relative_to(folder))] = path.read_bytes()
    return found


def _clean_build(tmp_path: Path, demo_template: Path, **config) -> Path:
    clean = tmp_path / "clean"
    shutil.copytree(demo_template, clean, symlinks=True)
    done = _convert(clean, **config)
    assert done.returncode == 0, done.stdout + done.stderr
    return clean


def _same_as_clean(demo: Path, clean: Path) -> None:
    assert (demo / MANIFEST).read_bytes() == (clean / MANIFEST).read_bytes()
    assert _tree(demo / "DATA_BASEDIR") == _tree(clean / "DATA_BASEDIR")
    assert not list((demo / "results").rglob("*.journal"))


def _journal(demo: Path) -> Path:
    return Path(str(demo / MANIFEST) + ".journal")


# --- 5: resume trusts only what is unchanged ------------------------------------------------------------------


def test_raising_max_volume_voxels_after_a_kill_converts_the_skipped_volumes(tmp_path, demo, demo_template):
    killed = _convert(demo, kill={"KILL_ON_PROBLEM": "1"}, on_bad_input="skip", max_volume_voxels=1000)
    assert killed.returncode == -9  # SIGKILL, right after the first volume was recorded as skipped
    assert "more than max_volume_voxels (1000)" in _journal(demo).read_text()
    done = _convert(demo, on_bad_input="skip")  # the limit raised back to its default
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    _same_as_clean(demo, _clean_build(tmp_path, demo_template, on_bad_input="skip"))
    assert "\tproblem\t" not in (demo / MANIFEST).read_text()


@pytest.mark.parametrize("damage", ["truncated", "same size, damaged"])
def test_a_volume_downloaded_again_after_a_kill_is_converted_again(tmp_path, demo, demo_template, damage):
    volume = demo / "raw" / CT_RATE_VOLUME
    good = volume.read_bytes()
    if damage == "truncated":
        volume.write_bytes(good[: len(good) // 2])
    else:  # the gzip stream's middle zeroed: the same size, only the mtime tells the copies apart
        middle = len(good) // 2
        volume.write_bytes(good[:middle] + bytes(64) + good[middle + 64 :])
    killed = _convert(demo, kill={"KILL_ON_PROBLEM": "1"}, on_bad_input="skip")
    assert killed.returncode == -9
    assert "valid_1_a_1.nii.gz" in _journal(demo).read_text()
    damaged_mtime = volume.stat().st_mtime_ns
    volume.write_bytes(good)  # downloaded again, later
    os.utime(volume, ns=(damaged_mtime + 10**9, damaged_mtime + 10**9))
    done = _convert(demo, on_bad_input="skip")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    _same_as_clean(demo, _clean_build(tmp_path, demo_template, on_bad_input="skip"))


def test_an_output_truncated_after_a_kill_is_written_again(tmp_path, demo, demo_template):
    killed = _convert(demo, kill={"KILL_AFTER_ITEMS": "1"})
    assert killed.returncode == -9
    batch = json.loads(_journal(demo).read_text().splitlines()[1])
    relative = batch[0][1][0][0]  # the first file of the first finished volume
    output = demo / "DATA_BASEDIR" / relative
    output.write_bytes(output.read_bytes()[:20])
    done = _convert(demo)
    assert done.returncode == 0, done.stdout + done.stderr
    _same_as_clean(demo, _clean_build(tmp_path, demo_template))


@pytest.mark.parametrize(
    "line", ['[["valid_1_a_1", 5, []]]', '{"items": []}', '[["x", [["/etc/passwd", "file", ""]], [], ""]]']
)
def test_a_journal_of_the_wrong_shape_is_named_and_the_shard_starts_afresh(tmp_path, demo, demo_template, line):
    killed = _convert(demo, kill={"KILL_AFTER_ITEMS": "1"})
    assert killed.returncode == -9
    journal = _journal(demo)
    journal.write_text(journal.read_text() + line + "\n")
    done = _convert(demo)
    assert done.returncode == 0, done.stdout + done.stderr
    output = done.stdout + done.stderr
    assert f"{journal}: line 3 is not a list of finished items" in output and "starting the shard afresh" in output
    assert "Traceback" not in output and "unexpected" not in output
    _same_as_clean(demo, _clean_build(tmp_path, demo_template))


# --- 6: the manifest's bytes do not depend on which worker finished first --------------------------------------


def test_two_clean_builds_with_skip_and_two_workers_give_the_same_manifest(tmp_path, demo_template):
    manifests = []
    for name in ("first", "second"):
        copy = tmp_path / name
        shutil.copytree(demo_template, copy, symlinks=True)
        done = _convert(copy, workers=2, on_bad_input="skip", max_volume_voxels=1000)  # every volume skipped
        assert done.returncode == 0, done.stdout + done.stderr
        manifests.append((copy / MANIFEST).read_text().replace(str(copy), "<demo>"))
    assert manifests[0] == manifests[1]
    rows = list(csv.reader(io.StringIO(manifests[0]), dialect="excel-tab"))[1:]
    assert [row[1] for row in rows] == ["problem"] * 3
    assert [row[0] for row in rows] == sorted(row[0] for row in rows)  # by item, not by completion
    assert rows[0][0].endswith("valid_1_a_1.nii.gz")


# --- 7: crashes -------------------------------------------------------------------------------------------------


def test_validate_names_a_record_path_with_a_lone_surrogate_and_finishes_the_table(tmp_path):
    from preprocess.demo.images import encode, pattern

    base = tmp_path / "DATA_BASEDIR"
    (base / "2D_Images" / "APTOS" / "train_images").mkdir(parents=True)
    (base / "2D_Images" / "APTOS" / "train_images" / "good.png").write_bytes(encode(pattern(1), "PNG"))
    (base / "2D_Task" / "APTOS").mkdir(parents=True)
    record = {"qry_inst": "q", "qry_text": "", "qry_img_path": "good.png", "tgt_text": ["a"]}
    text = json.dumps([record, {**record, "qry_img_path": "SURROGATE"}]).replace("SURROGATE", "\\ud800.png")
    (base / "2D_Task" / "APTOS" / "APTOS_test.json").write_text(text)
    report = tmp_path / "report.json"
    command = [sys.executable, "-m", "preprocess", "validate", str(base), "--subset", "2D_Task/APTOS"]
    done = subprocess.run([*command, "--report", str(report)], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1, done.stdout + done.stderr  # a check failed, the run finished
    assert "Traceback" not in done.stderr and "unexpected" not in done.stderr
    lines = done.stdout.splitlines()
    header = next(line.split() for line in lines if line.startswith("task file"))[2:]  # "task file" is two words
    row = next(line.split() for line in lines if line.startswith("2D_Task/APTOS/APTOS_test"))[1:]
    counts = dict(zip(header, row, strict=True))
    assert counts["records"] == "2" and counts["paths"] == "2" and counts["ok"] == "1" and counts["missing"] == "0"
    assert counts["unsafe"] == "1" and counts["result"] == "FAIL"
    assert "record 1, qry_img_path: unsafe: '\\ud800.png'" in done.stdout
    failures = json.loads(report.read_text())["files"][0]["failures"]
    assert [(f["record"], f["path"], f["problem"]) for f in failures] == [(1, "\ud800.png", "unsafe")]


def _nifti(path: Path, vox_offset: float = 352, flag: bytes = b"\0\0\0\0", extension: bytes = b"") -> Path:
    """A single-file NIfTI-1 of 5x4x3 int16 voxels whose header bytes are set by hand (nibabel would fix them)."""
    header = nib.Nifti1Header()
    header.set_data_dtype(np.int16)
    header.set_data_shape((5, 4, 3))
    header.set_sform(np.diag([1.0, 1.0, 1.0, 1.0]), code=1)
    block = bytearray(header.binaryblock)
    struct.pack_into("<f", block, 108, vox_offset)
    head = bytes(block) + flag + extension
    start = int(vox_offset) if np.isfinite(vox_offset) and vox_offset < 4096 else 352
    payload = head + bytes(max(0, start - len(head))) + np.arange(60, dtype="<i2").tobytes()
    path.write_bytes(gzip.compress(payload, mtime=0) if path.name.endswith(".gz") else payload)
    return path


@pytest.mark.parametrize(
    ("name", "fields", "message"),
    [
        ("inf.nii.gz", {"vox_offset": float("inf")}, r"unreadable NIfTI header \(OverflowError"),
        ("huge.nii.gz", {"vox_offset": 1e30}, r"puts the voxels at byte 1000000015047466219876688855040, beyond"),
        ("huge.nii", {"vox_offset": 1e30}, r"puts the voxels at byte 1000000015047466219876688855040, beyond"),
        ("far.nii.gz", {"vox_offset": 2.0**33}, r"puts the voxels at byte 8589934592, the file holds \d+ bytes"),
        ("far.nii", {"vox_offset": 2.0**33}, r"\d+ bytes, its header promises 8589934712 .*truncated"),
        # the extension flag set, no extension before the voxels at 368: nibabel reads no extension there
        (
            "flag.nii",
            {"vox_offset": 368, "flag": b"\1\0\0\0"},
            r"unreadable NIfTI header \((HeaderDataError|ValueError)",
        ),
        (  # an extension that claims 1000 bytes where 32 are
            "lying.nii.gz",
            {"vox_offset": 384, "flag": b"\1\0\0\0", "extension": struct.pack("<ii", 1000, 6) + b"x" * 24},
            r"unreadable NIfTI header \(HeaderDataError: failed to read extension content",
        ),
    ],
)
def test_slice_names_a_nifti_whose_header_is_corrupt(tmp_path, name, fields, message):
    import re

    path = _nifti(tmp_path / name, **fields)
    done = subprocess.run(
        [sys.executable, "-m", "preprocess", "slice", str(path), str(tmp_path / "out")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert re.search(rf"error: {re.escape(str(path))}: .*{message}", done.stderr), done.stderr
    assert "Traceback" not in done.stderr and "unexpected" not in done.stderr
    assert not (tmp_path / "out").exists()


def test_convert_names_a_volume_whose_voxels_start_past_its_end(demo):
    _nifti(demo / "raw" / CT_RATE_VOLUME, vox_offset=1e30)
    done = _convert(demo)
    assert done.returncode == 2
    assert f"{demo / 'raw' / CT_RATE_VOLUME}: its header puts the voxels at byte" in done.stderr
    assert "Traceback" not in done.stderr and "unexpected" not in done.stderr
    skipped = _convert(demo, on_bad_input="skip")
    assert skipped.returncode == 0
    problems = [row for row in (demo / MANIFEST).read_text().splitlines() if "\tproblem\t" in row]
    assert len(problems) == 1 and problems[0].startswith(str(demo / "raw" / CT_RATE_VOLUME))


HAN_SEG = "HaN-Seg/set_1/case_01/case_01_IMG_CT.nrrd"
HAN_SEG_MANIFEST = Path("results/convert/3D_Task/HaN-Seg/volume_slices.0-of-1.tsv")


def _rewrite_nrrd(path: Path, how: str) -> None:
    """The same header fields and data, written with CRLF line ends, or as a detached header (its data in a
    file beside it) that ends at the end of its file, with no blank line."""
    content = path.read_bytes()
    end = content.index(b"\n\n")
    header, data = content[:end], content[end + 2 :]
    if how == "crlf":
        path.write_bytes(header.replace(b"\n", b"\r\n") + b"\r\n\r\n" + data)
    else:
        path.with_suffix(".raw.gz").write_bytes(data)  # the header's encoding is gzip: the data file keeps it
        path.write_bytes(header + f"\ndata file: {path.with_suffix('.raw.gz').name}\n".encode())


@pytest.mark.parametrize("how", ["crlf", "detached"])
def test_nrrd_headers_that_simpleitk_and_pynrrd_read_are_converted(tmp_path, demo, demo_template, how):
    import SimpleITK as sitk

    path = demo / "raw" / HAN_SEG
    _rewrite_nrrd(path, how)
    assert sitk.ReadImage(str(path)).GetSize() == sitk.ReadImage(str(demo_template / "raw" / HAN_SEG)).GetSize()
    done = _convert(demo, "HaN-Seg")
    assert done.returncode == 0, done.stdout + done.stderr
    clean = tmp_path / "clean"
    shutil.copytree(demo_template, clean, symlinks=True)
    assert _convert(clean, "HaN-Seg").returncode == 0
    assert (demo / HAN_SEG_MANIFEST).read_bytes() == (clean / HAN_SEG_MANIFEST).read_bytes()
    assert _tree(demo / "DATA_BASEDIR") == _tree(clean / "DATA_BASEDIR")  # the same slices, pixel for pixel


# --- 8: shards ---------------------------------------------------------------------------------------------------

SNAKEMAKE = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile")]


def _workdir(path: Path, demo_template: Path, **config) -> Path:
    path.mkdir(parents=True)
    values = yaml.safe_load((REPO / "config.yaml").read_text())
    values.update(config)
    (path / "config.yaml").write_text(yaml.safe_dump(values))
    shutil.copytree(demo_template, path / "demo", symlinks=True)
    return path


@pytest.mark.workflow
def test_a_shards_key_naming_no_subset_is_refused_with_a_suggestion(tmp_path, demo, demo_template):
    done = _convert(demo, "Brain-Tumor-MRI", shards={"2D_Task/Brain-Tumor-MRl": 2})
    assert done.returncode == 2
    assert "shards names unknown subset or conversion '2D_Task/Brain-Tumor-MRl'" in done.stderr
    assert "did you mean 2D_Task/Brain-Tumor-MRI" in done.stderr and "Traceback" not in done.stderr
    workdir = _workdir(tmp_path / "w", demo_template, shards={"3D_Task/CT_RATE/volume": 2})
    dry = subprocess.run([*SNAKEMAKE, "--directory", str(workdir), "-n"], capture_output=True, text=True, timeout=120)
    assert dry.returncode != 0
    assert "shards names unknown subset or conversion '3D_Task/CT_RATE/volume'" in dry.stdout + dry.stderr
    assert "did you mean 3D_Task/CT_RATE/volumes" in dry.stdout + dry.stderr


@pytest.mark.workflow
def test_more_shards_than_items_makes_one_job_per_item(tmp_path, demo_template):
    subset = "2D_Task/Brain-Tumor-MRI"
    workdir = _workdir(tmp_path / "w", demo_template, subsets=[subset], shards={subset: 100000})
    images = len(list((workdir / "demo" / "raw" / "brain-tumor-mri-dataset").glob("Testing/*/*.jpg")))
    assert images == 5  # the demo's test images, in four class folders
    plan = subprocess.run(
        [sys.executable, "-m", "preprocess", "plan", "--json"], cwd=workdir, capture_output=True, text=True
    )
    assert plan.returncode == 0, plan.stderr
    rows = [row for row in json.loads(plan.stdout) if row["stage"] == "convert"]  # the other stages' rows besides
    assert [(row["subset"], row["jobs"]) for row in rows] == [(subset, images)]
    done = subprocess.run(
        [*SNAKEMAKE, "--directory", str(workdir), "--cores", "2"], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    manifests = sorted((workdir / "results" / "convert").rglob("*.tsv"))
    assert [p.name for p in manifests] == [f"image_folder.{i}-of-{images}.tsv" for i in range(images)]
    assert [len(p.read_text().splitlines()) - 1 for p in manifests] == [1] * images  # one image each
