"""Bad input of the output side: a full disk, a read-only DATA_BASEDIR, a kill between write and rename, names
with a newline or U+2028, and a validation that reports each bad file as a row."""

from __future__ import annotations

import contextlib
import csv
import errno
import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from badinput import Planted, _bmp, _tree
from conftest import REPO, demo_settings, demo_values
from digests import tree_digests
from preprocess import cli
from preprocess.pipeline import steps


class _FullDisk:
    """The writer's `os` with os.write failing ENOSPC after `allowed` writes (a disk that fills up mid-job)."""

    def __init__(self, allowed: int):
        self.allowed, self.refused = allowed, 0

    def __getattr__(self, name):
        return getattr(os, name)

    def write(self, descriptor, data):
        if self.allowed == 0:
            self.refused += 1
            raise OSError(errno.ENOSPC, "No space left on device")
        self.allowed -= 1
        return os.write(descriptor, data)


def _contents(base: Path) -> dict:
    """Every file and link under base (but the lock folder) by its bytes' digest or its target."""
    return {path: digest for path, digest in tree_digests(base).items() if not path.startswith(".medheb-locks")}


def test_a_full_disk_stops_the_job_naming_the_output_and_a_rerun_resumes_to_the_same_tree(planted, monkeypatch):
    from preprocess.convert import outputs

    disk = _FullDisk(allowed=3)
    monkeypatch.setattr(outputs, "os", disk)
    code, text = planted.convert("2D_Task/BloodMNIST")
    assert code == 2 and disk.refused == 1, text
    assert re.search(
        r"error: cannot write \S+/DATA_BASEDIR/2D_Images/BloodMNIST/\S+\.png \(No space left on device\); the disk "
        r"holding DATA_BASEDIR is full: free space there, then run again \(finished files are kept\)",
        text,
    ), text
    images = planted.data / "2D_Images" / "BloodMNIST"
    assert len([p for p in images.rglob("*") if p.is_file()]) == 3  # the three writes before the disk filled
    assert not list(planted.data.rglob("*.part"))
    monkeypatch.setattr(outputs, "os", os)  # space freed
    code, text = planted.convert("2D_Task/BloodMNIST")
    assert code == 0, text
    resumed = _contents(planted.data)
    manifest = next((planted.results / "convert").rglob("*.tsv")).read_bytes()
    shutil.rmtree(images)
    assert planted.convert("2D_Task/BloodMNIST")[0] == 0  # a fresh build of the same subset
    assert resumed == _contents(planted.data)
    assert next((planted.results / "convert").rglob("*.tsv")).read_bytes() == manifest


def _can_write(folder: Path) -> bool:
    try:
        (folder / ".probe").write_text("")
    except OSError:
        return False
    (folder / ".probe").unlink()
    return True


_READ_ONLY_MOUNT = 'mount --bind "$0" "$0" && mount -o remount,ro,bind "$0" "$0" && exec "$@"'


def _convert_read_only(p: Planted, folder: Path, subset: str, **values) -> tuple[int, str]:
    """`convert` with `folder` read-only: chmod 0555, and where that does not stop writes (root), the folder
    mounted read-only in a private mount namespace around `python -m preprocess convert`."""
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o555)
    try:
        if not _can_write(folder):
            return p.convert(subset, **values)
        if subprocess.run(["unshare", "-m", "sh", "-c", _READ_ONLY_MOUNT, str(folder), "true"]).returncode:
            pytest.skip("running as root without a private mount namespace: no way to make a folder read-only")
        config = p.tmp / "config.json"
        config.write_text(json.dumps({**demo_values(p.demo), "verify_checksums": False, **values}))
        before = _tree(p.tmp, (p.data, p.results))
        argv = [sys.executable, "-m", "preprocess", "convert", subset, "--config", str(config)]
        command = ["unshare", "-m", "sh", "-c", _READ_ONLY_MOUNT, str(folder), *argv, "--results", str(p.results)]
        done = subprocess.run(command, capture_output=True, text=True, cwd=REPO)
        assert _tree(p.tmp, (p.data, p.results)) == before, "something outside DATA_BASEDIR and results changed"
        assert "Traceback" not in done.stdout + done.stderr, done.stderr
        return done.returncode, done.stdout + done.stderr
    finally:
        folder.chmod(0o755)


def test_a_read_only_data_basedir_is_refused_before_anything_is_written(planted):
    before = _tree(planted.data, ())
    code, text = _convert_read_only(planted, planted.data, "2D_Task/APTOS")
    assert code == 2, text
    assert re.search(
        rf"error: DATA_BASEDIR {re.escape(str(planted.data))} is not writable \((Permission denied|Read-only file "
        r"system)\): the built images go there; fix its permissions or choose another folder",
        text,
    ), text
    assert _tree(planted.data, ()) == before


def test_a_read_only_folder_of_data_basedir_stops_the_job_naming_the_output(planted):
    """A folder of the tree made read-only (a restored backup, say): the first output there stops the job, even
    with on_bad_input: skip (no raw item is at fault: skipping would drop them all)."""
    folder = planted.data / "2D_Images" / "APTOS" / "train_images"
    code, text = _convert_read_only(planted, folder, "2D_Task/APTOS", on_bad_input="skip")
    assert code == 2, text
    assert re.search(
        rf"error: cannot write {re.escape(str(folder))}/\w+\.png \((Permission denied|Read-only file system)\); "
        r"DATA_BASEDIR \(or this folder of it\) is read-only: make it writable, then run again",
        text,
    ), text
    assert os.listdir(folder) == [] and "skipped" not in text


def test_a_kill_between_write_and_rename_leaves_a_part_the_next_run_removes(planted, tmp_path, outside_checkout):
    """A real SIGKILL of `python -m preprocess convert` at its second rename; the rerun removes the .part and
    status lists none; a .part of no job of ours (another tool's, or another shard's) stays listed."""
    config = planted.tmp / "config.json"
    config.write_text(json.dumps({**demo_values(planted.demo), "verify_checksums": False}))
    killer = (
        "import os, signal, sys\n"
        "from preprocess import cli\n"
        "real, seen = os.replace, []\n"
        "def replace(src, dst):\n"
        "    seen.append(dst)\n"
        "    if len(seen) == 2:\n"
        "        os.kill(os.getpid(), signal.SIGKILL)\n"
        "    return real(src, dst)\n"
        "os.replace = replace\n"
        "sys.exit(cli.main(sys.argv[1:]))\n"
    )
    argv = ["convert", "2D_Task/APTOS", "--config", str(config), "--results", str(planted.results)]
    done = subprocess.run([sys.executable, "-c", killer, *argv], capture_output=True, text=True, cwd=REPO)
    assert done.returncode == -9, done.stderr
    images = planted.data / "2D_Images" / "APTOS" / "train_images"
    left = [p.name for p in images.iterdir() if p.name.endswith(".part")]
    assert len(left) == 1 and left[0].endswith(".medheb-image_folder-0of1.part"), os.listdir(images)
    code, text = planted.convert("2D_Task/APTOS")
    assert code == 0 and f"removed 1 temporary files an interrupted run left, e.g. {images / left[0]}" in text, text
    assert not list(planted.data.rglob("*.part"))
    status = ["status", str(planted.data), "--config", str(config), "--json", "--results", str(planted.results)]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        cli.main(status)
    assert json.loads(out.getvalue())["part_files"] == []
    foreign = planted.data / "2D_Images" / "ISIC-2019" / ".ISIC_0034321.jpg.medheb-image_folder-1of2.part"
    foreign.parent.mkdir(parents=True)
    foreign.write_bytes(b"half")
    assert planted.convert("2D_Task/APTOS")[0] == 0 and foreign.exists()  # not APTOS's: left alone
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        cli.main(status)
    assert json.loads(out.getvalue())["part_files"] == [str(foreign)]


def test_names_with_a_newline_or_u2028_keep_the_manifest_and_the_later_steps_whole(planted, tmp_path):
    """A raw folder name holding a newline and a file name holding U+2028 (Brain-Tumor-MRI's image folder): the
    manifest keeps one row per file, and the contact-sheet and validation steps read it."""
    testing = planted.raw / "brain-tumor-mri-dataset" / "Testing"
    odd = testing / "glio\nma" / "Te-gl\u2028_0099.jpg"
    odd.parent.mkdir()
    shutil.copyfile(testing / "glioma" / "Te-gl_0010.jpg", odd)
    code, text = planted.convert("2D_Task/Brain-Tumor-MRI")
    assert code == 0, text
    manifest = planted.results / "convert" / "2D_Task" / "Brain-Tumor-MRI" / "image_folder.0-of-1.tsv"
    with open(manifest, encoding="utf-8", newline="") as handle:  # any TSV reader, quoted fields and all
        rows = [tuple(row) for row in csv.reader(handle, dialect="excel-tab")][1:]
    expected = "2D_Images/Brain-Tumor-MRI/datasets/Testing/glio\nma/Te-gl\u2028_0099.jpg"
    assert [row[0] for row in rows if "glio\n" in row[0]] == [expected] and len(rows) == 6
    assert all(len(row) == 3 and row[1] == "file" for row in rows)
    build = steps.Build(demo_settings(planted.demo), results=planted.results)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        build.contact_sheet(manifests=[manifest], out=tmp_path / "sheet.png")
        found = build.validate(subset="2D_Task/Brain-Tumor-MRI", report_out=tmp_path / "v.json", manifests=[manifest])
    assert "6 of 6 images on the sheet" in out.getvalue() and (tmp_path / "sheet.png").stat().st_size > 0
    assert found and all(report.passed for report in found)
    assert json.loads((tmp_path / "v.json").read_text())["skipped_items"] == []


def test_validate_reports_each_bad_file_as_a_row_and_finishes_the_table(planted):
    """`python -m preprocess validate` on a built APTOS whose task file also names a decompression-bomb BMP, a
    FIFO, a folder and `sub\\\\a.png`, beside a 100k-deep task JSON: one row each, every other row still checked,
    exit 1, no traceback."""
    assert planted.convert("2D_Task/APTOS")[0] == 0
    root = planted.data / "2D_Images" / "APTOS" / "train_images"
    (root / "bomb.bmp").write_bytes(_bmp(40000, 40000))
    os.mkfifo(root / "fifo.png")
    (root / "folder.png").mkdir()
    (root / "sub").mkdir()
    shutil.copyfile(root / "000c1434d8d7.png", root / "sub" / "a.png")
    task = planted.data / "2D_Task" / "APTOS" / "APTOS_test.json"
    records = json.loads(task.read_text())
    good = len(records)
    records += [{**records[0], "qry_img_path": name} for name in ("bomb.bmp", "fifo.png", "folder.png", "sub\\a.png")]
    task.write_text(json.dumps(records))
    (task.parent / "deep.json").write_text("[" * 100000 + "]" * 100000)
    config = planted.tmp / "config.json"
    config.write_text(json.dumps(demo_values(planted.demo)))
    argv = ["validate", str(planted.data), "--subset", "2D_Task/APTOS", "--config", str(config)]
    done = subprocess.run([sys.executable, "-m", "preprocess", *argv], capture_output=True, text=True, cwd=REPO)
    out = done.stdout + done.stderr
    assert done.returncode == 1 and "Traceback" not in out, out
    shown = "2D_Task/APTOS/APTOS_test.json"
    for row in (
        rf"{shown}: record {good}, qry_img_path: unreadable: 'bomb.bmp' refused: .*decompression bomb",
        rf"{shown}: record {good + 1}, qry_img_path: unreadable: 'fifo.png' a FIFO \(named pipe\), not a regular file",
        rf"{shown}: record {good + 2}, qry_img_path: unreadable: 'folder.png' a folder, not a regular file",
        rf"{shown}: record {good + 3}, qry_img_path: unsafe: 'sub\\\\a.png' image path: .* holds a backslash",
        r"2D_Task/APTOS/deep.json: file, <file>: bad_record: '' cannot read task file: .*nested too deep",
    ):
        assert re.search(row, out), (row, out)
    assert re.search(rf"{shown}\s+{good + 4}\s+0\s+{good + 4}\s+{good}\s+0\s+3\s+1", out), out  # the table row


@pytest.fixture
def planted(tmp_path, demo_template) -> Planted:
    return Planted(tmp_path, demo_template)
