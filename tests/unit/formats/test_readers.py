"""One bounded reader for every config and release file (issue 39, items 5, 10, 13 and 14).

- A whole number of 5,000 digits (more than Python's int-max-str-digits converts) in a task JSON, a Train_Data
  JSONL line, a config, an override file or a raw annotation file is named with its file and line, never
  "unexpected ValueError"; in a JSONL it fails that file alone.
- `--config` (and the registry overrides it names) that is a FIFO, a folder or a device is refused at once.
- A record path longer than a path can be is `unsafe`, quoted cut short, never an image to attest.
- A task JSON that cannot be read (a folder, a socket, UTF-16, a link out of DATA_BASEDIR) of a subset whose
  build reads no records (APTOS) is named by check, plan and convert, as by validate.

The expected messages are written out here. Hostile files are planted in a private copy of the demo."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, demo_config_file, demo_settings, without_checksums
from preprocess.errors import RawDataError
from preprocess.formats import textparse
from preprocess.pipeline import steps
from preprocess.registry.loader import load_registry
from preprocess.release import releasenames
from preprocess.verify import attest, validate

TIMEOUT = 60  # a command that waits on a FIFO fails the test here instead of hanging the suite
LONG = "9" * 5000
TOO_LONG = "holds a whole number of 5,000 digits, more than the 4,300 Python converts"
REPLACE = "replace it with the benchmark release's file"
APTOS = "2D_Task/APTOS/APTOS_test.json"  # an image-folder subset: its build reads no record
PATHVQA = "2D_Task/PathVQA/Path-VQA_test.json"  # record-driven: its task JSON names its outputs
TRAIN = "Train_Data/2D_Task/PathVQA/Path-VQA_train.jsonl"


def _cli(*args) -> subprocess.CompletedProcess:
    """A command run from the checkout (`python -m` imports this copy of the package)."""
    done = subprocess.run(
        [sys.executable, "-m", "preprocess", *args], cwd=REPO, capture_output=True, text=True, timeout=TIMEOUT
    )
    assert "unexpected" not in done.stderr and "Traceback" not in done.stderr, done.stderr
    return done


def _with_long_number(path: Path) -> None:
    """The file's records, one a line, with a 5,000-digit number as the list's first element (line 2)."""
    records = json.loads(path.read_text(encoding="utf-8"))
    path.write_text("[\n" + f"{LONG},\n" + ",\n".join(json.dumps(r) for r in records) + "\n]\n", encoding="utf-8")


def _line_of(output: str, subset: str) -> str:
    return next(line for line in output.splitlines() if line.startswith(subset + " "))


# --- item 5: a number too long for Python, in every JSON, JSONL and YAML reader -------------------------


def test_the_parser_names_the_line_of_a_number_too_long():
    text = '["' + "1" * 5000 + '",\n -' + "1" * 5000 + "]"  # the digits in the string are text, not a number
    with pytest.raises(textparse.TextError) as raised:
        textparse.json_value(text, "x.json")
    assert (
        str(raised.value) == "x.json: line 2 holds a whole number of 5,000 digits, more than the 4,300 Python converts"
    )
    floats = textparse.json_value("[1." + "1" * 5000 + ", 1e" + "1" * 5000 + "]", "y.json")  # floats convert
    assert floats[0] == pytest.approx(1.1111111111111112) and floats[1] == float("inf")

    rows = textparse.jsonl_values('{"a": 1}\n\n{"b": ' + LONG + "}\n[1\n", "t.jsonl")
    assert rows == [
        (0, {"a": 1}),
        (2, textparse.BrokenLine(f"line 3 {TOO_LONG}")),
        (3, textparse.BrokenLine("line 4 is not valid JSON: Expecting ',' delimiter")),
    ]
    with pytest.raises(textparse.TextError, match=r"^c.yaml: the value at line 2 column 4 is a whole number of 5,000"):
        textparse.yaml_value("a: 1\nb: " + LONG + "\n", "c.yaml")
    with pytest.raises(textparse.TextError) as raised:
        textparse.yaml_value("when: 2020-02-30\n", "c.yaml")
    assert str(raised.value) == "c.yaml: the value at line 1 column 7 cannot be read (day is out of range for month)"


@pytest.mark.parametrize(("task", "subset"), [(APTOS, "2D_Task/APTOS"), (PATHVQA, "2D_Task/PathVQA")])
def test_a_number_too_long_in_a_task_json_is_named_by_check_plan_and_convert(demo, tmp_path, task, subset):
    _with_long_number(demo / "DATA_BASEDIR" / task)
    config, results = str(demo_config_file(demo, tmp_path / "config.json")), str(tmp_path / "results")
    said = f"release: {task} cannot be read: line 2 {TOO_LONG}; {REPLACE}"
    done = _cli("check", "--config", config, "--results", results, "--quiet")
    assert done.returncode == 0 and f"  {subset}: {said}" in done.stdout, done.stdout[-3000:]
    done = _cli("plan", "--config", config, "--results", results)
    assert done.returncode == 0 and _line_of(done.stdout, subset).endswith("no: release file unreadable")
    images = demo / "DATA_BASEDIR" / "2D_Images" / subset.split("/")[1]
    assert not images.exists()
    done = _cli("convert", subset, "--config", config, "--results", results)
    assert done.returncode != 0 and f"{subset}: not built: release file unreadable" in done.stderr
    assert said in done.stderr and not images.exists()


@pytest.mark.registry_wide
def test_a_number_too_long_in_a_train_jsonl_fails_that_file_alone(demo, tmp_path):
    """validate and status used to stop for every subset; now the one file fails, naming its line."""
    train = demo / "DATA_BASEDIR" / TRAIN
    lines = train.read_text(encoding="utf-8").rstrip("\n").split("\n")
    train.write_text("\n".join([lines[0], '{"messages": [], "n": ' + LONG + "}", *lines[1:]]) + "\n")
    config, results = str(demo_config_file(demo, tmp_path / "config.json")), str(tmp_path / "results")
    assert _cli("convert", "PathVQA", "--config", config, "--results", results).returncode == 0
    done = _cli("validate", str(demo / "DATA_BASEDIR"), "--config", config, "--results", results)
    assert done.returncode != 0
    assert f"{TRAIN}: file, <file>: bad_record: '' cannot read task file: line 2 {TOO_LONG}" in done.stdout
    assert _line_of(done.stdout, PATHVQA).endswith(" ok")  # the test file beside it still validates
    assert _line_of(done.stdout, "Text_Task/MedMCQA/medmcqa_test.json").endswith(" ok")
    done = _cli("status", str(demo / "DATA_BASEDIR"), "--config", config, "--results", results, "--json")
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)["subsets"]
    assert len(rows) == len(load_registry(demo / "registry-overrides.yaml").subsets)


def test_a_number_too_long_in_a_config_or_an_override_file_names_it(demo, tmp_path):
    config = tmp_path / "config.yaml"
    config.write_text(f"raw_root: {demo / 'raw'}\nmax_volume_voxels: {LONG}\n")
    done = _cli("check", "--config", str(config))
    assert done.returncode != 0
    assert done.stderr.startswith(
        f"error: cannot read config file {config}: the value at line 2 column 20 is a whole number of 5,000 digits"
    )
    overrides = demo / "registry-overrides.yaml"
    overrides.write_text(f"x: {LONG}\n" + overrides.read_text())
    done = _cli("check", "--config", str(demo_config_file(demo, tmp_path / "demo.json")))
    assert done.returncode != 0
    assert (
        f"error: cannot read registry file {overrides}: the value at line 1 column 4 is a whole number" in done.stderr
    )


def test_a_number_too_long_in_a_raw_annotation_file_is_bad_input_named(demo):
    boxes = demo / "raw" / "Kvasir-SEG" / "kavsir_bboxes.json"
    boxes.write_text(boxes.read_text().replace('"height": 60', f'"height": {LONG}', 1))
    without_checksums(demo, "kvasir_seg")
    with pytest.raises(RawDataError) as raised:
        steps.Build(demo_settings(demo)).convert(subset="Gastrointestinal", conversion="kvasir_seg")
    assert str(raised.value) == f"{boxes}: line 1 {TOO_LONG}; unzip Kvasir-SEG again"


# --- item 10: a config or override file that is no regular file ------------------------------------------


@pytest.mark.parametrize(
    ("make", "what"),
    [
        (lambda p: os.mkfifo(p), "a FIFO (named pipe)"),
        (lambda p: p.mkdir(), "a folder"),
        (lambda p: p.symlink_to("/dev/zero"), "a character device"),
    ],
    ids=["fifo", "folder", "device"],
)
def test_a_config_that_is_no_regular_file_is_refused_at_once(tmp_path, make, what):
    config = tmp_path / "config.yaml"
    make(config)
    for command in (["check"], ["plan"], ["convert", "APTOS"], ["validate", str(tmp_path)]):
        done = _cli(*command, "--config", str(config))  # within TIMEOUT, or the test fails
        assert done.returncode != 0
        assert done.stderr == (
            f"error: cannot read config file {config}: not a regular file: {what}; give a YAML file of the keys of "
            "config.yaml\n"
        )


def test_registry_overrides_that_are_a_fifo_or_too_large_are_refused(demo, tmp_path):
    fifo = tmp_path / "overrides.yaml"
    os.mkfifo(fifo)
    done = _cli("check", "--config", str(demo_config_file(demo, tmp_path / "c.json", registry_overrides=str(fifo))))
    assert done.returncode != 0
    assert f"error: cannot read registry file {fifo}: not a regular file: a FIFO (named pipe)" in done.stderr
    sparse = tmp_path / "config.yaml"
    with open(sparse, "wb") as handle:
        handle.truncate(16 * 1024 * 1024 + 1)  # a hole: no disk written
    done = _cli("check", "--config", str(sparse))
    assert done.returncode != 0
    assert f"{sparse}: 16,777,217 bytes, more than the 16,777,216 such a file may hold" in done.stderr


# --- item 13: a record path longer than any path can be --------------------------------------------------

HUGE = "ab/" * 350000 + "x.png"  # a megabyte of short parts: no part over 255 bytes
HUGE_SAID = f"path {'ab/' * 26 + 'ab'!r}... is 1,050,005 bytes long"  # its first 80 characters


def _plant_paths(task: Path, *paths: str) -> int:
    """Records asking record 0's question of other paths, after the file's own; the first one's number."""
    records = json.loads(task.read_text())
    task.write_text(json.dumps(records + [{**records[0], "qry_img_path": path} for path in paths]))
    return len(records)


def test_a_record_path_over_path_max_is_unsafe_and_quoted_short(demo, tmp_path):
    settings = demo_settings(demo)
    steps.Build(settings).convert(subset="APTOS", manifest=tmp_path / "m.tsv")
    # 4,094 bytes: under PATH_MAX alone, over it once joined to DATA_BASEDIR: no file can have that name either
    joined = "ab/" * 1363 + "x.png"
    first = _plant_paths(demo / "DATA_BASEDIR" / APTOS, HUGE, joined)
    config, results = str(demo_config_file(demo, tmp_path / "config.json")), str(tmp_path / "results")
    done = _cli("validate", str(demo / "DATA_BASEDIR"), "--config", config, "--results", results, "--subset", "APTOS")
    assert done.returncode != 0
    said = [line for line in done.stdout.splitlines() if f"{APTOS}: record {first}, " in line]
    assert len(said) == 1 and len(said[0]) < 500 and len(done.stdout) < 20000  # not the megabyte path
    assert said[0].startswith(f"{APTOS}: record {first}, qry_img_path: unsafe: ")
    assert f"image path: {HUGE_SAID} (a path holds at most 4,095)" in done.stdout
    root = demo / "DATA_BASEDIR" / "2D_Images" / "APTOS" / "train_images"
    assert f"record {first + 1}, qry_img_path: unsafe: " in done.stdout
    assert f"joined to {root}, longer than a path can be (at most 4,095 bytes)" in done.stdout

    out = tmp_path / "attest.tsv"
    done = _cli("attest", str(demo / "DATA_BASEDIR"), "--config", config, "--results", results, "--subset", "APTOS",
                "--out", str(out))  # fmt: skip
    assert done.returncode == 0 and "warning: 2 images unsafe" in done.stderr, done.stderr
    rows = [line.split("\t") for line in out.read_text().splitlines() if line.startswith("2D_Task/APTOS\t")]
    planted = [row for row in rows if "/ab/ab/" in row[1]]
    assert [row[2] for row in planted] == ["unsafe", "unsafe"]
    assert max(len(row[1]) for row in planted) < 4200
    assert sorted(row[2] for row in rows if row not in planted) == ["ok"] * 4


def test_a_record_path_over_path_max_is_a_bad_item_of_a_record_driven_build(demo):
    task = demo / "DATA_BASEDIR" / PATHVQA
    first = _plant_paths(task, HUGE)
    with pytest.raises(RawDataError) as raised:
        steps.Build(demo_settings(demo)).convert(subset="PathVQA")
    message = str(raised.value)
    assert f"{task} record {first}: qry_img_path: {HUGE_SAID}" in message and len(message) < 2000


# --- item 14: a release file that cannot be read, of a subset whose build reads no record ----------------


def _socket(path: Path) -> None:
    """A unix socket in place of the file (bound by its relative name: a socket path holds 108 bytes)."""
    path.unlink()
    here = os.getcwd()
    os.chdir(path.parent)
    try:
        server = socket.socket(socket.AF_UNIX)
        server.bind(path.name)
        server.close()  # the name stays, a socket file no one listens on
    finally:
        os.chdir(here)


def _utf16(path: Path) -> None:
    path.write_text(path.read_text(encoding="utf-8"), encoding="utf-16")


def _folder(path: Path) -> None:
    path.unlink()
    path.mkdir()


def _linked_out(path: Path) -> None:
    """A link to a copy outside DATA_BASEDIR (beside it) that holds the very same records: read, it would pass."""
    data = next(folder for folder in path.parents if folder.name == "DATA_BASEDIR")
    outside = data.parent / "elsewhere" / path.name
    outside.parent.mkdir()
    shutil.copy(path, outside)
    path.unlink()
    path.symlink_to(outside)


CASES = {
    "folder": (_folder, "not a regular file: a folder"),
    "socket": (_socket, "not a regular file: a socket"),
    "utf-16": (_utf16, "not UTF-8 text (byte 0xff at offset 0 cannot be decoded)"),
    "link out": (
        _linked_out,
        "a symbolic link to {outside}, outside DATA_BASEDIR {data}: a release file is read only inside it",
    ),
}


@pytest.mark.parametrize("case", CASES)
def test_an_unreadable_task_json_of_an_image_folder_subset_is_named_by_check_plan_and_convert(demo, tmp_path, case):
    make, problem = CASES[case]
    data = demo / "DATA_BASEDIR"
    make(data / APTOS)
    problem = problem.format(outside=demo / "elsewhere" / "APTOS_test.json", data=data)
    said = f"release: {APTOS} cannot be read: {problem}; {REPLACE}"
    config, results = str(demo_config_file(demo, tmp_path / "config.json")), str(tmp_path / "results")
    done = _cli("check", "--config", config, "--results", results, "--quiet")
    assert done.returncode == 0 and f"  2D_Task/APTOS: {said}" in done.stdout, done.stdout[-3000:]
    done = _cli("plan", "--config", config, "--results", results)
    assert done.returncode == 0 and _line_of(done.stdout, "2D_Task/APTOS").endswith("no: release file unreadable")
    done = _cli("convert", "APTOS", "--config", config, "--results", results)
    assert done.returncode != 0 and "2D_Task/APTOS: not built: release file unreadable" in done.stderr
    assert said in done.stderr and not (data / "2D_Images" / "APTOS").exists()


def _taken(check_output: str) -> list[str]:
    """The subsets `check` says it takes from the release."""
    line = next((line for line in check_output.splitlines() if line.startswith("from the release (")), "")
    return line.split("): ", 1)[1].split(", ") if line else []


def test_a_subset_from_the_release_with_an_unreadable_task_json_is_not_taken_as_it_is(demo, tmp_path):
    """APTOS's images in place and no manifest of ours: taken from the release, until a task JSON is a link
    out of DATA_BASEDIR; then check and plan name it, as validate and attest do."""
    steps.Build(demo_settings(demo)).convert(subset="APTOS", manifest=tmp_path / "elsewhere.tsv")
    config, results = str(demo_config_file(demo, tmp_path / "config.json")), str(tmp_path / "results")
    done = _cli("check", "--config", config, "--results", results, "--quiet")
    assert _taken(done.stdout) == ["2D_Task/APTOS"]
    data = demo / "DATA_BASEDIR"
    _linked_out(data / APTOS)
    problem = f"a symbolic link to {demo / 'elsewhere' / 'APTOS_test.json'}, outside DATA_BASEDIR {data}"
    done = _cli("check", "--config", config, "--results", results, "--quiet")
    assert f"  2D_Task/APTOS: release: {APTOS} cannot be read: {problem}" in done.stdout
    assert _taken(done.stdout) == []
    done = _cli("plan", "--config", config, "--results", results)
    assert _line_of(done.stdout, "2D_Task/APTOS").endswith("no: release file unreadable")
    registry = load_registry(demo / "registry-overrides.yaml")
    reports = validate.validate_subset(registry, registry.subset("APTOS"), data)
    reasons = {r.file: [f.reason for f in r.failures] for r in reports}
    assert reasons[APTOS] == [f"cannot read task file: {problem}: a release file is read only inside it"]
    named = attest.named_images(registry, registry.subset("APTOS"), data, None, train=False)
    assert named.unreadable_files == [f"{APTOS}: {problem}: a release file is read only inside it"]


def test_a_train_jsonl_linked_out_of_data_basedir_is_not_read(demo):
    data = demo / "DATA_BASEDIR"
    _linked_out(data / TRAIN)
    registry = load_registry(demo / "registry-overrides.yaml")
    problem = f"a symbolic link to {demo / 'elsewhere' / 'Path-VQA_train.jsonl'}, outside DATA_BASEDIR {data}"
    lines = releasenames.missing(data, registry, registry.subset("PathVQA"), releasenames.TRAIN)
    assert lines == [f"release: {TRAIN} cannot be read: {problem}: a release file is read only inside it; {REPLACE}"]
    assert releasenames.named_records(data, registry, registry.subset("PathVQA"), releasenames.TRAIN) == []


def test_links_inside_data_basedir_and_hard_links_are_read(demo, tmp_path):
    """The neighbours that must keep working: a task JSON linked to a copy elsewhere inside DATA_BASEDIR, and a
    hard link (it cannot be told from the file itself, wherever its other name is: read as it is)."""
    data = demo / "DATA_BASEDIR"
    shared = data / "shared" / "APTOS_test.json"
    shared.parent.mkdir()
    shutil.move(data / APTOS, shared)
    (data / APTOS).symlink_to(Path("..", "..", "shared", "APTOS_test.json"))
    outside = tmp_path / "Path-VQA_test.json"
    shutil.move(data / PATHVQA, outside)
    os.link(outside, data / PATHVQA)
    registry = load_registry(demo / "registry-overrides.yaml")
    settings = demo_settings(demo)
    for key in ("2D_Task/APTOS", "2D_Task/PathVQA"):
        assert releasenames.missing_for_build(registry, registry.subset(key), settings) == []
    assert len(releasenames.named_records(data, registry, registry.subset("PathVQA"), releasenames.TEST)) == 6
