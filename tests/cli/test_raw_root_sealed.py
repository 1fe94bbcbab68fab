"""The raw root sealed both ways (issue 28, items 1-4 and the unreadable raw image of item 7), through the
commands a user types: nothing written into the raw root, nothing read from outside it, nothing dropped
without a name, nothing that blocks on a FIFO.

"Nothing read from outside" is detected, not assumed: the links planted in the raw root point at a FIFO
outside it, watched by a thread that blocks opening the FIFO for writing; that open returns as soon as anybody
opens the FIFO for reading (with O_NONBLOCK too), so a read, or an attempt at one, is recorded.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from conftest import REPO, demo_values

TIMEOUT = 120  # seconds per command: a FIFO that blocks a read fails the test instead of hanging the suite
APTOS = "aptos2019-blindness-detection/train_images"
CT_RATE = "CT-RATE/dataset/valid_fixed"


def run(argv: list[str], wrapper: list[str] | None = None) -> subprocess.CompletedProcess:
    command = [*(wrapper or []), sys.executable, "-m", "preprocess", *argv]
    done = subprocess.run(command, capture_output=True, text=True, cwd=REPO, timeout=TIMEOUT)
    assert "Traceback" not in done.stdout + done.stderr, done.stdout + done.stderr
    return done


def tree_digest(root: Path) -> dict:
    """Every entry under root, never followed, never opened unless a regular file: type, mode, size, mtime,
    content digest or link target (folder mtimes change when an entry is added or removed)."""
    found = {}
    for folder, folders, names in os.walk(root):
        for name in sorted(folders + names):
            path = Path(folder, name)
            info = path.lstat()
            content = None
            if stat.S_ISREG(info.st_mode):
                content = hashlib.sha256(path.read_bytes()).hexdigest() if info.st_mode & 0o444 else "mode-000"
            elif stat.S_ISLNK(info.st_mode):
                content = os.readlink(path)
            found[str(path.relative_to(root))] = (info.st_mode, info.st_size, info.st_mtime_ns, content)
    found["."] = root.lstat().st_mtime_ns
    return found


class FifoWatch:
    """A FIFO outside the raw root and a thread that records whether anybody opened it for reading."""

    def __init__(self, path: Path):
        self.path, self.opened, self._done = path, False, False
        os.mkfifo(path)
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        descriptor = os.open(self.path, os.O_WRONLY)  # returns when a reader opens the FIFO
        self.opened = not self._done
        os.close(descriptor)

    def close(self) -> None:
        self._done = True
        release = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK)  # the test itself, to end the thread
        self._thread.join(timeout=10)
        os.close(release)


@pytest.fixture
def copy(tmp_path, demo_template):
    """A demo copy, its config file (checksums off: tests rewrite raw files) and a FIFO watched outside it."""
    shutil.copytree(demo_template, tmp_path / "demo", symlinks=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    watch = FifoWatch(outside / "watched.fifo")
    secret = outside / "secret.png"
    secret.write_bytes(b"bytes outside the raw root " * 40)
    yield Copy(tmp_path, watch, secret)
    watch.close()


class Copy:
    def __init__(self, tmp: Path, watch: FifoWatch, secret: Path):
        self.tmp, self.watch, self.secret = tmp, watch, secret
        self.demo, self.raw, self.data = tmp / "demo", tmp / "demo" / "raw", tmp / "demo" / "DATA_BASEDIR"
        self.results = tmp / "results"

    def config(self, **values) -> Path:
        path = self.tmp / "config.json"
        path.write_text(json.dumps({**demo_values(self.demo), "verify_checksums": False, **values}))
        return path

    def command(self, name: str, *args: str, wrapper=None, **values) -> subprocess.CompletedProcess:
        argv = [name, *args, "--config", str(self.config(**values))]
        if "--results" not in args:
            argv += ["--results", str(self.results)]
        return run(argv, wrapper)

    def manifest_problems(self, subset: str) -> dict[str, str]:
        rows = {}
        for manifest in (self.results / "convert" / subset).glob("*.tsv"):
            for line in manifest.read_text().splitlines()[1:]:
                item, kind, detail = line.split("\t")
                if kind == "problem":
                    rows[item] = detail
        return rows

    def outside_bytes_in_outputs(self) -> bool:
        secret = self.secret.read_bytes()
        return any(p.is_file() and p.read_bytes() == secret for p in self.data.rglob("*"))


# --- 1. nothing written into the raw root -----------------------------------------------------------------------


def _overlaps(c: Copy) -> dict:
    """name -> (config values, extra arguments, the folders the message names)."""
    alias = c.tmp / "alias"
    alias.symlink_to(c.raw)
    source = c.raw / "aptos2019-blindness-detection"
    return {
        "DATA_BASEDIR is the raw root": ({"data_basedir": str(c.raw)}, [], ("the raw root", "DATA_BASEDIR")),
        "DATA_BASEDIR inside the raw root": ({"data_basedir": str(c.raw / "built")}, [], ("raw root", "holds")),
        "DATA_BASEDIR inside a source folder": ({"data_basedir": str(source / "out")}, [], ("raw root", "holds")),
        "DATA_BASEDIR inside the raw root through a link": (
            {"data_basedir": str(alias / "built")},
            [],
            ("raw root", "holds", f"DATA_BASEDIR {c.raw / 'built'}"),
        ),
        "raw root inside DATA_BASEDIR": ({"data_basedir": str(c.demo)}, [], ("the raw root", "is inside")),
        "results inside the raw root": ({}, ["--results", str(c.raw / "results")], ("results folder",)),
    }


@pytest.mark.parametrize("case", range(6))
def test_overlapping_folders_are_refused_before_anything_is_written(copy, case):
    name, (values, extra, named) = list(_overlaps(copy).items())[case]
    before = tree_digest(copy.demo)
    for command in (["convert", "2D_Task/APTOS"], ["check"]):
        done = copy.command(*command, *extra, **values)
        assert done.returncode == 2, (name, done.stdout, done.stderr)
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), (name, done.stderr)
        assert all(word in lines[0] for word in named), (name, lines[0])
        assert "must be three separate folders" in lines[0], lines[0]
        assert done.stdout == "", done.stdout
    assert tree_digest(copy.demo) == before, name
    assert not copy.results.exists()


def test_a_build_keeps_results_out_of_data_basedir_a_validation_may_keep_them_there(copy):
    """convert writes into both: results inside DATA_BASEDIR are refused. `validate .` run inside the tree
    (results/ there by default) writes nothing into DATA_BASEDIR: allowed."""
    results = copy.data / "results"
    built = copy.command("convert", "2D_Task/APTOS", "--results", str(results))
    assert built.returncode == 2 and not results.exists(), built.stderr
    assert re.fullmatch(
        r"error: DATA_BASEDIR \S+ holds the results folder \S+: .*choose another results folder.*\n", built.stderr
    ), built.stderr
    checked = copy.command("validate", str(copy.data), "--subset", "2D_Task/APTOS", "--results", str(results))
    assert checked.returncode == 1 and checked.stderr == "", checked.stderr  # 1: APTOS is not built yet
    assert "APTOS_test.json: record 0, qry_img_path: missing: '000c1434d8d7.png'" in checked.stdout, checked.stdout


@pytest.mark.parametrize(
    "argv",
    [
        ["convert", "2D_Task/APTOS", "--manifest", "{raw}/aptos2019-blindness-detection/m.tsv"],
        ["check", "--report-dir", "{raw}/reports"],
        ["register", "aptos2019", "--out", "{raw}/own.yaml"],
        ["validate", "{data}", "--subset", "2D_Task/APTOS", "--report", "{raw}/report.json"],
        ["attest", "{data}", "--out", "{raw}/x.tsv"],
        ["attest", "{data}", "--compare", "{data}/../theirs.tsv", "--out", "{raw}/mine.tsv"],
        ["eval-config", "{data}", "--out", "{raw}/eval"],
    ],
)
def test_a_file_named_for_writing_inside_the_raw_root_is_refused(copy, argv):
    argv = [a.format(raw=copy.raw, data=copy.data) for a in argv]
    before = tree_digest(copy.demo)
    done = copy.command(*argv)
    assert done.returncode == 2, done.stdout + done.stderr
    option = argv[-2]
    assert re.fullmatch(rf"error: {option} \S+ is inside the raw root \S+: .*\n", done.stderr), done.stderr
    assert tree_digest(copy.demo) == before


def _snakemake(workdir: Path, *config: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--directory", str(workdir)]
    command += ["--cores", "1", "-n", "--config", *config]
    return subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT)


@pytest.mark.workflow
def test_the_workflow_refuses_overlapping_folders_before_any_job(copy):
    workdir = copy.tmp / "w"
    workdir.mkdir()
    (workdir / "config.yaml").write_text(json.dumps({**demo_values(copy.demo), "demo": None}))
    before = tree_digest(copy.demo)
    inside = _snakemake(workdir, f"data_basedir={copy.raw / 'aptos2019-blindness-detection' / 'out'}")
    assert inside.returncode != 0
    assert re.search(r"the raw root \S+/raw holds DATA_BASEDIR \S+/out: .*three separate folders", inside.stderr)
    # the workflow's results folder is <workdir>/results: a raw root holding the working directory holds it
    results = _snakemake(workdir, f"raw_root={copy.tmp}", f"data_basedir={copy.tmp.parent / 'elsewhere'}")
    assert results.returncode != 0
    assert re.search(r"the raw root \S+ holds the results folder results \(results is \S+/w/results\)", results.stderr)
    for done in (inside, results):
        assert "Traceback" not in done.stdout + done.stderr and "Job stats" not in done.stdout, done.stdout
    assert tree_digest(copy.demo) == before
    assert not (workdir / "results").exists()


# --- 2. nothing read outside the raw root ----------------------------------------------------------------------

# name -> (raw file replaced by a link out of the raw root, subset, the check's verdict)
LINKED = {
    "image folder": (f"{APTOS}/6cd606dc52e9.png", "2D_Task/APTOS", "glob"),
    "NIfTI": (f"{CT_RATE}/valid_2/valid_2_a/valid_2_a_1.nii.gz", "3D_Task/CT_RATE", "glob"),
    "npz": ("MedMNIST/bloodmnist_224.npz", "2D_Task/BloodMNIST", "file"),
    "NRRD": ("HaN-Seg/set_1/case_01/case_01_IMG_CT.nrrd", "3D_Task/HaN-Seg", "glob"),
    "parquet": ("vqa-rad/data/test-00000-of-00001-0b1c2d3e4f.parquet", "2D_Task/VQA-RAD", "glob"),
}


@pytest.mark.parametrize("kind", list(LINKED))
def test_a_raw_file_linked_out_of_the_raw_root_is_never_read(copy, kind):
    relative, subset, verdict = LINKED[kind]
    planted = copy.raw / relative
    planted.unlink()
    planted.symlink_to(copy.watch.path)
    before = tree_digest(copy.raw)
    outside = rf"{re.escape(str(planted))} is a link to {re.escape(str(copy.watch.path))}, outside the raw root"

    checked = copy.command("check", "--quiet")
    assert checked.returncode == 0, checked.stderr
    assert re.search(outside, checked.stdout), checked.stdout[-3000:]

    failed = copy.command("convert", subset)
    assert failed.returncode == 2, failed.stdout + failed.stderr
    assert re.search(outside, failed.stderr), failed.stderr[-3000:]
    if verdict == "glob":  # one item of many: on_bad_input: skip leaves it out, named in the manifest
        skipped = copy.command("convert", subset, on_bad_input="skip")
        assert skipped.returncode == 0, skipped.stdout + skipped.stderr
        assert re.search(r"1 bad items skipped", skipped.stdout), skipped.stdout
        problems = copy.manifest_problems(subset)  # the item, or the conversion when the file held all its items
        assert len(problems) == 1 and re.search(outside, next(iter(problems.values()))), problems
    else:  # the source's one file: the subset cannot be built, named before any job
        assert "cannot be built" in failed.stderr, failed.stderr
    assert not copy.watch.opened, "a command opened the FIFO outside the raw root"
    assert tree_digest(copy.raw) == before


def test_register_never_hashes_a_raw_file_linked_out_of_the_raw_root(copy):
    """register measures the user's copy (MD5s, counts): a file of it that is a link out of the raw root is named,
    as check names it, and never opened."""
    planted = copy.raw / "MedMNIST" / "bloodmnist_224.npz"
    planted.unlink()
    planted.symlink_to(copy.watch.path)
    out = copy.tmp / "own.yaml"
    done = copy.command("register", "medmnist", "--out", str(out))
    assert done.returncode == 2, done.stdout + done.stderr
    outside = rf"{re.escape(str(planted))} is a link to {re.escape(str(copy.watch.path))}, outside the raw root"
    assert re.search(outside, done.stderr) and "Traceback" not in done.stderr, done.stderr
    assert not out.exists() and not copy.watch.opened


def test_a_hard_link_never_points_data_basedir_outside_the_raw_root(copy):
    planted = copy.raw / APTOS / "6cd606dc52e9.png"
    planted.unlink()
    planted.symlink_to(copy.secret)
    done = copy.command("convert", "2D_Task/APTOS", on_bad_input="skip")
    assert done.returncode == 0, done.stdout + done.stderr
    built = copy.data / "2D_Images" / "APTOS" / "train_images"
    assert sorted(p.name for p in built.iterdir()) == ["000c1434d8d7.png", "0024cdab0c1e.png", "82bb8a01935f.png"]
    assert not copy.outside_bytes_in_outputs()
    secret_sha = hashlib.sha256(copy.secret.read_bytes()).hexdigest()
    manifest = next((copy.results / "convert").rglob("*.tsv")).read_text()
    assert secret_sha not in manifest and "outside the raw root" in manifest


def test_links_inside_the_raw_root_and_linked_roots_keep_working(copy):
    """Links within the raw root are followed; a raw root that is a link, and a source folder linked to a mirror
    on another disk (the source's folder is where the configuration says the source lives), work too."""
    mirror = copy.raw / "mirror"
    mirror.mkdir()
    image = copy.raw / APTOS / "6cd606dc52e9.png"
    expected = image.read_bytes()
    shutil.move(image, mirror / image.name)
    image.symlink_to(Path("../../mirror") / image.name)  # a relative link inside the raw root
    volumes = copy.raw / "CT-RATE"
    shutil.move(volumes, copy.tmp / "other-disk-CT-RATE")
    volumes.symlink_to(copy.tmp / "other-disk-CT-RATE")
    root_link = copy.tmp / "raw-link"
    root_link.symlink_to(copy.raw)
    for subset in ("2D_Task/APTOS", "3D_Task/CT_RATE"):
        done = copy.command("convert", subset, raw_root=str(root_link))
        assert done.returncode == 0, done.stdout + done.stderr
        assert "skipped" not in done.stdout
    assert (copy.data / "2D_Images" / "APTOS" / "train_images" / image.name).read_bytes() == expected
    assert len(list((copy.data / "3D_Images" / "CT_RATE" / "valid_fixed_sliced").rglob("*.png"))) > 0


# --- 3. nothing dropped without a name ----------------------------------------------------------------------------


def _plant_unusable(folder: Path) -> dict[str, str]:
    """A FIFO, a folder, a dangling link and a link loop, each named as the recipe's volumes are."""
    planted = {}
    for name, make, why in (
        ("valid_3_a_1.nii.gz", os.mkfifo, "is a FIFO (named pipe), not a regular file"),
        ("valid_3_b_1.nii.gz", os.mkdir, "is a folder, not a regular file"),
        ("valid_3_c_1.nii.gz", lambda p: os.symlink("absent.nii.gz", p), "is a dangling link"),
        ("valid_3_d_1.nii.gz", lambda p: os.symlink(p.name, p), "is a link loop"),
    ):
        case = folder / name.rsplit("_", 1)[0]
        case.mkdir(parents=True)
        make(case / name)
        planted[str(case / name)] = why
    return planted


def test_every_raw_item_that_is_not_a_regular_file_is_named_and_counted(copy):
    planted = _plant_unusable(copy.raw / CT_RATE / "valid_3")
    before = tree_digest(copy.raw)
    checked = copy.command("check", "--source", "ct_rate", "--quiet")
    assert checked.returncode == 0 and "ct_rate: 4 raw files found cannot be used" in checked.stdout, checked.stdout
    for path, why in planted.items():
        assert f"{path} {why}" in checked.stdout, checked.stdout

    failed = copy.command("convert", "3D_Task/CT_RATE", "--shard", "1/1")
    assert failed.returncode == 2, failed.stdout + failed.stderr
    assert re.search(r"error: raw file \S+/valid_3_\w_1\.nii\.gz (is a|is a link)", failed.stderr), failed.stderr

    skipped = copy.command("convert", "3D_Task/CT_RATE", "--shard", "1/1", on_bad_input="skip")
    assert skipped.returncode == 0, skipped.stdout + skipped.stderr
    assert "shard 1/1: 7 items" in skipped.stdout and "4 bad items skipped" in skipped.stdout, skipped.stdout
    problems = copy.manifest_problems("3D_Task/CT_RATE")
    assert sorted(problems) == sorted(planted), problems
    for path, why in planted.items():
        assert why in problems[path], problems[path]
    assert tree_digest(copy.raw) == before


# --- 4. nothing that blocks on a FIFO --------------------------------------------------------------------------


def test_an_npz_that_is_a_fifo_ends_in_seconds_naming_it(copy):
    npz = copy.raw / "MedMNIST" / "bloodmnist_224.npz"
    npz.unlink()
    os.mkfifo(npz)
    for values in ({}, {"verify_checksums": True}):
        done = copy.command("convert", "2D_Task/BloodMNIST", **values)
        assert done.returncode == 2, done.stdout + done.stderr
        assert f"{npz} is a FIFO (named pipe), not a regular file" in done.stderr, done.stderr
    checked = copy.command("check", "--source", "medmnist", "--quiet")
    assert "bloodmnist_224.npz is a FIFO (named pipe)" in checked.stdout, checked.stdout


def test_a_task_json_that_is_a_fifo_ends_validate_in_seconds_naming_it(copy):
    task = copy.data / "2D_Task" / "APTOS" / "APTOS_test.json"
    task.unlink()
    os.mkfifo(task)
    done = copy.command("validate", str(copy.data), "--subset", "2D_Task/APTOS")
    assert done.returncode == 1, done.stdout + done.stderr
    assert re.search(
        r"APTOS_test\.json: file, <file>: bad_record: '' cannot read task file: .*not a regular "
        r"file: a FIFO",
        done.stdout,
    ), done.stdout


# --- 7. an unreadable raw image -----------------------------------------------------------------------------------


def _without_override() -> list[str] | None:
    """A wrapper that runs a command without the power to read any file (as root: no CAP_DAC_OVERRIDE nor
    CAP_DAC_READ_SEARCH, so mode 000 holds as it does for any user); None when not root."""
    if os.geteuid() != 0:
        return []
    wrapper = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search", "--"]
    if shutil.which("setpriv") is None:
        return None
    return wrapper


def test_an_unreadable_raw_image_is_bad_input_not_a_read_only_data_basedir(copy):
    wrapper = _without_override()
    image = copy.raw / APTOS / "6cd606dc52e9.png"
    image.chmod(0)
    try:
        if wrapper is None or subprocess.run([*wrapper, "cat", str(image)], capture_output=True).returncode == 0:
            pytest.skip("mode 000 cannot be made to hold here (root without setpriv): the case would not be tested")
        failed = copy.command("convert", "2D_Task/APTOS", wrapper=wrapper)
        assert failed.returncode == 2, failed.stdout + failed.stderr
        assert f"error: raw file {image} cannot be read (permission denied): fix its permissions" in failed.stderr, (
            failed.stderr
        )
        assert "read-only" not in failed.stderr
        skipped = copy.command("convert", "2D_Task/APTOS", wrapper=wrapper, on_bad_input="skip")
        assert skipped.returncode == 0, skipped.stdout + skipped.stderr
        assert "1 bad items skipped" in skipped.stdout, skipped.stdout
        assert "fix its permissions" in copy.manifest_problems("2D_Task/APTOS")[str(image)]
        built = copy.data / "2D_Images" / "APTOS" / "train_images"
        assert sorted(os.listdir(built)) == ["000c1434d8d7.png", "0024cdab0c1e.png", "82bb8a01935f.png"]
    finally:
        image.chmod(0o644)
