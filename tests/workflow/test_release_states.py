"""The release as an input (issue 41): a subset whose images the release ships is taken from it (validated, never
rebuilt, its raw download never asked for), and every command names each subset's state with the same words.

The release's images are written here by the reference rules themselves, stated apart from the conversions:
APTOS's images are the upstream's files under the names its task JSONs give (REFERENCE.md, image folders);
BloodMNIST's are `output_images/test/<class>/test_{i:06d}.png` holding `test_images[i]` of the npz (REFERENCE.md
section 4), encoded by Pillow, so their bytes differ from this pipeline's encoder while their pixels match."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from conftest import REPO, demo_with_raw_of

pytestmark = pytest.mark.workflow

APTOS_ROOT = "2D_Images/APTOS/train_images"
BLOOD_ROOT = "2D_Images/BloodMNIST/output_images/test"


def _record_paths(task_folder: Path) -> list[str]:
    """Every image path the task JSONs of a folder name (query and target fields), as written there."""
    found = set()
    for task in sorted(task_folder.glob("*.json")):
        for record in json.loads(task.read_text(encoding="utf-8")):
            for field in ("qry_img_path", "tgt_img_path"):
                value = record.get(field)
                for path in value if isinstance(value, list) else [value]:
                    if path:
                        found.add(path)
    return sorted(found)


def _release_aptos(demo: Path, template: Path) -> dict[str, str]:
    """APTOS as the release has it: each named image, the upstream file's bytes. Returns path -> sha256."""
    base = demo / "DATA_BASEDIR"
    written = {}
    for name in _record_paths(base / "2D_Task" / "APTOS"):
        target = base / APTOS_ROOT / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(template / "raw" / "aptos2019-blindness-detection" / "train_images" / name, target)
        written[f"{APTOS_ROOT}/{name}"] = hashlib.sha256(target.read_bytes()).hexdigest()
    return written


def _release_bloodmnist(demo: Path) -> list[str]:
    """BloodMNIST's named images by the MedMNIST rule, through Pillow. Returns their paths."""
    base = demo / "DATA_BASEDIR"
    with np.load(demo / "raw" / "MedMNIST" / "bloodmnist_224.npz") as npz:
        images = npz["test_images"]
    written = []
    for name in _record_paths(base / "2D_Task" / "BloodMNIST"):
        index = int(re.fullmatch(r"[^/]+/test_(\d{6})\.png", name)[1])
        target = base / BLOOD_ROOT / name
        target.parent.mkdir(parents=True, exist_ok=True)
        Image.fromarray(images[index]).save(target, "PNG", compress_level=9)
        written.append(f"{BLOOD_ROOT}/{name}")
    return written


def _digests(base: Path, paths) -> dict[str, str]:
    return {path: hashlib.sha256((base / path).read_bytes()).hexdigest() for path in paths}


def _snakemake(workdir: Path, *config: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--directory", str(workdir)]
    return subprocess.run([*command, "--cores", "2", *config], capture_output=True, text=True)


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "preprocess", *args], capture_output=True, text=True, cwd=cwd)


@pytest.fixture
def workdir(tmp_path, demo_template) -> Path:
    """The demo with MedMNIST's raw download alone, and APTOS's images in place as the release ships them."""
    demo_with_raw_of(tmp_path / "demo", demo_template, {"medmnist"})
    shutil.copy(REPO / "config.yaml", tmp_path / "config.yaml")
    return tmp_path


def test_every_command_names_the_same_state_for_each_subset(workdir, demo_template):
    base = workdir / "demo" / "DATA_BASEDIR"
    release = _release_aptos(workdir / "demo", demo_template)
    done = _snakemake(workdir)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    results = workdir / "results"
    plans = {plan["subset"]: plan for plan in json.loads((results / "plan.json").read_text(encoding="utf-8"))}
    assert (plans["2D_Task/APTOS"]["action"], plans["2D_Task/APTOS"]["reason"]) == ("release", "from the release")
    assert plans["2D_Task/BloodMNIST"]["action"] == "build"
    assert (plans["2D_Task/Kvasir"]["action"], plans["2D_Task/Kvasir"]["reason"]) == ("skip", "raw missing")
    # validated like a built subset, counted apart, its files untouched, its download never asked for
    summary = (results / "validation" / "summary.txt").read_text(encoding="utf-8")
    for name in ("APTOS_test.json", "APTOS_i2i_test.json", "APTOS_t2i_test.json"):
        assert re.search(rf"2D_Task/APTOS/{name} .* ok$", summary, re.MULTILINE), name
    last = summary.rstrip().splitlines()[-1]
    assert re.fullmatch(
        r"(\d+) of \1 task files resolve every path \(\d+ subsets from the release, \d+ built\)\.", last
    )
    assert _digests(base, release) == release
    assert "aptos2019" not in (results / "not-built.md").read_text(encoding="utf-8")
    assert "## kvasir_v2: missing" in (results / "not-built.md").read_text(encoding="utf-8")
    assert '<b data-count="from_release">' in (results / "report" / "dashboard.html").read_text(encoding="utf-8")
    fingerprints = (results / "fingerprints.tsv").read_text(encoding="utf-8")
    assert all(path in fingerprints for path in release)

    status = _cli("status", "demo/DATA_BASEDIR", "--json", cwd=workdir)
    states = {row["subset"]: row["state"] for row in json.loads(status.stdout)["subsets"]}
    assert states["2D_Task/APTOS"] == "from the release"
    assert states["2D_Task/BloodMNIST"] == "built"
    assert states["Text_Task/PubMedQA"] == "from the release"  # a text subset: the release's task files alone
    assert states["2D_Task/Kvasir"] == "not built: raw missing"

    validate = _cli("validate", "demo/DATA_BASEDIR", cwd=workdir)
    assert validate.returncode == 0, validate.stdout[-2000:]
    counts = re.search(r"subsets whose every path resolves: (\d+) from the release, (\d+) built", validate.stdout)
    built = sum(plan["action"] == "build" for plan in plans.values())
    assert counts is not None and int(counts[2]) == built

    check = _cli("check", "--config", "config.yaml", cwd=workdir)
    assert "from the release (" in check.stdout and "2D_Task/APTOS" in check.stdout
    assert "## aptos2019:" not in check.stdout and "## kvasir_v2: missing" in check.stdout


def test_a_partial_release_is_completed_and_compared_never_rewritten(workdir, demo_template):
    demo, base = workdir / "demo", workdir / "demo" / "DATA_BASEDIR"
    named = _release_bloodmnist(demo)
    deleted, changed, kept = named[0], named[1], named[2:]
    (base / deleted).unlink()
    pixels = np.array(Image.open(base / changed))
    pixels[0, 0, 0] = pixels[0, 0, 0] ^ 0x20  # one pixel's red value, 32 apart
    Image.fromarray(pixels).save(base / changed, "PNG", compress_level=9)
    before = _digests(base, [changed, *kept])
    done = _snakemake(workdir, "--config", 'subsets=["BloodMNIST"]')  # partly in place: built by default
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    assert _digests(base, [changed, *kept]) == before  # no release file rewritten
    assert (base / deleted).is_file()  # written again
    table = (workdir / "results" / "validation" / "compared.tsv").read_text(encoding="utf-8").splitlines()
    assert table[0] == "subset\tpath\tverdict"
    rows = [line.split("\t") for line in table[1:]]
    assert {row[0] for row in rows} == {"2D_Task/BloodMNIST"}
    verdicts = {path: verdict for _, path, verdict in rows}
    assert verdicts[changed] == "differs: 1 of 50176 pixels, largest difference 32 (224x224x3 uint8)"
    assert all(verdicts[path] == "same pixels" for path in kept)
    assert deleted not in verdicts
    summary = done.stderr
    assert "0 of 1 subsets rebuilt over the release's files: the same pixels in every file." in summary
    assert f"{len(kept) + 1} files were in DATA_BASEDIR with other bytes and are kept as they are" in summary
    assert f"  {changed}: differs: 1 of 50176 pixels" in summary
    assert "results/validation/compared.tsv" in summary
    # ours, kept aside (never in DATA_BASEDIR): the npz's own pixels; the page shows both and their difference
    with np.load(demo / "raw" / "MedMNIST" / "bloodmnist_224.npz") as npz:
        index = int(re.search(r"test_(\d{6})\.png$", changed)[1])
        expected = npz["test_images"][index]
    ours = workdir / "results" / "compared" / changed
    assert np.array_equal(np.asarray(Image.open(ours)), expected)
    page = (workdir / "results" / "report" / "compared.html").read_text(encoding="utf-8")
    assert changed in page and "differs: 1 of 50176 pixels" in page
    images = re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page)
    assert len(images) == 3
    theirs, mine, gap = (np.asarray(Image.open(io.BytesIO(base64.b64decode(data)))) for data in images)
    assert np.array_equal(theirs, pixels) and np.array_equal(mine, expected)
    assert np.argwhere(gap).tolist() == [[0, 0]] and gap[0, 0] == 255  # the one changed pixel, white


def test_a_release_image_missing_without_raw_data_fails_the_validation_naming_it(workdir, demo_template):
    """Item 2: APTOS's release images in place but one, and no APTOS download to write it: the subset is
    validated as the release has it (never dropped as 'not built'), and the absent image fails by its path."""
    base = workdir / "demo" / "DATA_BASEDIR"
    release = sorted(_release_aptos(workdir / "demo", demo_template))
    gone = release[0]
    (base / gone).unlink()
    done = _snakemake(workdir, "--config", 'subsets=["APTOS"]')
    assert done.returncode != 0
    name = gone.rsplit("/", 1)[1]
    assert f"2D_Task/APTOS/APTOS_test.json: missing: '{name}' no such file" in done.stderr
    plans = json.loads((workdir / "results" / "plan.json").read_text(encoding="utf-8"))
    [aptos] = [plan for plan in plans if plan["subset"] == "2D_Task/APTOS"]
    assert (aptos["action"], aptos["reason"]) == ("release", f"from the release: 1 of {len(release)} images absent")
    summary = (workdir / "results" / "validation" / "summary.txt").read_text(encoding="utf-8")
    assert "2D_Task/APTOS: not built" not in summary
    assert not (base / gone).exists()  # nothing written: there is no raw data to write it from
