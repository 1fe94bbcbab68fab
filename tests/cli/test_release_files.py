"""The release's own files as every command reads them (issue 36, items 3, 6 and 7): a task JSON or Train_Data
JSONL that exists but cannot be read is named, with what is wrong with it, by check, plan, status, convert and
validate alike; a record path that names no file under its root is a bad item named by its task file and
record, never joined to the root nor written.

The expected messages are written out here; the demo's PathVQA release (six records naming three images,
preprocess/demo) is the subset whose outputs its task JSON names."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, demo_config_file, demo_settings
from preprocess.pipeline import steps
from preprocess.registry.loader import load_registry
from preprocess.release import releasenames
from preprocess.verify import attest, validate

TASK = "2D_Task/PathVQA/Path-VQA_test.json"
TRAIN = "Train_Data/2D_Task/PathVQA/Path-VQA_train.jsonl"  # the registry lists it under 2D_Task/PathVQA


def _cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "preprocess", *args], cwd=REPO, capture_output=True, text=True)


def test_a_deeply_nested_task_json_is_named_by_check_plan_status_and_convert(demo, tmp_path):
    (demo / "DATA_BASEDIR" / TASK).write_text("[" * 200000 + "]" * 200000)
    config, results = str(demo_config_file(demo, tmp_path / "config.json")), str(tmp_path / "results")
    said = f"release: {TASK} cannot be read: lists or objects nested too deep to read; replace it with the "
    said += "benchmark release's file"
    done = _cli("check", "--config", config, "--results", results, "--quiet")  # every subset's plan is made
    assert done.returncode == 0 and "unexpected" not in done.stderr, done.stderr
    assert f"2D_Task/PathVQA: {said}" in done.stdout
    done = _cli("plan", "--config", config, "--results", results)
    assert done.returncode == 0 and "unexpected" not in done.stderr, done.stderr
    assert "2D_Task/PathVQA" in done.stdout and "release file unreadable" in done.stdout, done.stdout
    done = _cli("status", str(demo / "DATA_BASEDIR"), "--config", config, "--json", "--results", results)
    assert done.returncode == 0 and "unexpected" not in done.stderr, done.stderr
    rows = {row["subset"]: row for row in json.loads(done.stdout)["subsets"]}
    assert rows["2D_Task/PathVQA"]["state"] == "not built: release file unreadable"
    assert said in rows["2D_Task/PathVQA"]["next_step"]
    done = _cli("convert", "PathVQA", "--config", config, "--results", results)
    assert done.returncode != 0 and "unexpected" not in done.stderr and "Traceback" not in done.stderr
    assert "2D_Task/PathVQA: not built: release file unreadable" in done.stderr and said in done.stderr
    assert not (demo / "DATA_BASEDIR" / "2D_Images" / "PathVQA").exists()


def _fifo(path: Path) -> None:
    path.unlink()
    os.mkfifo(path)


@pytest.mark.parametrize(
    ("make", "problem"),
    [
        (lambda p: p.write_text("42"), "expected a JSON list of records, got int 42"),
        (lambda p: p.write_text('{"qry_img_path": "a.png"}'), "expected a JSON list of records, got an object"),
        (lambda p: p.write_bytes(b'[{"qry_text": "caf\xe9"}]'), "not UTF-8 text (byte 0xe9 at offset 18 "),
        (_fifo, "not a regular file: a FIFO (named pipe)"),
    ],
    ids=["number", "object", "latin-1", "fifo"],
)
def test_a_task_json_that_exists_but_cannot_be_read_says_what_is_wrong(demo, make, problem):
    make(demo / "DATA_BASEDIR" / TASK)
    registry = load_registry(demo / "registry-overrides.yaml")
    lines = releasenames.missing(demo / "DATA_BASEDIR", registry, registry.subset("PathVQA"), releasenames.TEST)
    assert len(lines) == 1 and lines[0].startswith(f"release: {TASK} cannot be read: {problem}"), lines
    assert lines[0].endswith("; replace it with the benchmark release's file") and "download" not in lines[0]
    # attest leaves the file out with the same words (its fingerprints are of the images the others name)
    subset = registry.subset("PathVQA")
    named = attest.named_images(registry, subset, demo / "DATA_BASEDIR", None, train=False)
    assert len(named.unreadable_files) == 1 and named.unreadable_files[0].startswith(f"{TASK}: {problem}")


def test_a_fifo_or_dangling_link_train_jsonl_is_listed(demo):
    data = demo / "DATA_BASEDIR"
    registry = load_registry(demo / "registry-overrides.yaml")
    _fifo(data / TRAIN)  # listed under PathVQA: its train build is stopped, naming the file
    gone = data / "Train_Data" / "2D_Task" / "Extra" / "extra_train.jsonl"  # listed under no subset
    gone.parent.mkdir()
    gone.symlink_to(data / "Train_Data" / "nowhere.jsonl")
    lines = releasenames.missing(data, registry, registry.subset("PathVQA"), releasenames.TRAIN)
    assert lines == [
        f"release: {TRAIN} cannot be read: not a regular file: a FIFO (named pipe); replace it with the benchmark "
        "release's file"
    ]
    reports = validate.validate_train_data(registry, data, registry.subset("PathVQA"))
    reasons = {r.file: [f.reason for f in r.failures] for r in reports}
    assert reasons[TRAIN] == ["cannot read task file: not a regular file: a FIFO (named pipe)"]
    reports = validate.validate_train_data(registry, data, None)  # the files no subset answers for
    reasons = {r.file: [f.reason for f in r.failures] for r in reports}
    link = "Train_Data/2D_Task/Extra/extra_train.jsonl"
    assert reasons[link] == [
        f"cannot read task file: a symbolic link to {data / 'Train_Data' / 'nowhere.jsonl'}, which does not exist"
    ]


def _manifest_problems(path: Path) -> list[list[str]]:
    with open(path, encoding="utf-8", newline="") as handle:
        return [row for row in csv.reader(handle, dialect="excel-tab") if row[1] == "problem"]


def test_unsafe_record_paths_are_bad_items_named_by_task_file_and_record(demo, tmp_path):
    """Each planted record asks record 0's question with record 0's answers, so only its path is wrong:
    absolute (joined to the root today), a NUL byte, and a file name of 300 bytes."""
    task = demo / "DATA_BASEDIR" / TASK
    records = json.loads(task.read_text())
    planted = ["/elsewhere/slide_A12.jpg", "liver/slide\0A12.jpg", "liver/" + "s" * 296 + ".jpg"]
    task.write_text(json.dumps(records + [{**records[0], "qry_img_path": path} for path in planted]))
    where = [f"{task} record {number}" for number in (6, 7, 8)]
    reasons = [
        "qry_img_path: absolute path '/elsewhere/slide_A12.jpg' is not allowed (paths are relative)",
        "qry_img_path: path 'liver/slide\\x00A12.jpg' holds a backslash or NUL (paths use '/')",
        f"qry_img_path: path 'liver/{'s' * 74}'... has a component longer than 255 bytes",
    ]
    images = demo / "DATA_BASEDIR" / "2D_Images" / "PathVQA"

    with pytest.raises(Exception, match="3 bad items in the release's records") as stopped:  # on_bad_input: fail
        steps.Build(demo_settings(demo)).convert(subset="PathVQA")
    for place, reason in zip(where, reasons, strict=True):
        assert f"{place}: {reason}" in str(stopped.value)
    assert not images.exists()

    manifest = tmp_path / "manifest.tsv"
    steps.Build(demo_settings(demo, on_bad_input="skip")).convert(subset="PathVQA", manifest=manifest)
    assert _manifest_problems(manifest) == [
        [place, "problem", f"{place}: {reason}"] for place, reason in zip(where, reasons, strict=True)
    ]
    assert b"\0" not in manifest.read_bytes()
    built = sorted(p.relative_to(images).as_posix() for p in images.rglob("*") if p.is_file())
    assert built == [
        "test_images/kidney/slide_C33.png",
        "test_images/liver/slide_A12.jpg",
        "test_images/liver/slide_B07.png",
    ]


def test_an_absolute_train_data_path_is_a_bad_item_of_the_subset_it_names(demo):
    """A Train_Data path is relative to DATA_BASEDIR; an absolute one is no path of the build (validate: unsafe),
    yet the subset it names answers for it: its train conversion lists it instead of passing over it."""
    train = demo / "DATA_BASEDIR" / TRAIN
    with open(train, "a", encoding="utf-8") as handle:  # its fifth line, record 4
        handle.write(json.dumps({"messages": [], "images": ["/2D_Images/PathVQA/train_images/lung/x.png"]}) + "\n")
    registry = load_registry(demo / "registry-overrides.yaml")
    named = releasenames.named_records(demo / "DATA_BASEDIR", registry, registry.subset("PathVQA"), releasenames.TRAIN)
    reason = "images: absolute path '/2D_Images/PathVQA/train_images/lung/x.png' is not allowed (paths are relative)"
    assert releasenames.unsafe_items(named) == [(f"{train} record 4", f"{train} record 4: {reason}")]
    assert "2D_Images/PathVQA/train_images/lung/x.png" not in {path for record in named for path in record.paths}
