"""Issue 41's first and third acceptance on the documented variant of the demo: the release's images of its
open subsets in place, and in the raw root only the downloads of the ten subsets the release may not
redistribute (`python -m preprocess demo demo --release-images --restricted-raw-only`, then the default
build). The build exits 0, validates every task file, asks for no download of a subset the release ships,
leaves every release file as it was; and check, plan, need, status, validate, the workflow's summary and the
report give each subset the same state.

Every expected state, count and name is written here by hand from the demo's data: the card's ten restricted
subsets are built, the nine subsets the demo leaves out (no task file, no image, their raw data absent) are not
built, and every other subset (30 with images, 7 text subsets) is from the release."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import REPO

pytestmark = pytest.mark.workflow

RESTRICTED = [
    "2D_Task/ChestImagrome", "2D_Task/ChexpertPlus", "2D_Task/MIMIC-CXR-Report", "2D_Task/MIMIC-CXR-T",
    "2D_Task/MIMIC-CXR-VQA", "2D_Task/VindrCXR", "2D_Task/VindrMammo", "2D_Task/RadImageNet-VQA",
    "3D_Task/CT_RATE", "3D_Task/MRNet",
]  # fmt: skip
LEFT_OUT = [
    "2D_Task/DermaMNIST", "2D_Task/OCTMNIST", "2D_Task/OrganCMNIST", "2D_Task/OrganSMNIST", "2D_Task/PathMNIST",
    "2D_Task/TissueMNIST", "2D_Task/USData", "3D_Task/NoduleMNIST", "3D_Task/SynapseMNIST",
]  # fmt: skip
SHIPPED = [
    "2D_Task/APTOS", "2D_Task/ISIC-2019", "2D_Task/Brain-Tumor-MRI", "2D_Task/Kvasir", "2D_Task/lc25000",
    "2D_Task/REtinal", "3D_Task/M3D", "2D_Task/PMC", "2D_Task/OmniMedVQA_vqa", "2D_Task/BloodMNIST",
    "2D_Task/ChestMNIST", "2D_Task/OrganAMNIST", "3D_Task/Organ3dMNIST", "2D_Task/PanNuke", "2D_Task/ROCO-VQA",
    "2D_Task/MedPIX", "2D_Task/PathVQA", "2D_Task/VQA-RAD", "2D_Task/PanNuke_VG", "2D_Task/SkinLesion",
    "2D_Task/UltrasoundNerve", "2D_Task/Gastrointestinal", "3D_Task/BraTS2023", "3D_Task/BraTS_MEN",
    "3D_Task/ChirrMRI600", "3D_Task/CirrMRI600_Cross", "3D_Task/HaN-Seg", "3D_Task/SynthRAD", "3D_Task/RadGen_CT",
    "3D_Task/MMDental",
]  # fmt: skip
TEXT = [
    "Text_Task/ChexpertPlus", "Text_Task/MIMIC_f2i", "Text_Task/MMDental", "Text_Task/MedMCQA",
    "Text_Task/MedicalQARetrieval", "Text_Task/PubMedQA", "Text_Task/PublicHealthQA",
]  # fmt: skip
# The raw folders the demo's raw root keeps: the sources of the ten restricted subsets.
RESTRICTED_RAW = [
    "CT-RATE", "MRNet", "RadImageNet-VQA", "chest-imagenome", "chexpert-plus", "mimic-cxr-jpg", "vindr-cxr",
    "vindr-mammo",
]  # fmt: skip
EXPECTED = {
    **{key: "built" for key in RESTRICTED},
    **{key: "not built: raw missing" for key in LEFT_OUT},
    **{key: "from the release" for key in SHIPPED + TEXT},
}
# the demo release's task JSONs and Train_Data JSONLs (tests/workflow/test_release_demo.py counts them)
TASK_FILES = 100


def _files(base: Path) -> dict[str, tuple[bytes, int, int]]:
    """Every file under DATA_BASEDIR: its bytes, inode and modification time."""
    found = {}
    for path in sorted(base.rglob("*")):
        if path.is_file() and not path.is_symlink():
            info = path.stat()
            found[path.relative_to(base).as_posix()] = (path.read_bytes(), info.st_ino, info.st_mtime_ns)
    return found


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "preprocess", *args], capture_output=True, text=True, cwd=cwd)


@pytest.fixture(scope="module")
def variant(tmp_path_factory):
    """The documented variant, as a user runs it: the demo command, then `snakemake --cores 2`."""
    workdir = tmp_path_factory.mktemp("restricted-only")
    made = _cli("demo", "demo", "--release-images", "--restricted-raw-only", cwd=workdir)
    assert made.returncode == 0, made.stderr
    assert "the raw root holds only the restricted subsets' downloads" in made.stdout
    shutil.copy(REPO / "config.yaml", workdir / "config.yaml")
    base = workdir / "demo" / "DATA_BASEDIR"
    before = _files(base)
    command = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--directory", str(workdir)]
    done = subprocess.run([*command, "--cores", "2"], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-5000:]
    return workdir, done, before


def test_the_raw_root_holds_only_the_restricted_downloads(variant):
    workdir, _, _ = variant
    assert sorted(p.name for p in (workdir / "demo" / "raw").iterdir()) == sorted(RESTRICTED_RAW)


def test_the_default_build_validates_every_task_file_and_keeps_every_release_file(variant):
    workdir, done, before = variant
    base = workdir / "demo" / "DATA_BASEDIR"
    printed = done.stderr.splitlines()
    assert f"{TASK_FILES} of {TASK_FILES} task files resolve every path (37 subsets from the release, 10 built)." in (
        printed
    )
    # each task file of the tree is counted, and ok
    on_disk = sorted(p for p in before if p.endswith((".json", ".jsonl")))
    assert len(on_disk) == TASK_FILES
    summary = (workdir / "results" / "validation" / "summary.json").read_text(encoding="utf-8")
    rows = {row["file"]: row for row in json.loads(summary)["files"]}
    assert sorted(rows) == on_disk
    assert [name for name, row in rows.items() if row["ok"] != row["paths"] or row["missing"] + row["unreadable"]] == []
    # no release file rewritten, replaced or touched: bytes, inode and mtime, the ten notices included
    after = _files(base)
    assert {path: after.get(path) for path in before} == before
    assert sorted(p for p in before if p.endswith("LICENSE_NOTICE.md")) == sorted(
        f"{folder}/LICENSE_NOTICE.md"
        for folder in (
            "2D_Images/ChestImagrome", "2D_Images/chexpert_plus", "2D_Images/MIMIC-CXR-Report",
            "2D_Images/MIMIC-CXR-T", "2D_Images/MIMIC-CXR-VQA", "2D_Images/VindrCXR", "2D_Images/VindrMammo",
            "2D_Images/RadImageNet-VQA", "3D_Images/CT_RATE", "3D_Images/MRNet",
        )
    )  # fmt: skip
    assert "rebuilt over the release's files" not in done.stderr  # nothing of the release was rebuilt


def test_with_only_the_restricted_downloads_the_default_build_validates_everything(variant):
    """The same demo as test_release_demo.py's release-shaped one with the raw downloads of the ten restricted
    subsets alone (that file's test until it shared this build): the default build validates every task file,
    builds the ten, takes the others from the release, and asks only for the left-out subsets' downloads."""
    workdir, done, before = variant
    base = workdir / "demo" / "DATA_BASEDIR"
    files = len([p for p in base.rglob("*") if p.suffix in (".json", ".jsonl")])
    last = done.stderr.splitlines()
    assert (
        f"{files} of {files} task files resolve every path ({len(SHIPPED + TEXT)} subsets from the release, 10 built)."
        in last
    )
    assert f"{len(LEFT_OUT)} subsets not built (what to download: results/not-built.md):" in last
    after = _files(base)  # every file before the build was a regular one (no link): its bytes, inode and mtime
    assert {path: after[path] for path in before} == before
    status = _cli("status", "demo/DATA_BASEDIR", "--json", cwd=workdir)
    states = {row["subset"]: row["state"] for row in json.loads(status.stdout)["subsets"]}
    assert [key for key in RESTRICTED if states[key] != "built"] == []
    assert sum(state == "from the release" for state in states.values()) == len(SHIPPED + TEXT)
    # what to download names the left-out subsets' sources alone (MedMNIST's 2D and 3D npz files, USData):
    # none of the 30 subsets the release ships, none of the restricted ones now built
    to_fetch = (workdir / "results" / "not-built.md").read_text(encoding="utf-8")
    assert re.findall(r"^## (\S+):", to_fetch, re.MULTILINE) == ["medmnist", "medmnist3d", "usdata"]


def test_nothing_asks_for_the_download_of_a_subset_the_release_ships(variant):
    """The only downloads asked for are those of the nine subsets the demo's release lacks altogether; with
    the selection of the subsets it has, check, plan, need and the build ask for none."""
    workdir, _, _ = variant
    not_built = (workdir / "results" / "not-built.md").read_text(encoding="utf-8")
    assert re.findall(r"^## (\S+):", not_built, re.MULTILINE) == ["medmnist", "medmnist3d", "usdata"]
    config = yaml.safe_load((workdir / "config.yaml").read_text(encoding="utf-8"))
    config["subsets"] = RESTRICTED + SHIPPED + TEXT  # what the demo's release holds
    (workdir / "release.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    check = _cli("check", "--config", "release.yaml", cwd=workdir)
    assert check.returncode == 0, check.stderr
    assert re.findall(r"^## .*", check.stdout, re.MULTILINE) == []  # no download instructions at all
    needed = re.findall(r"^  (\S+): (\d+) of (\d+) needed files present", check.stdout, re.MULTILINE)
    assert [source for source, present, wanted in needed if present != wanted] == []
    for source in ("aptos2019", "medmnist", "medmcqa", "pubmedqa", "mimic_cxr_reports", "synthrad2023"):
        need = _cli("need", source, "--config", "release.yaml", cwd=workdir)
        assert need.returncode == 0 and need.stdout == "", (source, need.stdout, need.stderr)
        assert f"{source}: 0 files; " in need.stderr, need.stderr
    plan = _cli("plan", "--config", "release.yaml", cwd=workdir)
    assert plan.returncode == 0, plan.stderr
    assert not re.search(r"^not built ", plan.stdout, re.MULTILINE)
    assert re.search(
        r"^from the release .* 30 subsets validated as the release has them, not rebuilt$", plan.stdout, re.M
    )


def test_every_command_names_the_same_state_for_each_subset(variant):
    workdir, _, _ = variant
    results = workdir / "results"
    assert len(EXPECTED) == 56  # every subset of the registry, stated above
    # the workflow: its plan, its not-built lines and counts, and the report's front page
    plans = json.loads((results / "plan.json").read_text(encoding="utf-8"))
    words = {"release": "from the release", "validate": "from the release", "build": "built"}
    planned = {p["subset"]: words.get(p["action"], f"not built: {p['reason']}") for p in plans}
    assert planned == EXPECTED
    summary = (results / "validation" / "summary.txt").read_text(encoding="utf-8")
    listed = re.findall(r"^  (\S+): (not built: .*)$", summary, re.MULTILINE)
    assert dict(listed) == {key: state for key, state in EXPECTED.items() if state.startswith("not built")}
    assert summary.rstrip().endswith("(37 subsets from the release, 10 built).")
    front = (results / "report" / "dashboard.html").read_text(encoding="utf-8")
    cards = dict(re.findall(r'<b data-count="(\w+)">(\d+)</b>', front))
    assert (cards["built"], cards["from_release"], cards["not_built"], cards["failed"]) == ("10", "37", "9", "0")
    shown = re.findall(
        r"<tr><td>([^<]+)</td><td>([^<]+)</td>", front.split("<h3>Not built</h3>", 1)[1].split("</table>")[0]
    )
    assert {key: f"not built: {why}" for key, why in shown} == dict(listed)
    # status, one line per subset
    status = _cli("status", "demo/DATA_BASEDIR", "--json", cwd=workdir)
    assert status.returncode == 0, status.stderr
    assert {row["subset"]: row["state"] for row in json.loads(status.stdout)["subsets"]} == EXPECTED
    # validate: every subset with a state other than "not built" resolves every path, counted by origin
    validate = _cli("validate", "demo/DATA_BASEDIR", "--report", "validate.json", cwd=workdir)
    assert validate.returncode == 0, validate.stdout[-3000:]
    assert "subsets whose every path resolves: 37 from the release, 10 built" in validate.stdout
    states = json.loads((workdir / "validate.json").read_text(encoding="utf-8"))["subsets"]
    valid = {key for key, state in states.items() if state == "ok"}
    assert valid == {key for key, state in EXPECTED.items() if not state.startswith("not built")}
    # check: the subsets from the release, by name (the text subsets need no raw file: they are not listed)
    check = _cli("check", cwd=workdir)
    released = re.search(r"^from the release \(.*\): (.*)$", check.stdout, re.MULTILINE)
    assert released is not None and sorted(released[1].split(", ")) == sorted(SHIPPED)
    assert os.path.isfile(results / "fingerprints.tsv")
