"""Real downloads unpacked another way (issue 39, items 15-17): each variant builds the outputs of the common
layout (the demo's raw copy, preprocess/demo/), or stops naming the folder or file it expected.

- Chest ImaGenome: silver_dataset/scene_graph.zip as downloaded, extracted flat (scene_graph/*.json) or into a
  folder of its own name (scene_graph/scene_graph/*.json, the zip deleted); the whole project under the
  chest-imagenome-dataset-1.0.0/ folder its PhysioNet ZIP may add;
- CheXpert Plus: PNG/train/... or the chunks unzipped one level deeper, PNG/PNG/train/... (the common case);
- ROCO-QA: the authors' five file names, or the Hub's shard names (Train as ROCO-QA-Train's shards), and only
  the files the split being built reads; with only the Hub's files, the two Valid shards no public listing
  holds are said to be so, with what they block and what would unblock them (issue 52).
`check` says which layout it found where the registry accepts several.
Each variant is the demo's own files moved or re-split, so its expected outputs are the common layout's; the
registry's own file specs apply (the demo's override, which pins the common layout's names, is dropped)."""

from __future__ import annotations

import os
import shutil
import zipfile
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
import yaml
from PIL import Image

from conftest import demo_config_file
from preprocess.cli import main

SILVER = "2D_Images/ChestImagrome/silver_sample_crop"
CROPS = [  # the demo's JSONL names these four silver crops; its scene graphs hold their boxes
    "02aa804e-bde0afdd-112c0b34-7bc16630-4e384014_1_0.png",
    "02aa804e-bde0afdd-112c0b34-7bc16630-4e384014_2_0.png",
    "1e3bbd9a-4d3d6b9e-5e1c8f76-6b2a7c41-0e6d8b21_0_0.png",
    "1e3bbd9a-4d3d6b9e-5e1c8f76-6b2a7c41-0e6d8b21_1_0.png",
]
ROCO_ORDER = [  # the benchmark's reading order, the demo's file names and row counts
    ("Vaild-00000-of-00001-1ddc94eb806f44ae.parquet", "Vaild", 2),
    ("Train-00000-of-00001-91a106d1a22c7cc9.parquet", "Train", 3),
    ("Valid-00001-of-00002.parquet", "Valid", 1),
    ("Test-00000-of-00001-91a106d1a22c7cc9.parquet", "Test", 3),
    ("Valid-00000-of-00002.parquet", "Valid", 2),
]
TEST_IMAGES = ["images/Test_sample_000007.jpg", "images/Test_sample_000008.jpg", "images/Test_sample_000009.jpg"]


class Copy:
    """A private demo copy with the registry's own specs for `source`, and the CLI run on it."""

    def __init__(self, template: Path, folder: Path, source: str, **config):
        shutil.copytree(template, folder, symlinks=True)
        self.demo, self.raw, self.data = folder, folder / "raw", folder / "DATA_BASEDIR"
        overrides = folder / "registry-overrides.yaml"
        document = yaml.safe_load(overrides.read_text())
        del document["sources"][source]
        overrides.write_text(yaml.safe_dump(document))
        self.config = demo_config_file(folder, folder.parent / f"{folder.name}.json", **config)
        self.results = folder.parent / f"{folder.name}-results"

    def run(self, capsys, *argv) -> tuple[int, str]:
        code = main([*argv, "--config", str(self.config), "--results", str(self.results)])
        captured = capsys.readouterr()
        return code, captured.out + captured.err


def _pixels(path: Path) -> np.ndarray:
    with Image.open(path) as image:
        return np.asarray(image)


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


# --- Chest ImaGenome: the scene graphs --------------------------------------------------------------------


def _unzip_scene_graphs(raw: Path, layout: str) -> None:
    """The zip's members start with scene_graph/: extracted beside it they give scene_graph/*.json; extracted
    into a folder of its own name (a file manager's "extract here") scene_graph/scene_graph/*.json."""
    silver = raw / "chest-imagenome" / "silver_dataset"
    if layout == "zip":
        return
    with zipfile.ZipFile(silver / "scene_graph.zip") as archive:
        archive.extractall(silver if layout == "flat" else silver / "scene_graph")
    (silver / "scene_graph.zip").unlink()


@pytest.fixture
def silver_common(demo_template, tmp_path):
    """The silver crops built from the zip as downloaded: the common layout's outputs."""
    common = Copy(demo_template, tmp_path / "common", "chest_imagenome", splits={"2D_Task/ChestImagrome": "all"})
    assert (
        main(
            [
                "convert",
                "2D_Task/ChestImagrome",
                "--config",
                str(common.config),
                "--results",
                str(common.config.parent / "results"),
            ]
        )
        == 0
    )
    return _tree(common.data / SILVER)


@pytest.mark.parametrize("layout", ["flat", "nested"])
def test_scene_graphs_extracted_build_the_crops_of_the_zip(demo_template, tmp_path, capsys, silver_common, layout):
    assert sorted(silver_common) == CROPS
    variant = Copy(demo_template, tmp_path / layout, "chest_imagenome", splits={"2D_Task/ChestImagrome": "all"})
    _unzip_scene_graphs(variant.raw, layout)
    code, out = variant.run(capsys, "check", "--source", "chest_imagenome", "--strict")
    assert code == 0 and "chest_imagenome: 3 of 3 needed files present" in out, out  # the folder for the zip
    assert (
        main(
            [
                "convert",
                "2D_Task/ChestImagrome",
                "--config",
                str(variant.config),
                "--results",
                str(variant.config.parent / "results"),
            ]
        )
        == 0
    )
    built = _tree(variant.data / SILVER)
    assert sorted(built) == CROPS
    for name in CROPS:
        np.testing.assert_array_equal(_pixels(variant.data / SILVER / name), _pixels(tmp_path / "common" /
                                      "DATA_BASEDIR" / SILVER / name))  # fmt: skip


def test_chest_imagenome_under_its_project_folder_builds_the_crops(demo_template, tmp_path, capsys, silver_common):
    """The PhysioNet project ZIP unpacked into chest-imagenome/ may add chest-imagenome-dataset-1.0.0/ above
    gold_dataset/ and silver_dataset/: found there, and `check` says so."""
    variant = Copy(demo_template, tmp_path / "project", "chest_imagenome", splits={"2D_Task/ChestImagrome": "all"})
    base = variant.raw / "chest-imagenome"
    (base / "chest-imagenome-dataset-1.0.0").mkdir()
    for folder in ("gold_dataset", "silver_dataset"):
        os.rename(base / folder, base / "chest-imagenome-dataset-1.0.0" / folder)
    code, out = variant.run(capsys, "check", "--source", "chest_imagenome", "--strict")
    assert code == 0 and "chest_imagenome: 3 of 3 needed files present" in out, out
    said = "chest_imagenome: its files are under chest-imagenome-dataset-1.0.0/, the folder a whole-project download"
    assert said in out, out
    results = str(variant.config.parent / "results")
    assert main(["convert", "2D_Task/ChestImagrome", "--config", str(variant.config), "--results", results]) == 0
    assert sorted(_tree(variant.data / SILVER)) == sorted(silver_common) == CROPS
    assert len(list((variant.data / "2D_Images/ChestImagrome/gold_crop").iterdir())) > 0


def test_register_records_an_extracted_scene_graph_folder_and_its_content(demo_template, tmp_path, capsys):
    """`register` on the nested folder: the folder has no checksum, and the override keeps what it must hold
    (an override replaces the registry's spec whole), so a check and a build with it still find the graphs."""
    variant = Copy(demo_template, tmp_path / "nested", "chest_imagenome", splits={"2D_Task/ChestImagrome": "all"})
    _unzip_scene_graphs(variant.raw, "nested")
    mine = tmp_path / "mine.yaml"
    code, out = variant.run(capsys, "register", "chest_imagenome", "--out", str(mine))
    assert code == 0, out
    spec = yaml.safe_load(mine.read_text())["sources"]["chest_imagenome"]["files"][2]
    assert spec.pop("about").startswith("the silver boxes, one <dicom_id>_SceneGraph.json per image")
    assert spec == {"id": "scene_graphs", "path": "silver_dataset/scene_graph", "holds": ["*_SceneGraph.json"],
                    "split": "train"}  # fmt: skip
    own = demo_config_file(variant.demo, tmp_path / "own.json", splits={"2D_Task/ChestImagrome": "all"})
    document = yaml.safe_load((variant.demo / "registry-overrides.yaml").read_text())
    document["sources"].update(yaml.safe_load(mine.read_text())["sources"])
    (variant.demo / "registry-overrides.yaml").write_text(yaml.safe_dump(document))
    assert (
        main(
            [
                "check",
                "--source",
                "chest_imagenome",
                "--strict",
                "--config",
                str(own),
                "--results",
                str(own.parent / "results"),
            ]
        )
        == 0
    )
    assert (
        main(["convert", "2D_Task/ChestImagrome", "--config", str(own), "--results", str(own.parent / "results")]) == 0
    )
    assert sorted(_tree(variant.data / SILVER)) == CROPS


def test_a_scene_graph_folder_without_scene_graphs_is_named(demo_template, tmp_path, capsys):
    variant = Copy(demo_template, tmp_path / "empty", "chest_imagenome", splits={"2D_Task/ChestImagrome": "all"})
    silver = variant.raw / "chest-imagenome" / "silver_dataset"
    (silver / "scene_graph.zip").unlink()
    (silver / "scene_graph" / "scene_graph").mkdir(parents=True)
    (silver / "scene_graph" / "scene_graph" / "README.txt").write_text("not a scene graph\n")
    folder = silver / "scene_graph"
    said = f"missing: {folder} holds no *_SceneGraph.json (nor does {folder}/scene_graph)"
    code, out = variant.run(capsys, "check", "--source", "chest_imagenome", "--strict")
    assert code == 1 and said in out, out
    code, out = variant.run(capsys, "convert", "2D_Task/ChestImagrome")
    assert code == 2 and said in out and "unexpected" not in out, out
    assert not (variant.data / SILVER).exists()


def test_a_zip_without_scene_graphs_stops_the_silver_crops(demo_template, tmp_path, capsys):
    """The neighbour of an empty folder: a zip of other files would make every wanted crop "no box"."""
    variant = Copy(demo_template, tmp_path / "other", "chest_imagenome", splits={"2D_Task/ChestImagrome": "all"})
    zip_path = variant.raw / "chest-imagenome" / "silver_dataset" / "scene_graph.zip"
    with zipfile.ZipFile(zip_path, "w") as archive:
        archive.writestr("scene_graph/README.txt", "not a scene graph\n")
    code, out = variant.run(capsys, "convert", "2D_Task/ChestImagrome")
    assert code == 2 and f"{zip_path} holds no <dicom_id>_SceneGraph.json" in out, out
    assert not (variant.data / SILVER).exists()


def test_a_nested_scene_graph_folder_linked_out_of_the_raw_root_is_not_read(demo_template, tmp_path, capsys):
    outside = tmp_path / "outside"
    variant = Copy(demo_template, tmp_path / "linked", "chest_imagenome", splits={"2D_Task/ChestImagrome": "all"})
    silver = variant.raw / "chest-imagenome" / "silver_dataset"
    with zipfile.ZipFile(silver / "scene_graph.zip") as archive:
        archive.extractall(outside)
    (silver / "scene_graph.zip").unlink()
    (silver / "scene_graph").mkdir()
    os.symlink(outside / "scene_graph", silver / "scene_graph" / "scene_graph")
    code, out = variant.run(capsys, "check", "--source", "chest_imagenome", "--strict")
    assert code == 1 and f"is a link to {outside / 'scene_graph'}, outside the raw root" in out, out
    code, out = variant.run(capsys, "convert", "2D_Task/ChestImagrome")
    assert code == 2 and "outside the raw root" in out, out
    assert not (variant.data / SILVER).exists()


# --- CheXpert Plus: the PNG chunks ------------------------------------------------------------------------

CHEXPERT_IMAGES = ["train/patient00001/study1/view1_frontal.png", "train/patient00002/study2/view2_lateral.png"]


def _move_png(raw: Path, into: str) -> Path:
    """PNG/train/... becomes PNG/<into>/train/...: the chunks unzipped one level deeper."""
    png = raw / "chexpert-plus" / "PNG"
    os.rename(png, png.parent / "chunks")
    png.mkdir()
    os.rename(png.parent / "chunks", png / into)
    return png / into


@pytest.mark.parametrize("layout", ["common", "nested"])
def test_chexpert_png_root_links_the_folder_that_holds_train(demo_template, tmp_path, capsys, layout):
    variant = Copy(demo_template, tmp_path / layout, "chexpert_plus")
    expected = {name: (variant.raw / "chexpert-plus" / "PNG" / name).read_bytes() for name in CHEXPERT_IMAGES}
    images = _move_png(variant.raw, "PNG") if layout == "nested" else variant.raw / "chexpert-plus" / "PNG"
    code, out = variant.run(capsys, "check", "--source", "chexpert_plus", "--strict")
    assert code == 0 and "chexpert_plus: 3 of 3 needed files present" in out, out
    found = "png: PNG/PNG/ holds train/* or valid/*, one level deeper than PNG/" if layout == "nested" else (
        "png: PNG/ holds train/* or valid/*\n")  # fmt: skip
    assert "Layouts found (the registry accepts several for these):\n  chexpert_plus: " + found in out, out
    assert (
        main(
            [
                "convert",
                "2D_Task/ChexpertPlus",
                "--config",
                str(variant.config),
                "--results",
                str(variant.config.parent / "results"),
            ]
        )
        == 0
    )
    root = variant.data / "2D_Images" / "chexpert_plus" / "png"
    assert os.readlink(root) == str(images.resolve())
    assert _tree(root) == expected  # every record path resolves through the link, to the same bytes
    code, out = variant.run(capsys, "validate", str(variant.data), "--subset", "2D_Task/ChexpertPlus")
    assert code == 0, out


def test_chexpert_png_without_train_or_valid_is_named(demo_template, tmp_path, capsys):
    variant = Copy(demo_template, tmp_path / "other", "chexpert_plus")
    _move_png(variant.raw, "chunk_1")
    png = variant.raw / "chexpert-plus" / "PNG"
    said = f"missing: {png} holds no train/* or valid/* (nor does {png}/PNG)"
    code, out = variant.run(capsys, "check", "--source", "chexpert_plus", "--strict")
    assert code == 1 and said in out, out
    code, out = variant.run(capsys, "convert", "2D_Task/ChexpertPlus")
    assert code == 2 and said in out and "unexpected" not in out, out
    assert not os.path.lexists(variant.data / "2D_Images" / "chexpert_plus" / "png")


# --- ROCO-QA: which file holds what ---------------------------------------------------------------------


def _roco_expected(raw: Path) -> dict[str, bytes]:
    """The benchmark script's names of the demo's rows (one counter over the five files in its order), with
    the bytes stored in each row."""
    expected, seq = {}, 0
    for file, split, rows in ROCO_ORDER:
        cells = pq.read_table(raw / "ROCO-QA" / "data" / file).column("image").to_pylist()
        assert len(cells) == rows
        for cell in cells:
            seq += 1
            expected[f"images/{split}_sample_{seq:06d}.jpg"] = cell["bytes"]
    return expected


def test_info_says_which_roco_file_holds_what(capsys):
    assert main(["info", "roco_qa"]) == 0
    out = capsys.readouterr().out
    assert (
        "  expects: data/Test-*.parquet (>= 1): the Test split of adishourya/ROCO-QA, the images of ROCO_test.json\n"
        in out
    )
    assert "  expects: data/Train-*.parquet (>= 1): the Train rows, published apart as adishourya/ROCO-QA-Train" in out


def _hub_names(raw: Path) -> None:
    """The Hub's names: other hashes for Vaild and Test, the Train rows as ROCO-QA-Train's shards (one row each,
    in order), Train-0000K-of-00003.parquet without a hash."""
    data = raw / "ROCO-QA" / "data"
    os.rename(data / ROCO_ORDER[0][0], data / "Vaild-00000-of-00001-0a1b2c3d4e5f6a7b.parquet")
    os.rename(data / ROCO_ORDER[3][0], data / "Test-00000-of-00001-7b6a5f4e3d2c1b0a.parquet")
    table = pq.read_table(data / ROCO_ORDER[1][0])
    for k in range(table.num_rows):
        pq.write_table(table.slice(k, 1), data / f"Train-{k:05d}-of-{table.num_rows:05d}.parquet")
    (data / ROCO_ORDER[1][0]).unlink()


def _roco(demo_template, tmp_path, name: str, splits: str = "test") -> Copy:
    return Copy(demo_template, tmp_path / name, "roco_qa", splits={"2D_Task/ROCO-VQA": splits})


@pytest.mark.parametrize("splits", ["test", "all"])
def test_roco_hub_shard_names_build_the_names_of_the_authors_files(demo_template, tmp_path, capsys, splits):
    variant = _roco(demo_template, tmp_path, "hub", splits)
    expected = _roco_expected(variant.raw)
    if splits == "test":
        expected = {name: data for name, data in expected.items() if name in TEST_IMAGES}
    _hub_names(variant.raw)
    code, out = variant.run(capsys, "check", "--source", "roco_qa", "--strict")
    assert code == 0, out
    assert (
        main(
            [
                "convert",
                "2D_Task/ROCO-VQA",
                "--config",
                str(variant.config),
                "--results",
                str(variant.config.parent / "results"),
            ]
        )
        == 0
    )
    assert _tree(variant.data / "2D_Images" / "ROCO-VQA") == expected


def test_roco_test_split_does_not_need_the_file_after_test(demo_template, tmp_path, capsys):
    variant = _roco(demo_template, tmp_path, "test_only")
    expected = {name: data for name, data in _roco_expected(variant.raw).items() if name in TEST_IMAGES}
    (variant.raw / "ROCO-QA" / "data" / "Valid-00000-of-00002.parquet").unlink()
    code, out = variant.run(capsys, "check", "--source", "roco_qa", "--strict")
    assert code == 0, out
    assert (
        main(
            [
                "convert",
                "2D_Task/ROCO-VQA",
                "--config",
                str(variant.config),
                "--results",
                str(variant.config.parent / "results"),
            ]
        )
        == 0
    )
    assert _tree(variant.data / "2D_Images" / "ROCO-VQA") == expected
    train = _roco(demo_template, tmp_path, "train_too", "all")
    (train.raw / "ROCO-QA" / "data" / "Valid-00000-of-00002.parquet").unlink()
    said = (
        "not published upstream: data/Valid-00000-of-00002.parquet (the first Valid shard, counted last by the "
        "benchmark; only the train split reads it): no public listing of adishourya/ROCO-QA holds a Valid split"
    )
    code, out = train.run(capsys, "check", "--source", "roco_qa", "--strict")
    assert code == 1 and said in out, out
    code, out = train.run(capsys, "convert", "2D_Task/ROCO-VQA")
    assert code == 2 and said in out, out


def test_roco_with_only_the_hubs_files_says_the_valid_shards_are_unpublished(demo_template, tmp_path, capsys):
    """The Hub holds no Valid split: `check`, `convert` and `info` say so, what it blocks, that the release ships
    the images, and what would unblock a build from the raw files; never a bare "missing"."""
    variant = _roco(demo_template, tmp_path, "hub_only")
    _hub_names(variant.raw)
    for name in ("Valid-00000-of-00002.parquet", "Valid-00001-of-00002.parquet"):
        (variant.raw / "ROCO-QA" / "data" / name).unlink()
    said = [
        "not published upstream: data/Valid-00001-of-00002.parquet (the second Valid shard, counted by the "
        "benchmark before Test): no public listing of adishourya/ROCO-QA holds a Valid split",
        "It blocks 2D_Task/ROCO-VQA (every split it builds); the release ships the images of 2D_Task/ROCO-VQA "
        "(medheb download release --subset 2D_Task/ROCO-VQA): with them in DATA_BASEDIR the build takes them",
        "To build from the raw files instead: the two Valid shards as the benchmark's authors hold them",
    ]
    code, out = variant.run(capsys, "check", "--source", "roco_qa", "--strict")
    assert code == 1 and all(line in out for line in said), out
    assert "missing: data/Valid" not in out and "Valid-00000-of-00002.parquet" not in out  # test needs it not
    code, out = variant.run(capsys, "convert", "2D_Task/ROCO-VQA")
    assert code == 2 and said[0] in out, out
    assert not (variant.data / "2D_Images" / "ROCO-VQA").exists()
    assert main(["info", "roco_qa"]) == 0
    info = capsys.readouterr().out
    assert "  expects: data/Valid-00001-of-00002.parquet: the second Valid shard" in info
    assert "    not published upstream: no public listing of adishourya/ROCO-QA holds a Valid split" in info
    assert "It blocks 2D_Task/ROCO-VQA (its train split, built with splits: all)" in info  # Valid-00000's


def test_roco_test_split_names_the_train_rows_it_counts(demo_template, tmp_path, capsys):
    variant = _roco(demo_template, tmp_path, "no_train")
    (variant.raw / "ROCO-QA" / "data" / ROCO_ORDER[1][0]).unlink()
    code, out = variant.run(capsys, "check", "--source", "roco_qa", "--strict")
    assert code == 1, out
    assert "missing: data/Train-*.parquet (the Train rows, published apart as adishourya/ROCO-QA-Train" in out
    code, out = variant.run(capsys, "convert", "2D_Task/ROCO-VQA")
    assert code == 2 and "counted before Valid-00001 and Test" in out and "unexpected" not in out, out
    assert not (variant.data / "2D_Images" / "ROCO-VQA").exists()


@pytest.mark.parametrize(
    ("plant", "said"),
    [
        ("gap", "data/Train-*.parquet: 2 of 3 shards, without Train-00001-of-00003: download the missing ones"),
        ("two_sets", "data/Train-*.parquet: two sets of shards (1 of Train-*-of-00001 and 3 of Train-*-of-00003)"),
    ],
)
def test_roco_a_shard_set_that_would_shift_the_counter_is_refused(demo_template, tmp_path, capsys, plant, said):
    variant = _roco(demo_template, tmp_path, plant)
    data = variant.raw / "ROCO-QA" / "data"
    authors = data / ROCO_ORDER[1][0]
    keep = authors.read_bytes()
    _hub_names(variant.raw)
    if plant == "gap":
        (data / "Train-00001-of-00003.parquet").unlink()
    else:
        authors.write_bytes(keep)  # the authors' single file beside the Hub's shards
    code, out = variant.run(capsys, "check", "--source", "roco_qa", "--strict")
    assert code == 1 and said in out, out
    code, out = variant.run(capsys, "convert", "2D_Task/ROCO-VQA")
    assert code == 2 and said in out, out
    assert not (variant.data / "2D_Images" / "ROCO-VQA").exists()


@pytest.mark.registry_wide
def test_every_recipe_part_names_a_file_spec_of_its_source_and_the_order_keeps_train_files_last():
    """A `{spec, split}` part of a parquet_extract recipe is looked up when the job runs: each must name a file
    spec of the subset's source, and a spec only the train split reads (split: train) may come only after every
    part of a test split (else the test numbers would need a file the test check never asks for)."""
    from preprocess.registry import splits
    from preprocess.registry.loader import load_registry

    registry = load_registry()
    kind = registry.kinds["parquet_extract"]
    for subset in registry.subsets:
        for conversion in subset.conversions:
            if conversion.kind != "parquet_extract":
                continue
            source = registry.source(conversion.params.get("source") or subset.source_ids[0])
            parts = [p for p in kind.recipes[conversion.params["dataset"]]["files"] if isinstance(p, dict)]
            specs = [source.file(part["spec"]) for part in parts]
            tested = set(conversion.params.get("splits", ()))
            last_test = max((i for i, part in enumerate(parts) if part["split"] in tested), default=-1)
            assert all(spec.split != "train" for spec in specs[: last_test + 1]), subset.key
            needed = {s.id for s in splits.files(registry, None, subset)[source.id]}
            assert {spec.id for spec in specs[: last_test + 1]} <= needed, subset.key
