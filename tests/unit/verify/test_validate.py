"""The validator catches every planted fault and names the task file and record index."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from preprocess.cli import main
from preprocess.demo.images import encode, pattern
from preprocess.registry.loader import load_registry
from preprocess.release.records import task_record_problems
from preprocess.verify.validate import PathChecker, validate_file, validate_subset

PNG = encode(pattern(1), "PNG")
JPEG = encode(pattern(2), "JPEG")

pytestmark = pytest.mark.usefixtures("outside_checkout")


@pytest.fixture
def tree(tmp_path) -> Path:
    """A DATA_BASEDIR with an APTOS image root holding good and bad files."""
    root = tmp_path / "DATA_BASEDIR" / "2D_Images" / "APTOS" / "train_images"
    root.mkdir(parents=True)
    (root / "good.png").write_bytes(PNG)
    (root / "good.jpg").write_bytes(JPEG)
    (root / "empty.png").write_bytes(b"")
    (root / "truncated.png").write_bytes(PNG[: len(PNG) // 2])
    (root / "truncated.jpg").write_bytes(JPEG[: len(JPEG) // 2])
    (root / "notimage.png").write_bytes(b"hello, not an image")
    (root / "folder.png").mkdir()
    outside = tmp_path / "outside.png"
    outside.write_bytes(PNG)
    os.symlink(outside, root / "escape.png")
    (tmp_path / "DATA_BASEDIR" / "2D_Task" / "APTOS").mkdir(parents=True)
    return tmp_path / "DATA_BASEDIR"


def _write_task(tree: Path, records, name="APTOS_test.json") -> Path:
    path = tree / "2D_Task" / "APTOS" / name
    path.write_text(json.dumps(records))
    return path


def _record(qry, targets=None):
    record = {"qry_inst": "q", "qry_text": "", "qry_img_path": qry, "tgt_text": ["a"]}
    if targets is not None:
        record["tgt_img_path"] = targets
    return record


def _failures(tree, records):
    checker = PathChecker(tree / "2D_Images" / "APTOS" / "train_images")
    report = validate_file(_write_task(tree, records), checker, "2D_Task/APTOS", shown_name="APTOS_test.json")
    return report, {(f.record, f.path): (f.problem, f.reason) for f in report.failures}


@pytest.mark.parametrize(
    ("path", "problem", "reason"),
    [
        ("missing.png", "missing", "no such file"),
        ("empty.png", "unreadable", "zero-byte file"),
        ("truncated.png", "unreadable", "truncated PNG"),
        ("truncated.jpg", "unreadable", "truncated JPEG"),
        ("notimage.png", "unreadable", "not a readable image"),
        ("folder.png", "unreadable", "a folder, not a regular file"),
        ("../../../outside.png", "unsafe", "climbs out of its folder"),
        ("/etc/passwd", "unsafe", "absolute path"),
        ("escape.png", "unsafe", "outside the image root"),
        ("", None, None),
    ],
)
def test_each_planted_fault_is_caught(tree, path, problem, reason):
    report, failures = _failures(tree, [_record("good.png"), _record(path, ["good.jpg"])])
    if problem is None:
        assert report.passed and report.paths == 2  # an empty query path means a text query
        return
    assert list(failures) == [(1, path)]
    got_problem, got_reason = failures[(1, path)]
    assert got_problem == problem
    assert reason in got_reason
    assert getattr(report, problem) == 1
    assert report.ok == 2


def test_nested_target_lists_are_all_checked(tree):
    report, failures = _failures(tree, [_record(["good.png", "good.jpg"], [["good.png", "nope.png"], "good.jpg"])])
    assert report.paths == 5 and report.ok == 4
    assert list(failures) == [(0, "nope.png")]


def test_missing_file_gets_did_you_mean(tree):
    report, _ = _failures(tree, [_record("god.png")])
    assert report.failures[0].suggestions[0] == "good.png"


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ({"qry_text": "", "qry_img_path": "good.png"}, "tgt_text: required field is missing"),
        ({"qry_text": 3, "qry_img_path": "good.png", "tgt_text": []}, "qry_text: expected a string, got int 3"),
        ({"qry_text": "", "qry_img_path": {"a": 1}, "tgt_text": []}, "qry_img_path: expected a string or a list"),
        ({"qry_text": "", "qry_img_path": "", "tgt_text": [], "tgt_img_path": [[1]]}, "tgt_img_path: expected"),
        (["not", "a", "record"], "record: expected an object, got list"),
    ],
)
def test_malformed_records_name_index_and_field(tree, record, message):
    report, _ = _failures(tree, [_record("good.png"), record])
    assert report.bad_records == 1
    failure = report.failures[0]
    assert failure.record == 1
    assert message in failure.reason


def test_invalid_json_is_reported_with_its_position(tree):
    path = tree / "2D_Task" / "APTOS" / "APTOS_test.json"
    path.write_text('[{"qry_text": ""},')
    report = validate_file(path, PathChecker(tree), "2D_Task/APTOS")
    assert not report.passed
    assert "invalid JSON at line 1" in report.failures[0].reason


def test_record_schema_accepts_the_benchmark_shapes():
    assert (
        task_record_problems(
            {
                "qry_inst": "x",
                "qry_text": "",
                "qry_img_path": ["a/slice_000.png"],
                "tgt_text": ["", ""],
                "tgt_img_path": [["b/slice_000.png"], "c.png"],
                "qry_modality": "video",
                "tgt_modality": "image",
            }
        )
        == []
    )


def test_validate_command_names_file_and_record(tree, capsys):
    # the i2i file's parser (image_i2i_vg) opens query and target images
    records = [_record("good.png", ["good.png"]), _record("good.png", ["../../x.png", "missng.png"])]
    _write_task(tree, records, "APTOS_i2i_test.json")
    code = main(["validate", str(tree), "--subset", "2D_Task/APTOS", "--report", str(tree.parent / "r.json")])
    out = capsys.readouterr().out
    assert code == 1
    assert "2D_Task/APTOS/APTOS_i2i_test.json: record 1, tgt_img_path: unsafe: '../../x.png'" in out
    assert "2D_Task/APTOS/APTOS_i2i_test.json: record 1, tgt_img_path: missing: 'missng.png'" in out
    report = json.loads((tree.parent / "r.json").read_text())
    assert report["subsets"] == {"2D_Task/APTOS": "failed"}
    assert {f["problem"] for f in report["files"][0]["failures"]} == {"unsafe", "missing"}


def test_validate_passes_a_good_tree_and_skips_unbuilt_subsets(tree, capsys):
    _write_task(tree, [_record("good.png", ["good.jpg"])])
    (tree / "2D_Task" / "Kvasir").mkdir()
    (tree / "2D_Task" / "Kvasir" / "Kvasir_test.json").write_text(json.dumps([_record("x.jpg")]))
    assert main(["validate", str(tree)]) == 0
    out = capsys.readouterr().out
    assert "not built (image root absent): 2D_Task/Kvasir" in out
    assert main(["validate", str(tree), "--subset", "Kvasir"]) == 1


def test_symlink_farm_targets_are_allowed_roots(tmp_path):
    registry = load_registry()
    subset = registry.subset("MIMIC-CXR-VQA")
    raw = tmp_path / "raw" / "mimic-cxr-jpg" / "files" / "p10" / "p10000032" / "s1"
    raw.mkdir(parents=True)
    (raw / "a.jpg").write_bytes(JPEG)
    base = tmp_path / "DATA_BASEDIR"
    root = base / "2D_Images" / "MIMIC-CXR-VQA"
    root.mkdir(parents=True)
    os.symlink(tmp_path / "raw" / "mimic-cxr-jpg" / "files", root / "files")  # mimic_test.json's image root
    (base / "2D_Task" / "MIMIC-CXR-VQA").mkdir(parents=True)
    (base / "2D_Task" / "MIMIC-CXR-VQA" / "mimic_test.json").write_text(json.dumps([_record("p10/p10000032/s1/a.jpg")]))
    [report] = validate_subset(registry, subset, base, tmp_path / "raw")
    assert report.passed
    [without_raw] = validate_subset(registry, subset, base, None)
    assert without_raw.unsafe == 1


def test_train_data_paths_resolve_against_data_basedir(tree):
    train = tree / "Train_Data" / "2D_Task" / "APTOS" / "APTOS_train.jsonl"
    train.parent.mkdir(parents=True)
    lines = [
        {"messages": [], "images": ["./2D_Images/APTOS/train_images/good.png"]},
        {"messages": [], "images": ["./2D_Images/APTOS/train_images/gone.png"]},
    ]
    train.write_text("\n".join(json.dumps(line) for line in lines))
    _write_task(tree, [_record("good.png")])
    reports = validate_subset(load_registry(), load_registry().subset("APTOS"), tree)
    train_report = next(r for r in reports if r.file.endswith(".jsonl"))
    assert (train_report.ok, train_report.missing) == (1, 1)
    assert train_report.failures[0].record == 1


def test_a_backslash_path_is_unsafe_not_a_folder_separator(tree):
    (tree / "2D_Images" / "APTOS" / "train_images" / "sub").mkdir()
    (tree / "2D_Images" / "APTOS" / "train_images" / "sub" / "a.png").write_bytes(PNG)
    report, failures = _failures(tree, [_record("sub/a.png"), _record("sub\\a.png")])
    assert report.ok == 1 and report.unsafe == 1
    assert "backslash" in failures[(1, "sub\\a.png")][1]


def test_a_decompression_bomb_is_unreadable_and_the_file_goes_on(tree):
    import struct

    width = height = 40_000  # 1.6 G pixels, above the decoder's limit: never decoded
    header = b"BM" + struct.pack("<IHHI", 54, 0, 0, 54)
    info = struct.pack("<IiiHHIIiiII", 40, width, height, 1, 24, 0, 0, 2835, 2835, 0, 0)
    (tree / "2D_Images" / "APTOS" / "train_images" / "bomb.bmp").write_bytes(header + info + b"\0" * 64)
    report, failures = _failures(tree, [_record("bomb.bmp"), _record("good.png")])
    assert report.unreadable == 1 and report.ok == 1
    assert "decompression bomb" in failures[(0, "bomb.bmp")][1]


def test_a_list_nested_too_deep_is_a_bad_file_not_a_crash(tree):
    path = tree / "2D_Task" / "APTOS" / "APTOS_test.json"
    path.write_text('[{"qry_text": "", "qry_img_path": ' + "[" * 100_000 + "]" * 100_000 + ', "tgt_text": []}]')
    report = validate_file(path, PathChecker(tree), "2D_Task/APTOS")
    assert report.bad_records == 1 and "nested too deep" in report.failures[0].reason
