"""Chest ImaGenome silver crops: exactly the `silver_sample_crop/{dicom}_{class}_0.png` files the Train_Data
JSONL names, boxes read inside scene_graph.zip, cut by the reference's minimum-size rule
(Vision_Grounding/ChestImagenome/Preprocess.py: crop_with_min_size, run_silver)."""

from __future__ import annotations

import json
import os
import re
import zipfile

import numpy as np
import pytest
from PIL import Image
from test_annotation_crops import min_size_crop

from conftest import demo_settings
from preprocess.convert.scenegraph import SceneGraphs
from preprocess.errors import RawDataError
from preprocess.pipeline.steps import Build

IMAGE_0 = "02aa804e-bde0afdd-112c0b34-7bc16630-4e384014"  # p10000032 / s50414267
IMAGE_1 = "2a2277a9-b0ded155-c0de8eb9-c124d10e-82c5caab"  # no scene graph
IMAGE_2 = "1e3bbd9a-4d3d6b9e-5e1c8f76-6b2a7c41-0e6d8b21"  # p11000011 / s51029426
SILVER = {"2D_Task/ChestImagrome": "all"}  # the silver crops are the subset's train split
# A training record whose crop the demo's scene graphs cannot give (its image has none); kept out of the demo's
# own JSONL, where every path resolves with splits: all.
UNHELD_RECORD = {
    "messages": [
        {"role": "system", "content": "Represent the given image with the following question:"},
        {"role": "user", "content": "<image>Locate the specific region that corresponds to the provided text "
         "description. left lung"},
    ],
    "images": [f"./2D_Images/ChestImagrome/files/p10/p10000032/s53189527/{IMAGE_1}.jpg"],
    "positive_messages": [
        [
            {"role": "system", "content": "Represent the given image:"},
            {"role": "user", "content": "<image>Match the target"},
        ]
    ],
    "positive_images": [f"./2D_Images/ChestImagrome/silver_sample_crop/{IMAGE_1}_1_0.png"],
}  # fmt: skip
MIMIC = {IMAGE_0: "p10/p10000032/s50414267", IMAGE_2: "p11/p11000011/s51029426"}


def _reference_crop(image: np.ndarray, x_min: int, y_min: int, x_max: int, y_max: int) -> np.ndarray:
    """The gold crop rule of the script (test_annotation_crops.min_size_crop) applied to the image."""
    left, top, right, bottom = min_size_crop(x_min, y_min, x_max, y_max, image.shape[1], image.shape[0])
    return image[top:bottom, left:right]


def _write_jsonl(demo, crops: list[str]) -> None:
    folder = demo / "DATA_BASEDIR" / "Train_Data" / "2D_Task" / "ChestImagrome"
    folder.mkdir(parents=True, exist_ok=True)
    lines = [
        json.dumps({"messages": [{"role": "user", "content": "<image>x"}], "images": [f"./{path}"]}) for path in crops
    ]
    (folder / "Chest_imagenome_train.jsonl").write_text("\n".join(lines) + "\n")


def _scene_graph_zip(demo, graphs: dict) -> None:
    """A scene_graph.zip of the PhysioNet layout: scene_graph/<dicom_id>_SceneGraph.json."""
    path = demo / "raw" / "chest-imagenome" / "silver_dataset" / "scene_graph.zip"
    with zipfile.ZipFile(path, "w") as archive:
        for dicom, (patient, study, objects) in graphs.items():
            graph = {"image_id": dicom, "viewpoint": "PA", "patient_id": patient, "study_id": study}
            graph["objects"] = [
                {"object_id": f"{dicom}_{name}", "bbox_name": name, "name": name.capitalize(), "original_x1": box[0],
                 "original_y1": box[1], "original_x2": box[2], "original_y2": box[3], "original_width": 32,
                 "original_height": 32}
                for name, box in objects
            ]  # fmt: skip
            graph["attributes"], graph["relationships"] = [], []
            archive.writestr(f"scene_graph/{dicom}_SceneGraph.json", json.dumps(graph))


def _add_unheld_record(demo) -> None:
    jsonl = demo / "DATA_BASEDIR" / "Train_Data" / "2D_Task" / "ChestImagrome" / "Chest_imagenome_train.jsonl"
    with jsonl.open("a") as handle:
        handle.write(json.dumps(UNHELD_RECORD) + "\n")


def _build(demo, capsys):
    settings = demo_settings(demo, verify_checksums=False, splits=SILVER)  # the test rewrites scene_graph.zip
    Build(settings).convert(subset="2D_Task/ChestImagrome", conversion="silver_crops", checks=None)
    return capsys.readouterr().out


def _mimic(demo, dicom: str) -> np.ndarray:
    path = demo / "raw" / "mimic-cxr-jpg" / "files" / MIMIC[dicom] / f"{dicom}.jpg"
    with Image.open(path) as image:
        return np.asarray(image)


def test_silver_crops_are_the_jsonl_names_cut_by_the_reference_rule(demo, capsys):
    _scene_graph_zip(
        demo,
        {
            IMAGE_0: (10000032, 50414267, [
                ("right lung", (2, 5, 14, 20)),
                ("trachea", (None, None, None, None)),  # named without a box: not a class, no crop
                ("right lung", (3, 4, 12, 21)),  # the later object of a region counts
                ("left lung", (16.0, 3.0, 30.0, 29.0)),
            ]),
            IMAGE_2: (11000011, 51029426, [("cardiac silhouette", (8, 8, 20, 23)), ("left lung", (-2, 1, 40, 31))]),
        },
    )  # fmt: skip
    # class ids over the sorted names with a box: cardiac silhouette 0, left lung 1, right lung 2
    crop = "2D_Images/ChestImagrome/silver_sample_crop/{}_{}_0.png"
    wanted = [crop.format(IMAGE_0, 2), crop.format(IMAGE_2, 0), crop.format(IMAGE_2, 1), crop.format(IMAGE_1, 1)]
    wanted.append(crop.format(IMAGE_0, 0))  # image 0 has no cardiac silhouette
    _write_jsonl(demo, wanted)
    out = _build(demo, capsys)

    base = demo / "DATA_BASEDIR"
    folder = base / "2D_Images" / "ChestImagrome" / "silver_sample_crop"
    assert sorted(os.listdir(folder)) == sorted(p.rsplit("/", 1)[1] for p in wanted[:3])
    expected = {
        wanted[0]: _reference_crop(_mimic(demo, IMAGE_0), 3, 4, 12, 21),
        wanted[1]: _reference_crop(_mimic(demo, IMAGE_2), 8, 8, 20, 23),
        wanted[2]: _reference_crop(_mimic(demo, IMAGE_2), 0, 1, 40, 31),
    }
    for path, pixels in expected.items():
        with Image.open(base / path) as image:
            assert image.mode == "L"
            np.testing.assert_array_equal(np.asarray(image), pixels)
    assert f"{IMAGE_1}_SceneGraph.json: no such scene graph" in out
    assert "no box for class 0 (cardiac silhouette)" in out
    silver = demo / "raw" / "chest-imagenome" / "silver_dataset"
    assert os.listdir(silver) == ["scene_graph.zip"]  # read inside the zip, never extracted


def test_no_jsonl_no_silver_crops(demo, capsys):
    jsonl = demo / "DATA_BASEDIR" / "Train_Data" / "2D_Task" / "ChestImagrome" / "Chest_imagenome_train.jsonl"
    jsonl.unlink()
    out = _build(demo, capsys)
    assert "no Train_Data JSONL names a silver crop" in out
    assert not (demo / "DATA_BASEDIR" / "2D_Images" / "ChestImagrome" / "silver_sample_crop").exists()


def test_summary_names_the_jsonl_paths_no_rule_produces(demo, tmp_path, capsys):
    """A JSONL names a silver crop of an image without a scene graph: the subset's validation report and the
    summary list it (the other silver crops and the query images resolve)."""
    _add_unheld_record(demo)
    results = tmp_path / "results"
    build = Build(demo_settings(demo, splits=SILVER), results=results)
    build.convert(subset="2D_Task/ChestImagrome")
    manifests = sorted((results / "convert" / "2D_Task" / "ChestImagrome").glob("*.tsv"))
    assert len(manifests) == 3  # gold crops, silver crops, MIMIC links
    report = tmp_path / "report.json"
    build.validate(subset="2D_Task/ChestImagrome", report_out=report, manifests=manifests)
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps([{"subset": "2D_Task/ChestImagrome", "action": "build"}]))
    summary = build.summarize(
        plan_file=plan,
        report_files=[report],
        table_out=tmp_path / "summary.txt",
        json_out=tmp_path / "summary.json",
        instructions=tmp_path / "not-built.md",
    )
    unheld = f"./2D_Images/ChestImagrome/silver_sample_crop/{IMAGE_1}_1_0.png"
    assert summary["unproduced"] == [{"subset": "2D_Task/ChestImagrome", "count": 1, "paths": [unheld]}]
    assert summary["failed"] == []  # every other path resolves; the unproduced one is listed, not missing
    train = next(row for row in summary["files"] if row["file"].startswith("Train_Data/"))
    assert (train["paths"], train["ok"], train["missing"]) == (9, 9, 0)  # of 10: the unproduced one apart
    text = (tmp_path / "summary.txt").read_text()
    assert "no rule of the pipeline produces" in text and unheld in text


def test_a_listed_output_that_is_missing_still_fails(demo, tmp_path):
    """A path some conversion's manifest lists but that is gone from the tree is missing, not unproduced."""
    _add_unheld_record(demo)
    results = tmp_path / "results"
    build = Build(demo_settings(demo, splits=SILVER), results=results)
    build.convert(subset="2D_Task/ChestImagrome")
    gone = demo / "DATA_BASEDIR" / "2D_Images" / "ChestImagrome" / "silver_sample_crop" / f"{IMAGE_2}_0_0.png"
    gone.unlink()
    manifests = sorted((results / "convert" / "2D_Task" / "ChestImagrome").glob("*.tsv"))
    found = build.validate(subset="2D_Task/ChestImagrome", report_out=tmp_path / "r.json", manifests=manifests)
    train = next(r for r in found if r.file.startswith("Train_Data/"))
    assert [f.path for f in train.failures] == [f"./2D_Images/ChestImagrome/silver_sample_crop/{IMAGE_2}_0_0.png"]
    assert train.unproduced == [f"./2D_Images/ChestImagrome/silver_sample_crop/{IMAGE_1}_1_0.png"]


def test_a_scene_graph_member_over_the_bounds_is_refused_unread(tmp_path):
    """A scene graph that inflates 20 MB of zeros out of ~20 KB is named with its archive, never read."""
    path = tmp_path / "scene_graph.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("scene_graph/abc_SceneGraph.json", b"{" + bytes(20 << 20) + b"}")
    expected = re.escape(f"{path}: member scene_graph/abc_SceneGraph.json inflates 20,971,522 bytes out of ")
    with pytest.raises(RawDataError, match=expected + r".*over the bound of 100x\); refused unread"):
        SceneGraphs(path).read("abc")
