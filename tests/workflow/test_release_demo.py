"""The demo shaped like the release, built as a user meets it (issue 41's acceptance): `make demo` rebuilds
every subset over the release's images and ends with the comparison; with part of the release deleted and one
pixel changed, the deleted files are written again, no release file is rewritten and the changed one is
reported. With only the restricted subsets' raw downloads the default build validates every task file and asks
for no download of a subset the release ships: tests/workflow/test_release_restricted_only.py, on one build of
that demo.

The expected states and counts are stated here by hand from the demo's data (its release folders, the card's
ten restricted subsets, the demo's left-out subsets), never by the code under test."""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from conftest import REPO

pytestmark = pytest.mark.workflow

# The card's ten subsets whose images the release does not redistribute.
RESTRICTED = [
    "2D_Task/ChestImagrome", "2D_Task/ChexpertPlus", "2D_Task/MIMIC-CXR-Report", "2D_Task/MIMIC-CXR-T",
    "2D_Task/MIMIC-CXR-VQA", "2D_Task/VindrCXR", "2D_Task/VindrMammo", "2D_Task/RadImageNet-VQA",
    "3D_Task/CT_RATE", "3D_Task/MRNet",
]  # fmt: skip
SHIPPED = 30  # the demo's open subsets whose images its release ships (test_demo_release_images.SHIPPED)
TEXT = 7  # Text_Task folders of the demo's release: their task files are the release's, no image


def _releases(base: Path) -> list[Path]:
    return sorted(p for p in base.rglob("*") if p.suffix in (".json", ".jsonl"))


def _digests(base: Path) -> dict[str, str]:
    """sha256 of every file under DATA_BASEDIR (links followed, as a reader of the tree sees them)."""
    return {
        p.relative_to(base).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(base.rglob("*"))
        if p.is_file()
    }


def _demo(directory: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "preprocess", "demo", str(directory), "--release-images"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr


def _stats(base: Path) -> dict[str, tuple[int, int]]:
    """inode and modification time of every file under DATA_BASEDIR."""
    return {
        p.relative_to(base).as_posix(): (p.stat().st_ino, p.stat().st_mtime_ns)
        for p in sorted(base.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def _snakemake(workdir: Path, *extra: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--directory", str(workdir)]
    done = subprocess.run([*command, "--cores", "2", *extra], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-5000:]
    return done


@pytest.fixture(scope="module")
def rebuilt(tmp_path_factory):
    """`make demo`: the release-shaped demo, then `snakemake --cores 2 --config build=all`."""
    workdir = tmp_path_factory.mktemp("make-demo")
    _demo(workdir / "demo")
    shutil.copy(REPO / "config.yaml", workdir / "config.yaml")
    before = _digests(workdir / "demo" / "DATA_BASEDIR")
    done = _snakemake(workdir, "--config", "build=all")
    return workdir, done, before


def test_make_demo_rebuilds_every_subset_and_ends_with_the_comparison(rebuilt):
    workdir, done, before = rebuilt
    base = workdir / "demo" / "DATA_BASEDIR"
    lines = done.stderr.splitlines()
    files = len(_releases(base))
    built = SHIPPED + len(RESTRICTED)
    assert (
        f"{files} of {files} task files resolve every path ({TEXT} subsets from the release, {built} built)." in lines
    )
    compared = next(line for line in lines if "subsets rebuilt over the release's files" in line)
    assert compared.startswith(f"{SHIPPED} of {SHIPPED} subsets rebuilt over the release's files: the same pixels")
    assert compared.endswith(" 0 differ (results/validation/compared.tsv)")
    # every file the release shipped is byte for byte as it was, the notices included
    after = _digests(base)
    assert {path: after[path] for path in before} == before
    assert sum(path.endswith("LICENSE_NOTICE.md") for path in before) == len(RESTRICTED)
    table = (workdir / "results" / "validation" / "compared.tsv").read_text(encoding="utf-8").splitlines()
    assert table[0] == "subset\tpath\tverdict" and len(table) > 1000
    assert {line.rsplit("\t", 1)[1] for line in table[1:]} == {"same pixels"}
    assert not {line.split("\t")[0] for line in table[1:]} & set(RESTRICTED)


def test_the_readme_quick_start_shows_what_make_demo_prints(rebuilt):
    _, done, _ = rebuilt
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "python -m preprocess demo demo --release-images" in readme
    sample = readme.split("## Quick start", 1)[1].split("```\n", 3)[2].splitlines()  # the block after the commands
    printed = done.stderr.splitlines()
    header = next(line for line in printed if line.startswith("task file "))
    assert sample[0].split() == header.split()
    rows = {line.split()[0]: line.split() for line in printed if line.startswith(("2D_Task/", "3D_Task/"))}
    for line in sample[1:]:
        if line.startswith("2D_Task/APTOS/"):  # a table row: the same cells (the widths follow the longest name)
            assert line.split() == rows[line.split()[0]], line
        elif line != "...":
            assert line in printed, line
    assert sample[-1] == printed[printed.index(sample[-1])]
    assert sample[-1].endswith(f"({TEXT} subsets from the release, {SHIPPED + len(RESTRICTED)} built).")


def test_a_release_partly_deleted_and_one_pixel_changed(tmp_path):
    _demo(tmp_path / "demo")
    shutil.copy(REPO / "config.yaml", tmp_path / "config.yaml")
    base = tmp_path / "demo" / "DATA_BASEDIR"
    blood = sorted(p.relative_to(base).as_posix() for p in (base / "2D_Images/BloodMNIST").rglob("*.png"))
    aptos = sorted(p.relative_to(base).as_posix() for p in (base / "2D_Images/APTOS").rglob("*.png"))
    brats = sorted(p.relative_to(base).as_posix() for p in (base / "3D_Images/BraTS2023").rglob("*.png"))
    deleted = [aptos[0], blood[0], brats[10]]
    saved = {path: np.asarray(Image.open(base / path)) for path in deleted}
    aptos_bytes = (base / aptos[0]).read_bytes()
    for path in deleted:
        (base / path).unlink()
    changed = blood[1]  # in a subset the build completes, so compared
    pixels = np.array(Image.open(base / changed))
    pixels.flat[0] ^= 0x20  # one pixel's first channel, 32 apart
    Image.fromarray(pixels).save(base / changed, "PNG", compress_level=9)
    before, stats = _digests(base), _stats(base)
    done = _snakemake(tmp_path)
    after = _digests(base)
    assert {path: after[path] for path in before} == before  # no release file rewritten, the changed one included
    assert {path: _stats(base)[path] for path in stats} == stats  # nor replaced or touched: inode and mtime
    for path in deleted:  # written again, with the release's pixels
        assert np.array_equal(np.asarray(Image.open(base / path)), saved[path]), path
    assert (base / aptos[0]).read_bytes() == aptos_bytes  # an upstream file as it is: its bytes
    table = (tmp_path / "results" / "validation" / "compared.tsv").read_text(encoding="utf-8").splitlines()
    verdicts = {path: verdict for _, path, verdict in (line.split("\t") for line in table[1:])}
    shape = "x".join(map(str, pixels.shape))
    assert (
        verdicts[changed]
        == f"differs: 1 of {pixels.shape[0] * pixels.shape[1]} pixels, largest difference 32 ({shape} uint8)"
    )
    assert [path for path, verdict in verdicts.items() if verdict != "same pixels"] == [changed]
    printed = done.stderr
    assert re.search(r"\n2 of 3 subsets rebuilt over the release's files: the same pixels in every file\. ", printed)
    # the run's last lines: the file that differs, the table and the page that show it
    last = printed.splitlines()[-12:]
    assert any(line.endswith(" 1 differ (results/validation/compared.tsv)") for line in last), last
    assert (
        f"  {changed}: differs: 1 of {pixels.shape[0] * pixels.shape[1]} pixels, largest difference 32 ({shape} uint8)"
        in last
    )
    assert (
        "  each side by side with ours and their difference: results/report/compared.html (and in snakemake --report)"
        in last
    )
    page = (tmp_path / "results" / "report" / "compared.html").read_text(encoding="utf-8")
    assert changed in page and "differs: 1 of" in page
