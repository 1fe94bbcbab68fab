"""The demo shaped like the release (`python -m preprocess demo DIR --release-images`): DATA_BASEDIR holds the
images of the demo's open subsets, made by preprocess/demo/release_images (independent statements of the
reference rules, Pillow's PNG encoder), and a LICENSE_NOTICE.md in each restricted image folder.

A rebuild of the same subsets by the pipeline's own conversions must give the same names and pixels; where
the pipeline writes a PNG itself, other bytes (its own encoder), and where the release ships an upstream file
as it is, the same bytes."""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from conftest import DEMO_LEFT_OUT, REPO, demo_settings

PACKAGE = REPO / "preprocess" / "demo" / "release_images"

# Release files per subset folder, counted by hand from the paths the demo's release records name (test task
# JSONs joined to their image roots, and Train_Data JSONLs), every path once.
EXPECTED = {
    "2D_Images/APTOS": 4,  # the four train_images/*.png, named by the test files and the JSONL
    "2D_Images/BloodMNIST": 9,  # 4 test, 3 train, 2 val
    "2D_Images/Brain-Tumor-MRI": 9,  # 5 Testing, 4 Training
    "2D_Images/ChestMNIST": 5,
    "2D_Images/Gastrointestinal": 12,  # test pairs of Kvasir-SEG and PolypGen, 4 train/val full images
    "2D_Images/ISIC-2019": 5,  # 3 test, 2 train
    "2D_Images/MedPIX": 3,  # 2 test images, 1 train
    "2D_Images/OmniMedVQA_vqa": 2,
    "2D_Images/OrganAMNIST": 4,
    "2D_Images/PMC": 2,
    "2D_Images/PanNuke": 6,
    "2D_Images/PanNuke_VG": 5,
    "2D_Images/PathVQA": 5,  # 3 test, 2 train
    "2D_Images/REtinal": 3,
    "2D_Images/ROCO-VQA": 3,  # Test_sample_000007 .. 000009
    "2D_Images/SkinLesion": 6,
    "2D_Images/UltrasoundNerve": 6,
    "2D_Images/VQA-RAD": 5,  # 3 test, 2 train
    "2D_Images/kvasir-dataset": 7,  # 5 test, 2 train
    "2D_Images/lc25000": 5,
    "3D_Images/BraTS2023": 256,  # 2 cases x (t1n, t2w) x 64
    "3D_Images/BraTS_MEN": 128,  # 2 cases x 64
    "3D_Images/ChirrMRI600": 192,  # test/7, test/healthy_3, train/12 x 64
    "3D_Images/CirrMRI600_Cross": 384,  # the same 3 cases x (T1, T2) x 64
    "3D_Images/HaN-Seg": 256,  # 2 cases x (CT, MR) x 64
    "3D_Images/M3D": 4,
    "3D_Images/MMDental": 120,  # 2 cases x 3 views x 20
    "3D_Images/Organ3dMNIST": 192,  # 3 test samples x 64
    "3D_Images/RadGen_CT": 64,  # the one valid scan
    "3D_Images/SynthRAD": 512,  # 4 cases x (ct, mri) x 64
}
# The subsets those folders belong to, as the pipeline builds them.
SHIPPED = [
    "2D_Task/APTOS", "2D_Task/BloodMNIST", "2D_Task/Brain-Tumor-MRI", "2D_Task/ChestMNIST", "2D_Task/Gastrointestinal",
    "2D_Task/ISIC-2019", "2D_Task/MedPIX", "2D_Task/OmniMedVQA_vqa", "2D_Task/OrganAMNIST", "2D_Task/PMC",
    "2D_Task/PanNuke", "2D_Task/PanNuke_VG", "2D_Task/PathVQA", "2D_Task/REtinal", "2D_Task/ROCO-VQA",
    "2D_Task/SkinLesion", "2D_Task/UltrasoundNerve", "2D_Task/VQA-RAD", "2D_Task/Kvasir", "2D_Task/lc25000",
    "3D_Task/BraTS2023", "3D_Task/BraTS_MEN", "3D_Task/ChirrMRI600", "3D_Task/CirrMRI600_Cross", "3D_Task/HaN-Seg",
    "3D_Task/M3D", "3D_Task/MMDental", "3D_Task/Organ3dMNIST", "3D_Task/RadGen_CT", "3D_Task/SynthRAD",
]  # fmt: skip
# Folders whose release files are upstream files as they are (image folders, PNG series, zip members, parquet
# image bytes): the pipeline links or copies the same bytes. Every other release file is a PNG the
# benchmark's scripts wrote, so the pipeline's encoder gives other bytes.
UPSTREAM_BYTES = {
    "2D_Images/APTOS", "2D_Images/Brain-Tumor-MRI", "2D_Images/ISIC-2019", "2D_Images/MedPIX",
    "2D_Images/OmniMedVQA_vqa", "2D_Images/PMC", "2D_Images/PathVQA", "2D_Images/REtinal", "2D_Images/ROCO-VQA",
    "2D_Images/VQA-RAD", "2D_Images/kvasir-dataset", "2D_Images/lc25000", "3D_Images/M3D",
}  # fmt: skip
# The card's list of image folders the release does not redistribute, each holding only its placeholder.
# With the host its notice sends a user to, as the card names it.
RESTRICTED = {
    "2D_Images/ChestImagrome": "physionet", "2D_Images/chexpert_plus": "stanford", "2D_Images/MIMIC-CXR-Report":
    "physionet", "2D_Images/MIMIC-CXR-T": "physionet", "2D_Images/MIMIC-CXR-VQA": "physionet", "2D_Images/VindrCXR":
    "physionet", "2D_Images/VindrMammo": "physionet", "2D_Images/RadImageNet-VQA": "huggingface",
    "3D_Images/CT_RATE": "huggingface", "3D_Images/MRNet": "stanford",
}  # fmt: skip
# The card's own sentence about the placeholders: the notices say it in other words.
CARD = "A `LICENSE_NOTICE.md` placeholder remains in each folder pointing to the official source."
FORBIDDEN = ("preprocess.convert", "preprocess.volumes", "preprocess.formats")


def _demo_command(directory: Path, *flags: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "preprocess", "demo", str(directory), *flags],
        capture_output=True,
        text=True,
        cwd=directory.parent,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )


@pytest.fixture(scope="module")
def release_demo(tmp_path_factory):
    """A demo written with --release-images by the command a user runs, and what it printed."""
    directory = tmp_path_factory.mktemp("release") / "demo"
    done = _demo_command(directory, "--release-images")
    assert done.returncode == 0, done.stderr
    return directory, done.stdout


@pytest.fixture(scope="module")
def rebuilt(tmp_path_factory, demo_template):
    """The plain demo's shipped subsets built by the pipeline's conversions, every split (Train_Data too)."""
    from preprocess.pipeline import steps

    copy = tmp_path_factory.mktemp("rebuilt") / "demo"
    shutil.copytree(demo_template, copy, symlinks=True)
    build = steps.Build(demo_settings(copy, splits="all"))
    for subset in SHIPPED:
        build.convert(subset=subset)
    return copy / "DATA_BASEDIR"


def _images(data_basedir: Path) -> dict[str, Path]:
    """Every file under DATA_BASEDIR but the release's task files and notices, by name."""
    return {
        p.relative_to(data_basedir).as_posix(): p
        for p in data_basedir.rglob("*")
        if p.is_file() and p.suffix not in (".json", ".jsonl") and p.name != "LICENSE_NOTICE.md"
    }


def _strings(value) -> list[str]:
    if isinstance(value, list):
        return [text for item in value for text in _strings(item)]
    return [value] if isinstance(value, str) and value else []


def _folder(name: str) -> str:
    return "/".join(name.split("/")[:2])


def test_the_command_says_what_it_added(release_demo):
    directory, printed = release_demo
    assert f"demo written to {directory}" in printed
    assert (
        "with the release's images of 30 open subsets and a LICENSE_NOTICE.md in each of the 10 restricted" in printed
    )
    assert (directory / ".medheb-demo").read_text().startswith("written by python -m preprocess demo --release-images")


def test_the_release_ships_what_its_records_name_per_subset(release_demo):
    images = _images(release_demo[0] / "DATA_BASEDIR")
    counts = {}
    for name in images:
        counts[_folder(name)] = counts.get(_folder(name), 0) + 1
    assert counts == EXPECTED


def test_every_path_of_the_shipped_subsets_resolves(release_demo):
    """Each image path the demo's records name under a shipped folder is a file of the release."""
    data = release_demo[0] / "DATA_BASEDIR"
    roots = {"2D_Task/APTOS/APTOS_test.json": "2D_Images/APTOS/train_images",
             "2D_Task/PanNuke_VG/PanNuke_test.json": "2D_Images/PanNuke_VG",
             "3D_Task/M3D/m3d_i2t_test.json": "3D_Images/M3D",
             "3D_Task/SynthRAD/brain_ct_to_mri_test.json": "3D_Images/SynthRAD/images"}  # fmt: skip
    checked = 0
    for task, root in roots.items():
        for record in json.loads((data / task).read_text()):
            for path in _strings([record.get("qry_img_path"), record.get("tgt_img_path")]):
                assert (data / root / path).is_file(), f"{task}: {path}"
                checked += 1
    for line in (data / "Train_Data/2D_Task/BloodMNIST/BloodMNIST_train.jsonl").read_text().splitlines():
        for path in json.loads(line)["images"]:
            assert (data / path).is_file(), path
            checked += 1
    assert checked > 100


def test_a_rebuild_has_the_release_pixels_and_its_own_png_bytes(release_demo, rebuilt):
    released = _images(release_demo[0] / "DATA_BASEDIR")
    ours = _images(rebuilt)
    assert sorted(set(released) - set(ours)) == []  # the rebuild writes every release name (and more)
    problems = []
    for name, path in sorted(released.items()):
        with Image.open(path) as theirs, Image.open(ours[name]) as mine:
            a, b = np.asarray(theirs), np.asarray(mine)
            if (theirs.mode, theirs.size) != (mine.mode, mine.size) or a.dtype != b.dtype or not np.array_equal(a, b):
                differ = f", {np.count_nonzero(a != b)} values differ" if a.shape == b.shape else ""
                problems.append(f"{name}: {theirs.mode} {a.shape} {a.dtype} vs {mine.mode} {b.shape} {b.dtype}{differ}")
        same_bytes = path.read_bytes() == ours[name].read_bytes()
        if same_bytes != (_folder(name) in UPSTREAM_BYTES):
            problems.append(f"{name}: bytes {'equal' if same_bytes else 'differ'}")
    assert problems == []


def test_release_pixels_are_the_raw_arrays_where_the_rule_keeps_them(release_demo):
    """Stated from the raw npz files themselves: MedMNIST images and 3D slices are stored uint8, unchanged."""
    directory = release_demo[0]
    with np.load(directory / "raw/MedMNIST/bloodmnist_224.npz") as blood:
        expected = blood["test_images"][0]
    path = directory / "DATA_BASEDIR/2D_Images/BloodMNIST/output_images/test/basophil/test_000000.png"
    with Image.open(path) as image:
        assert image.mode == "RGB" and np.array_equal(np.asarray(image), expected)
    with np.load(directory / "raw/MedMNIST/organmnist3d_64.npz") as organ:
        expected = organ["test_images"][2][63]
    path = directory / "DATA_BASEDIR/3D_Images/Organ3dMNIST/test_slides/sample_00002/slice_63.png"
    with Image.open(path) as image:
        assert image.mode == "L" and np.array_equal(np.asarray(image), expected)
    aptos = "aptos2019-blindness-detection/train_images/0024cdab0c1e.png"
    release = directory / "DATA_BASEDIR/2D_Images/APTOS/train_images/0024cdab0c1e.png"
    assert release.read_bytes() == (directory / "raw" / aptos).read_bytes()


def test_a_volume_slice_follows_the_window_written_here(release_demo):
    """HaN-Seg CT slice 0 (file axis 2, index 0): window level 50, width 350, clipped then scaled, truncated."""
    import nrrd

    directory = release_demo[0]
    ct, _ = nrrd.read(str(directory / "raw/HaN-Seg/set_1/case_01/case_01_IMG_CT.nrrd"))
    expected = ((np.clip(ct[:, :, 0].astype(np.float32), -125.0, 225.0) + 125.0) / 350.0 * 255.0).astype(np.uint8)
    with Image.open(directory / "DATA_BASEDIR/3D_Images/HaN-Seg/CT_slides/case_01/slice_000.png") as image:
        assert np.array_equal(np.asarray(image), expected)


def test_each_restricted_folder_holds_only_its_notice(release_demo):
    data = release_demo[0] / "DATA_BASEDIR"
    for folder, where in RESTRICTED.items():
        assert sorted(p.relative_to(data / folder).as_posix() for p in (data / folder).rglob("*")) == [
            "LICENSE_NOTICE.md"
        ], folder
        text = (data / folder / "LICENSE_NOTICE.md").read_text(encoding="utf-8")
        assert "images not included" in text and "python -m preprocess convert" in text, folder
        assert where in text.lower() and CARD not in " ".join(text.split()), folder


def test_left_out_and_text_subsets_get_nothing(release_demo):
    data = release_demo[0] / "DATA_BASEDIR"
    for folder in ["2D_Images/DermaMNIST", "2D_Images/USData", "3D_Images/NoduleMNIST", "3D_Images/SynapseMNIST"]:
        assert not (data / folder).exists()
    assert sorted(p.name for p in (data / "Text_Task").rglob("*") if p.is_file() and p.suffix != ".json") == []


def test_every_image_subset_is_shipped_or_says_why_not():
    from preprocess.demo.folders import left_out, release_oracles
    from preprocess.demo.release_images import not_shipped
    from preprocess.registry.loader import load_registry

    LISTED = release_oracles()  # the dataset folders' RELEASE_IMAGES
    assert left_out() == DEMO_LEFT_OUT  # their DEMO_LEFT_OUT
    NOT_SHIPPED = not_shipped(load_registry(), left_out())

    assert sorted(LISTED) == sorted(SHIPPED) and not set(LISTED) & set(NOT_SHIPPED)
    images = {s.key for s in load_registry(extras=False).subsets if not s.is_text}
    assert set(LISTED) | set(NOT_SHIPPED) == images
    assert NOT_SHIPPED["3D_Task/CT_RATE"].startswith("restricted")
    assert NOT_SHIPPED["2D_Task/USData"] == "left out of the demo: raw missing"


def test_the_plain_demo_is_as_before(demo_template):
    """Without the flag DATA_BASEDIR holds only the release's task files, and the marker reads as it always did."""
    assert _images(demo_template / "DATA_BASEDIR") == {}
    assert not list((demo_template / "DATA_BASEDIR").rglob("LICENSE_NOTICE.md"))
    marker = (demo_template / ".medheb-demo").read_text()
    assert re.fullmatch(r"written by python -m preprocess demo, version [0-9a-f]{64}\n", marker)


def test_each_flavour_is_kept_or_rewritten(tmp_path, demo_template):
    """A demo folder of the other flavour is written again; one of the asked flavour is kept."""
    directory = tmp_path / "demo"
    shutil.copytree(demo_template, directory, symlinks=True)
    done = _demo_command(directory, "--no-release-images")
    assert done.returncode == 0 and "kept as it is" in done.stdout
    done = _demo_command(directory, "--release-images")
    assert done.returncode == 0 and "demo written to" in done.stdout
    assert (directory / "DATA_BASEDIR/3D_Images/MRNet/LICENSE_NOTICE.md").is_file()
    done = _demo_command(directory, "--release-images")
    assert done.returncode == 0 and "kept as it is" in done.stdout


def test_a_named_file_no_rule_makes_stops_the_demo_naming_it(tmp_path, monkeypatch, capsys):
    """A release record naming an APTOS image the demo's download lacks: exit 2, the file named, no folder left."""
    import preprocess.demo
    from preprocess.cli import main

    release = tmp_path / "release"
    shutil.copytree(preprocess.demo.RELEASE, release)
    task = release / "2D_Task/APTOS/APTOS_test.json"
    records = json.loads(task.read_text())
    records[0]["qry_img_path"] = "ffffffffffff.png"  # no such image in the demo's APTOS download
    task.write_text(json.dumps(records))
    monkeypatch.setattr(preprocess.demo, "releases", lambda: [release])
    assert main(["demo", str(tmp_path / "demo"), "--release-images"]) == 2
    error = capsys.readouterr().err
    assert "the demo's release names 1 2D_Task/APTOS file(s) that its oracle does not make" in error
    assert "2D_Images/APTOS/train_images/ffffffffffff.png" in error
    assert sorted(p.name for p in tmp_path.iterdir()) == ["release"]  # no demo folder, no staging folder


def _imports(path: Path) -> set[str]:
    """The modules a file imports, absolute (a relative import resolved against the package)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = ".".join(["preprocess", "demo", "release_images"][: 4 - node.level])
                base = f"{parent}.{base}" if base else parent
            found |= {base} | {f"{base}.{alias.name}" for alias in node.names}
    return found


def test_the_oracles_share_no_code_with_the_conversions():
    files = sorted(PACKAGE.glob("*.py"))
    assert len(files) >= 8
    imported = set().union(*(_imports(path) for path in files))
    assert sorted(m for m in imported if m.startswith(FORBIDDEN)) == []
    # within the package: only its own modules and the error class
    ours = {m for m in imported if m.split(".")[0] == "preprocess"}
    allowed = ("preprocess.demo.release_images", "preprocess.errors")
    assert sorted(m for m in ours if not m.startswith(allowed) and m != "preprocess.demo") == []
