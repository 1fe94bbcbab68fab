"""Each task file resolves against its own evaluation image root (tests/data/eval-image-roots.tsv, from the
benchmark's evaluation configs), records are checked against their parser, and the eval-config bridge lists
what the evaluation needs."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
import yaml

from conftest import DATA, added_subsets
from preprocess.cli import main
from preprocess.demo import RELEASE
from preprocess.demo.images import encode, pattern
from preprocess.registry.loader import load_registry
from preprocess.release import records
from preprocess.verify.validate import validate_subset
from seed_tree import seed_layout

ROOTS_FILE = DATA / "eval-image-roots.tsv"
PNG = encode(pattern(3), "PNG")

pytestmark = [
    pytest.mark.usefixtures("outside_checkout"),
    pytest.mark.registry_wide,
]  # registry_wide: make test-new-subset


def _reference_roots() -> dict[str, str]:
    rows = [line.split("\t") for line in ROOTS_FILE.read_text().splitlines() if not line.startswith("#")]
    return {task: root for task, root in rows}


def test_every_image_task_file_has_the_evaluation_image_root():
    registry = load_registry()
    ours = {f"{s.group}/{s.folder}/{t.file}": t.image_root for s in registry.subsets for t in s.tasks if t.image_root}
    reference = _reference_roots()
    # Beyond the reference, only the task files of an extra registry folder's subsets (the suite's run with
    # tests/data/new_subset); every reference row is present and equal.
    added = {f"{key}/{file}" for key, files in added_subsets().items() for file in files}
    assert not added & set(reference)
    assert {task: root for task, root in ours.items() if task not in added} == reference
    # the text task files: the seed tree's task files that the evaluation gives no image root
    seed = {f"{key}/{file}" for key, files in seed_layout()["tasks"].items() for file in files}
    text = {f"{s.group}/{s.folder}/{t.file}": t for s in registry.subsets for t in s.tasks if t.image_root is None}
    assert set(text) - added == seed - set(reference) and {t.parser for t in text.values()} == {"text_qa"}


# Records in the shape each evaluation parser reads (REFERENCE.md section 1), pointing at `path`.
def _record(parser: str, path: str) -> dict:
    if parser == "text_qa":
        return {"qry_inst": "Answer:", "qry_text": "Why?", "tgt_text": ["Because.", "No."]}
    if parser in ("image_cls", "image_qa"):
        return {"qry_inst": "<|image_1|> Classify:", "qry_text": "", "qry_img_path": path, "tgt_text": ["a", "b"]}
    if parser == "image_t2i":
        return {"qry_inst": "Find:", "qry_text": "a thing", "tgt_text": [""], "tgt_img_path": [path]}
    if parser in ("image_i2i", "image_i2i_vg"):
        return {
            "qry_inst": "<|image_1|> Locate:",
            "qry_text": "x",
            "qry_img_path": path,
            "tgt_inst": "Match",
            "tgt_text": ["<|image_1|>\n"],
            "tgt_img_path": [path],
        }  # each element one path: the loader cannot read a list holding a list (the nested VinDr records below)
    if parser == "volume_i2t":
        return {
            "qry_inst": "<|video_1|>",
            "qry_text": "",
            "qry_img_path": [path, path],
            "qry_modality": "video",
            "tgt_text": ["a", "b"],
        }
    if parser == "volume_t2i":
        return {"qry_inst": "Find:", "qry_text": "a CT", "tgt_text": [""], "tgt_img_path": [[path, path]]}
    assert parser == "volume_i2i"
    return {
        "qry_inst": "<|video_1|>",
        "qry_text": "",
        "qry_img_path": [path],
        "tgt_text": [""],
        "tgt_img_path": [[path]],
    }


def _lay_out(base: Path, misplace: str | None = None) -> None:
    """A DATA_BASEDIR in which every task file's record points at a real image through its evaluation root;
    the task file `misplace` names its image relative to the subset folder instead."""
    registry = load_registry()
    for subset in registry.subsets:
        for task in subset.tasks:
            path = ""
            if task.image_root is not None:
                task_root, subset_root = Path(task.image_root), Path(subset.image_root)
                folder = subset_root if subset_root.is_relative_to(task_root) else task_root  # the deeper one
                image = folder / f"{task.file.removesuffix('.json')}.png"
                (base / folder).mkdir(parents=True, exist_ok=True)
                (base / image).write_bytes(PNG)
                misplaced = f"{subset.group}/{subset.folder}/{task.file}" == misplace
                path = os.path.relpath(image, subset_root if misplaced else task_root)
            folder = base / subset.group / subset.folder
            folder.mkdir(parents=True, exist_ok=True)
            (folder / task.file).write_text(json.dumps([_record(task.parser, path)]))


def test_a_tree_laid_out_as_the_evaluation_joins_paths_validates(tmp_path, capsys):
    _lay_out(tmp_path)
    assert main(["validate", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "FAIL" not in out
    registry = load_registry()
    reports = [r for s in registry.subsets for r in validate_subset(registry, s, tmp_path)]
    assert len(reports) == sum(len(s.tasks) for s in registry.subsets) and all(r.passed for r in reports)
    assert not any(r.unloadable for r in reports) and "cannot read some records" not in out
    assert sum(r.paths for r in reports) > 100
    text = next(r for r in reports if r.file == "Text_Task/PubMedQA/PubMedQA_test.json")
    assert (text.records, text.paths) == (1, 0)  # a text record has no image field, and needs none


@pytest.mark.parametrize(
    "task",
    [
        "3D_Task/CT_RATE/CT_RATE_test.json",  # root 3D_Images/CT_RATE/valid_fixed_sliced
        "2D_Task/MIMIC-CXR-VQA/mimic_test.json",  # root 2D_Images/MIMIC-CXR-VQA/files
        "2D_Task/RadImageNet-VQA/RadLmageNet_test.json",  # root 2D_Images/RadImageNet-VQA/test/images
        "3D_Task/M3D/m3d_i2t_test.json",  # root 3D_Images/M3D, above the subset folder
    ],
)
def test_a_path_relative_to_the_subset_folder_instead_is_caught(tmp_path, capsys, task):
    _lay_out(tmp_path, misplace=task)
    assert main(["validate", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    failing = [line.split()[0] for line in out.splitlines() if line.endswith("FAIL")]
    assert failing == [task]
    assert f"{task}: record 0" in out and "missing" in out


def test_a_field_whose_type_changes_across_records_is_reported(tmp_path, capsys):
    _lay_out(tmp_path)
    task = tmp_path / "2D_Task" / "APTOS" / "APTOS_test.json"
    records = json.loads(task.read_text())
    task.write_text(json.dumps([records[0], {**records[0], "qry_img_path": [records[0]["qry_img_path"]]}]))
    assert main(["validate", str(tmp_path), "--subset", "APTOS"]) == 0  # it resolves; newer datasets load it
    out = capsys.readouterr().out
    assert "datasets.load_dataset('json') fails on them with datasets 3.6" in out
    assert "APTOS_test.json: field 'qry_img_path' is a string in record 0 and a list of string in record 1" in out


def test_eval_config_lists_each_built_task_file_and_every_path_resolves(tmp_path):
    base, out = tmp_path / "DATA_BASEDIR", tmp_path / "eval"
    _lay_out(base)
    (base / "2D_Task" / "APTOS" / "APTOS_test.json").unlink()  # a task file the release does not hold
    shutil.rmtree(base / "2D_Images" / "kvasir-dataset")  # a subset not built
    assert main(["eval-config", str(base), "--out", str(out)]) == 0
    names = ("2D_Task.yaml", "3D_Task.yaml", "Text_Task.yaml")
    configs = {name: yaml.safe_load((out / name).read_text()) for name in names}
    assert configs["2D_Task.yaml"]["RadLmageNet"] == {
        "dataset_parser": "image_qa",
        "dataset_name": "RadLmageNet",
        "dataset_split": "test",
        "image_root": "2D_Images/RadImageNet-VQA/test/images",
        "data_path": "2D_Task/RadImageNet-VQA/RadLmageNet_test.json",
        "eval_type": "local",
    }
    assert configs["2D_Task.yaml"]["PanNuke_VG"]["dataset_name"] == "PanNuke-VG"
    assert "image_root" not in configs["Text_Task.yaml"]["MedMCQA"]
    listed = [e["data_path"] for config in configs.values() for e in config.values()]
    assert "2D_Task/APTOS/APTOS_test.json" not in listed and not any("Kvasir/" in p for p in listed)
    registry = load_registry()
    assert len(listed) == sum(len(s.tasks) for s in registry.subsets) - 1 - len(registry.subset("Kvasir").tasks)
    for config in configs.values():
        for entry in config.values():
            for record in json.loads((base / entry["data_path"]).read_text()):
                for field in ("qry_img_path", "tgt_img_path"):
                    for path in _paths(record.get(field)):
                        assert os.path.isfile(os.path.join(base, entry["image_root"], path)), (entry, path)


def _paths(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _paths(item)


# --- what the evaluation's loaders can read -------------------------------------------------------------------
# What each loader's _prepare (src/evaluation/mediem/data/datasets/*.py of ziz-797/MedEEEEMbed) hands to
# os.path.join(image_root, p), written out from their code; os.path.join takes strings only.


def _joined_by_loader(parser: str, record: dict) -> list:
    if parser == "text_qa":  # text_t2t.py: no image field
        return []
    joined = []
    if parser in ("image_cls", "image_qa", "image_i2i", "image_i2i_vg"):  # _resolve_images: a str, or each element
        query = record["qry_img_path"]
        joined += [query] if isinstance(query, str) else list(query)
    if parser in ("image_i2i", "image_i2i_vg"):  # image_i2i.py: one join per element of tgt_img_path
        joined += list(record["tgt_img_path"])
    if parser == "image_t2i":  # image_t2i.py: one join per pair of zip(tgt_text, tgt_img_path)
        joined += [path for _, path in zip(record["tgt_text"], record["tgt_img_path"], strict=False)]
    if parser in ("volume_i2t", "volume_i2i"):  # volume_*.py: a list's elements, or [value]
        query = record["qry_img_path"]
        joined += query if isinstance(query, list) else [query]
    if parser in ("volume_t2i", "volume_i2i"):  # each candidate: a list's elements, or [element]
        for group in record["tgt_img_path"]:
            joined += group if isinstance(group, list) else [group]
    return joined


def _loader_reads(parser: str, record: dict) -> bool:
    try:
        for path in _joined_by_loader(parser, record):
            os.path.join("/DATA_BASEDIR/root", path)
    except TypeError:
        return False
    return True


I2I = {"qry_inst": "<|image_1|> Locate:", "qry_text": "x", "qry_img_path": "q.png", "tgt_inst": "Match"}
VOLUME = {"qry_inst": "<|video_1|>", "qry_text": "a CT"}
LOADER_CASES = [  # parser, record (each passes the task schema), whether the loader reads it
    ("image_cls", {"qry_text": "", "qry_img_path": ["a.png", "b.png"], "tgt_text": ["x", "y"]}, True),
    ("image_qa", {"qry_text": "why?", "qry_img_path": "a.png", "tgt_text": ["x"]}, True),
    ("image_i2i", {**I2I, "tgt_text": ["<|image_1|>\n"], "tgt_img_path": ["a.png", "b.png"]}, True),
    ("image_i2i", {**I2I, "tgt_text": ["<|image_1|>\n"], "tgt_img_path": [["a.png", "b.png"]]}, False),
    ("image_i2i_vg", {**I2I, "tgt_text": ["<|image_1|>\n"], "tgt_img_path": [["a.png"]]}, False),
    ("image_t2i", {"qry_text": "x", "tgt_text": ["", ""], "tgt_img_path": ["a.png", ["b.png"]]}, False),
    ("image_t2i", {"qry_text": "x", "tgt_text": [""], "tgt_img_path": ["a.png", ["b.png"]]}, True),  # zip stops
    ("volume_i2t", {**VOLUME, "qry_img_path": ["s0.png", "s1.png"], "tgt_text": ["x"]}, True),
    ("volume_i2t", {**VOLUME, "qry_img_path": "s0.png", "tgt_text": ["x"]}, True),
    ("volume_t2i", {**VOLUME, "tgt_text": [""], "tgt_img_path": [["s0.png", "s1.png"], "v.png"]}, True),
    ("volume_i2i", {**VOLUME, "qry_img_path": "q.png", "tgt_text": [""], "tgt_img_path": [["s0.png"]]}, True),
    ("text_qa", {"qry_inst": "Answer:", "qry_text": "Why?", "tgt_text": ["Because."]}, True),
]


@pytest.mark.parametrize(("parser", "record", "reads"), LOADER_CASES)
def test_validate_flags_exactly_the_records_the_evaluation_loader_cannot_read(parser, record, reads):
    assert not records.task_record_problems(record, parser)  # each is a valid task record
    assert _loader_reads(parser, record) == reads  # the rule, as stated above
    flagged = records.unloadable([(0, record)], parser)
    assert [item["record"] for item in flagged] == ([] if reads else [0])


NESTED_VINDR = {("2D_Task/VindrCXR/VinDr-CXR_test.json", 0), ("2D_Task/VindrMammo/VindrMammo_test.json", 0)}


def test_the_evaluation_loaders_read_every_demo_record_but_the_nested_vindr_crops():
    registry = load_registry()
    parsers = {f"{s.group}/{s.folder}/{t.file}": t.parser for s in registry.subsets for t in s.tasks}
    files = sorted(p.relative_to(RELEASE).as_posix() for p in RELEASE.glob("*_Task/*/*.json"))
    assert len(files) == 86 and set(files) <= set(parsers)
    unreadable = set()
    for name in files:
        for number, record in enumerate(json.loads((RELEASE / name).read_text(encoding="utf-8"))):
            if not _loader_reads(parsers[name], record):
                unreadable.add((name, number))
    assert unreadable == NESTED_VINDR  # the authors' VinDr scripts write several crops as [[...]]
    reports = [r for s in registry.subsets for r in validate_subset(registry, s, RELEASE)]
    assert {(r.file, item["record"]) for r in reports for item in r.unloadable} == NESTED_VINDR


def test_validate_and_eval_config_warn_of_the_nested_vindr_records_without_failing(tmp_path, capsys):
    base = tmp_path / "DATA_BASEDIR"
    registry = load_registry()
    for key in ("2D_Task/VindrCXR", "2D_Task/VindrMammo"):
        subset = registry.subset(key)
        for task in subset.tasks:
            shutil.copytree(RELEASE / key, base / key, dirs_exist_ok=True)
            for record in json.loads((base / key / task.file).read_text(encoding="utf-8")):
                for path in _paths([record["qry_img_path"], record["tgt_img_path"]]):
                    (base / task.image_root / path).parent.mkdir(parents=True, exist_ok=True)
                    (base / task.image_root / path).write_bytes(PNG)
    assert main(["validate", str(base), "--subset", "VindrCXR", "VindrMammo"]) == 0  # a warning, not a failure
    out = capsys.readouterr().out
    reason = (
        "record 0: an element of tgt_img_path is a list, where the image_i2i loader takes each element as one path "
        "and joins it to the image root (os.path.join raises TypeError)"
    )
    lines = [
        f"  2D_Task/VindrCXR/VinDr-CXR_test.json: 1 of 4 records: {reason}",
        f"  2D_Task/VindrMammo/VindrMammo_test.json: 1 of 2 records: {reason}",
    ]
    assert "valid: 2 of 2 task files resolve every path" in out
    assert [line for line in out.splitlines() if "records: record" in line] == lines
    assert main(["eval-config", str(base), "--out", str(tmp_path / "eval")]) == 0
    out = capsys.readouterr().out
    assert [line for line in out.splitlines() if "records: record" in line] == lines
    assert "cannot read some records as published" in out
