"""Mask-to-box crops (kind mask_bbox_crop) against the benchmark's grounding scripts.

Each test writes the reference rule out on its own (literal names, boxes from numpy on the fake's mask, crops by
plain slicing) and compares what the conversion wrote. The rules (Processing_Code, Vision_Grounding/):
- Gastrointestinal: Kvasir-SEG's largest box of kavsir_bboxes.json (int(float), the first on ties), split from
  split.csv (`split,original_image_path`, rows `<id>.png`), every split, clamped, no minimum; PolypGen boxes
  (xmin, ymin, xmax, ymax) with the inclusive max as the exclusive edge. Names images/{split}_{stem}.png and
  images/{split}_{stem}_polyp.png.
- SkinLesion, UltrasoundNerve: one box around all mask pixels (max + 1), every split, the plain
  {split}_label keys (not the per-category ones), RGB even for gray ultrasound, crops under 28 px dropped with
  their image. Names images/{split}_{i:05d}_{flag}.png and ..._crop.png.
- PanNuke_VG: every parquet row, RGB PNG; one box per instance mask grown to 28 px around its centre
  (start = round(centre - size / 2), halves to even), shifted inside; a category outside 0..4 is cropped as
  class_<id> (PanNuke/Preprocess.py: get_class_name, then the name lower-cased and sanitised).
"""

from __future__ import annotations

import io
import json
import os

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from PIL import Image

from conftest import demo_settings, without_checksums
from preprocess.convert import boxes
from preprocess.errors import RawDataError
from preprocess.pipeline import steps
from preprocess.verify import validate

KVASIR = "raw/Kvasir-SEG"
MEDSEGBENCH = "raw/MedSegBench"


@pytest.fixture
def settings(demo):
    """These tests compare every split the benchmark's scripts write, so they ask for the train split too."""
    return demo_settings(demo, splits="all")


def _png(path) -> np.ndarray:
    with Image.open(path) as image:
        assert image.mode == "RGB", f"{path}: {image.mode}"
        return np.array(image)


def _rgb_of_file(path) -> np.ndarray:
    with Image.open(path) as image:
        return np.array(image.convert("RGB"))


def _convert(settings, subset, conversion=None):
    return steps.Build(settings).convert(subset=subset, conversion=conversion)


def _files(root) -> list[str]:
    return sorted(os.path.relpath(os.path.join(d, f), root) for d, _, names in os.walk(root) for f in names)


def _npz(path, arrays: dict) -> None:
    with open(path, "wb") as handle:
        np.savez_compressed(handle, **arrays)


# --- boxes on literal arrays --------------------------------------------------------------------------------


def test_one_pixel_box_is_half_open():
    mask = np.zeros((5, 6), np.uint8)
    mask[2, 3] = 1
    assert boxes.mask_box(mask) == (3, 2, 4, 3)  # x0, y0, x1, y1: one column, one row
    assert boxes.crop(np.arange(30).reshape(5, 6), (3, 2, 4, 3)).tolist() == [[15]]


def test_full_and_border_touching_masks():
    assert boxes.mask_box(np.ones((4, 7))) == (0, 0, 7, 4)
    mask = np.zeros((4, 7))
    mask[3, 6] = 1
    assert boxes.mask_box(mask) == (6, 3, 7, 4)


def test_empty_mask_has_no_box():
    assert boxes.mask_box(np.zeros((4, 4))) is None
    assert boxes.component_boxes(np.zeros((4, 4))) == []


def test_two_components_and_one_box_per_mask():
    mask = np.zeros((6, 10), np.uint8)
    mask[1:3, 1:3] = 255
    mask[4:6, 7:10] = 255
    assert boxes.component_boxes(mask) == [(1, 1, 3, 3), (7, 4, 10, 6)]
    assert boxes.mask_box(mask) == (1, 1, 10, 6)


def test_clip_keeps_the_last_column_of_a_box_past_the_edge():
    # the scripts clamp x0 into [0, w - 1] and x1 into [0, w]
    assert boxes.clip_to_image((60, 40, 95, 70), 80, 60) == (60, 40, 80, 60)
    assert boxes.clip_to_image((85, 10, 99, 20), 80, 60) == (79, 10, 80, 20)
    assert boxes.clip_to_image((-5, -5, 0, 10), 80, 60) is None
    assert boxes.clip_to_image((10, 10, 10, 20), 80, 60) is None


def test_growth_to_28_px_around_the_centre():
    assert boxes.grow_to_minimum((5, 4, 8, 9), 64, 64) == (0, 0, 28, 28)  # starts -8 and -8, shifted to 0
    assert boxes.grow_to_minimum((22, 30, 53, 59), 64, 64) == (22, 30, 53, 59)  # 31 x 29: kept as it is
    assert boxes.grow_to_minimum((60, 61, 64, 64), 64, 64) == (36, 36, 64, 64)  # shifted back from 48
    assert boxes.grow_to_minimum((40, 40, 45, 41), 64, 64) == (28, 26, 56, 54)  # round(28.5) = 28, round(26.5) = 26
    assert boxes.grow_to_minimum((2, 2, 5, 5), 20, 16) == (0, 0, 20, 16)  # capped at the image


# --- Gastrointestinal ----------------------------------------------------------------------------------------


def test_kvasir_seg_largest_box_every_split(settings, demo, capsys):
    raw = demo / KVASIR
    assert (
        (raw / "split.csv").read_text().startswith("split,original_image_path\ntrain,cju0qkwl35piu0993l0dewei2.png\n")
    )
    annotations = json.loads((raw / "kavsir_bboxes.json").read_text())
    assert [(b["xmin"], b["ymin"], b["xmax"], b["ymax"]) for b in annotations["cju0qoxqj9q6s0835b43399p4"]["bbox"]] == [
        (5, 5, 15, 12),
        (30, 20, 70, 50),
        (40, 2, 60, 12),
    ]
    _convert(settings, "Gastrointestinal", "kvasir_seg")
    _convert(settings, "Gastrointestinal", "kvasir_seg_train")
    assert "cju0s2a9ekvms080138tjjpxr" in capsys.readouterr().out  # in the box file, not in split.csv
    root = demo / "DATA_BASEDIR" / "2D_Images" / "Gastrointestinal"
    expected = {  # (split, id): the crop as rows, columns of the 60 x 80 image
        ("train", "cju0qkwl35piu0993l0dewei2"): (slice(10, 30), slice(20, 50)),
        ("test", "cju0qoxqj9q6s0835b43399p4"): (slice(20, 50), slice(30, 70)),  # the largest of three boxes
        ("test", "cju0roawvklrq0799vmjorwfv"): (slice(10, 20), slice(10, 20)),  # two of 100 px: the first
        ("test", "cju0rx1idathl0835detmsp84"): (slice(40, 60), slice(60, 80)),  # (60, 40, 95, 70) clamped
    }
    names = [f"images/{s}_{i}{end}.png" for s, i in expected for end in ("", "_polyp")]
    assert _files(root) == sorted(names)
    for (split, image_id), (rows, cols) in expected.items():
        image = _rgb_of_file(raw / "images" / f"{image_id}.jpg")
        assert np.array_equal(_png(root / "images" / f"{split}_{image_id}.png"), image)
        assert np.array_equal(_png(root / "images" / f"{split}_{image_id}_polyp.png"), image[rows, cols])


def test_kvasir_coordinates_are_truncated_and_a_tiny_box_is_kept(demo):
    raw = demo / KVASIR
    annotations = json.loads((raw / "kavsir_bboxes.json").read_text())
    annotations["cju0qkwl35piu0993l0dewei2"]["bbox"] = [
        {"label": "polyp", "xmin": "20.9", "ymin": 10.7, "xmax": 23.99, "ymax": 12.2},  # 3 x 2 after int(float)
        {"label": "polyp", "xmin": 1, "ymin": 1},  # no xmax, ymax: not a box
    ]
    annotations["cju0qoxqj9q6s0835b43399p4"]["bbox"] = []  # no box at all: left out
    (raw / "kavsir_bboxes.json").write_text(json.dumps(annotations))
    without_checksums(demo, "kvasir_seg")
    _convert(demo_settings(demo, splits="all"), "Gastrointestinal", "kvasir_seg_train")
    root = demo / "DATA_BASEDIR" / "2D_Images" / "Gastrointestinal" / "images"
    image = _rgb_of_file(raw / "images" / "cju0qkwl35piu0993l0dewei2.jpg")
    assert np.array_equal(_png(root / "train_cju0qkwl35piu0993l0dewei2_polyp.png"), image[10:12, 20:23])
    assert not (root / "test_cju0qoxqj9q6s0835b43399p4.png").exists()


def test_polypgen_inclusive_max_leaves_the_last_row_and_column_out(settings, demo, capsys):
    _convert(settings, "Gastrointestinal", "polypgen")
    _convert(settings, "Gastrointestinal", "polypgen_train")
    assert "test 00002" in capsys.readouterr().out  # a one-column mask: nothing is left
    root = demo / "DATA_BASEDIR" / "2D_Images" / "Gastrointestinal"
    kept = [("train", 0), ("train", 1), ("val", 0), ("test", 0), ("test", 1)]
    assert _files(root) == sorted(f"images/{s}_{i:05d}{end}.png" for s, i in kept for end in ("", "_polyp"))
    with np.load(demo / MEDSEGBENCH / "polypgen_512.npz") as archive:
        for split, index in kept:
            image, mask = archive[f"{split}_images"][index], archive[f"{split}_label"][index]
            rows, cols = np.nonzero(mask > 0)
            crop = image[rows.min() : rows.max(), cols.min() : cols.max()]
            assert np.array_equal(_png(root / "images" / f"{split}_{index:05d}.png"), image)
            assert np.array_equal(_png(root / "images" / f"{split}_{index:05d}_polyp.png"), crop)


# --- SkinLesion and UltrasoundNerve --------------------------------------------------------------------------


def _whole_mask_crop(image, mask):
    rows, cols = np.nonzero(mask > 0)
    return image[rows.min() : rows.max() + 1, cols.min() : cols.max() + 1]


def test_skin_lesion_every_split_plain_keys_and_28_px(settings, demo, capsys):
    _convert(settings, "SkinLesion")
    out = capsys.readouterr().out
    assert "crop under 28 px" in out and "test 00002" in out  # ISIC test 2: 20 px wide, its image goes too
    root = demo / "DATA_BASEDIR" / "2D_Images" / "SkinLesion"
    kept = {
        "isic2018": [("train", 0), ("train", 1), ("val", 0), ("test", 0), ("test", 1)],
        "uwaterlooskincancer": [("train", 0), ("train", 1), ("val", 0), ("test", 0), ("test", 1), ("test", 2)],
    }
    names = [
        f"images/{s}_{i:05d}_{flag}{end}.png" for flag, items in kept.items() for s, i in items for end in ("", "_crop")
    ]
    assert _files(root) == sorted(names)  # UWaterloo's _C1/_C2 arrays add no names of their own
    for flag, items in kept.items():
        with np.load(demo / MEDSEGBENCH / f"{flag}_512.npz") as archive:
            if flag == "uwaterlooskincancer":
                assert {"test_images_C1", "test_label_C2"} <= set(archive.files)
            for split, index in items:
                image, mask = archive[f"{split}_images"][index], archive[f"{split}_label"][index]
                assert np.array_equal(_png(root / "images" / f"{split}_{index:05d}_{flag}.png"), image)
                crop = _png(root / "images" / f"{split}_{index:05d}_{flag}_crop.png")
                assert np.array_equal(crop, _whole_mask_crop(image, mask))


def test_gray_ultrasound_becomes_rgb_and_empty_masks_are_skipped(settings, demo, capsys):
    _convert(settings, "UltrasoundNerve")
    assert "empty mask: test 00001" in capsys.readouterr().out
    root = demo / "DATA_BASEDIR" / "2D_Images" / "UltrasoundNerve"
    kept = {
        "ultrasoundnerve": [("train", 0), ("train", 1), ("val", 0), ("test", 0), ("test", 2)],
        "usforkidney": [("train", 0), ("train", 1), ("val", 0), ("test", 0), ("test", 1), ("test", 2)],
    }
    names = [
        f"images/{s}_{i:05d}_{flag}{end}.png" for flag, items in kept.items() for s, i in items for end in ("", "_crop")
    ]
    assert _files(root) == sorted(names)
    for flag, items in kept.items():
        with np.load(demo / MEDSEGBENCH / f"{flag}_512.npz") as archive:
            for split, index in items:
                gray, mask = archive[f"{split}_images"][index], archive[f"{split}_label"][index]
                assert gray.ndim == 2
                rgb = np.stack([gray, gray, gray], axis=-1)
                assert np.array_equal(_png(root / "images" / f"{split}_{index:05d}_{flag}.png"), rgb)
                crop = _png(root / "images" / f"{split}_{index:05d}_{flag}_crop.png")
                assert np.array_equal(crop, _whole_mask_crop(rgb, mask))
    corner = _png(root / "images" / "test_00002_usforkidney_crop.png")
    assert corner.shape == (28, 28, 3)  # exactly 28 px: kept


def test_first_category_mask_when_the_plain_one_is_missing(demo):
    path = demo / MEDSEGBENCH / "isic2018_512.npz"
    image = np.full((40, 50, 3), 90, np.uint8)
    image[:, :, 1] = np.arange(50, dtype=np.uint8)
    label = np.zeros((1, 40, 50), np.uint8)
    label[0, 5:35, 10:45] = 1
    other = np.zeros((1, 40, 50), np.uint8)
    other[0, 0:39, 0:49] = 1
    _npz(path, {"test_images": image[None], "test_label_C1": label, "test_label_C2": other})
    without_checksums(demo, "medsegbench")
    _convert(demo_settings(demo), "SkinLesion", "isic2018")
    root = demo / "DATA_BASEDIR" / "2D_Images" / "SkinLesion" / "images"
    assert sorted(os.listdir(root)) == ["test_00000_isic2018.png", "test_00000_isic2018_crop.png"]
    assert np.array_equal(_png(root / "test_00000_isic2018_crop.png"), image[5:35, 10:45])


def test_an_archive_with_category_keys_only_names_itself(demo):
    path = demo / MEDSEGBENCH / "isic2018_512.npz"
    _npz(path, {"test_images_C1": np.zeros((1, 8, 8, 3), np.uint8), "test_label_C1": np.ones((1, 8, 8), np.uint8)})
    without_checksums(demo, "medsegbench")
    with pytest.raises(RawDataError, match=r"isic2018_512.npz: no split with images and masks"):
        _convert(demo_settings(demo), "SkinLesion", "isic2018")


# --- PanNuke_VG ---------------------------------------------------------------------------------------------

IMAGE = pa.struct([("bytes", pa.binary()), ("path", pa.string())])


def _png_bytes(array, mode=None) -> bytes:
    buffer = io.BytesIO()
    image = Image.fromarray(array)
    (image.convert(mode) if mode else image).save(buffer, format="PNG")
    return buffer.getvalue()


def _nucleus(x0, y0, x1, y1) -> dict:
    mask = np.zeros((64, 64), bool)
    mask[y0:y1, x0:x1] = True
    return {"bytes": _png_bytes(mask.astype(np.uint8) * 255, "1"), "path": None}  # 1-bit PNG, as upstream


def test_pannuke_vg_rows_instances_and_grown_boxes(demo, capsys):
    rng = np.random.default_rng(5)
    pictures = [rng.integers(0, 256, (64, 64, 3), dtype=np.uint8) for _ in range(3)]
    instances = [
        [_nucleus(5, 4, 8, 9), _nucleus(22, 30, 53, 59), _nucleus(0, 0, 0, 0), _nucleus(60, 61, 64, 64)],
        [_nucleus(40, 40, 45, 41), _nucleus(1, 1, 4, 4)],  # one category only: the second is not read
        [],
    ]
    table = pa.table(
        {
            "image": pa.array([{"bytes": _png_bytes(p), "path": None} for p in pictures], IMAGE),
            "instances": pa.array(instances, pa.list_(IMAGE)),
            "categories": pa.array([[0, 2, 1, 4], [1], []], pa.list_(pa.int64())),
            "tissue": pa.array([3, 5, 7], pa.int64()),
        }
    )
    fold1 = demo / "raw" / "PanNuke" / "data" / "fold1-00000-of-00001.parquet"
    pq.write_table(table, fold1, row_group_size=2)
    without_checksums(demo, "pannuke")
    _convert(demo_settings(demo), "PanNuke_VG")
    assert "empty instance mask" in capsys.readouterr().out
    tag = "fold1-00000-of-00001"
    root = demo / "DATA_BASEDIR" / "2D_Images" / "PanNuke_VG"
    crops = {  # name -> (rows, columns) of the row's image
        f"{tag}_000000_neoplastic_000.png": (slice(0, 28), slice(0, 28)),  # 3 x 5, grown and shifted inside
        f"{tag}_000000_connective_001.png": (slice(30, 59), slice(22, 53)),  # 31 x 29: not grown
        f"{tag}_000000_epithelial_003.png": (slice(36, 64), slice(36, 64)),  # at the corner: shifted back
        f"{tag}_000001_inflammatory_000.png": (slice(26, 54), slice(28, 56)),  # halves round to even
    }
    assert sorted(os.listdir(root / "images" / tag)) == [f"{tag}_{r:06d}.png" for r in range(3)]
    assert sorted(os.listdir(root / "crops" / tag)) == sorted(crops)
    for row, picture in enumerate(pictures):
        assert np.array_equal(_png(root / "images" / tag / f"{tag}_{row:06d}.png"), picture)
    for name, (rows, cols) in crops.items():
        assert np.array_equal(_png(root / "crops" / tag / name), pictures[int(name.split("_")[1])][rows, cols])


def test_pannuke_vg_category_outside_the_five_classes_is_cropped_as_class_id(demo):
    """The script names a category it does not know `class_<id>` (sanitised, lower case) and crops it like
    any other nucleus: nothing is left out."""
    rng = np.random.default_rng(7)
    picture = rng.integers(0, 256, (64, 64, 3), dtype=np.uint8)
    table = pa.table(
        {
            "image": pa.array([{"bytes": _png_bytes(picture), "path": None}], IMAGE),
            "instances": pa.array(
                [[_nucleus(10, 10, 40, 40), _nucleus(50, 2, 53, 6), _nucleus(3, 30, 33, 60)]], pa.list_(IMAGE)
            ),
            "categories": pa.array([[7, -1, 3]], pa.list_(pa.int64())),
            "tissue": pa.array([3], pa.int64()),
        }
    )
    pq.write_table(table, demo / "raw" / "PanNuke" / "data" / "fold1-00000-of-00001.parquet")
    without_checksums(demo, "pannuke")
    _convert(demo_settings(demo), "PanNuke_VG")
    tag = "fold1-00000-of-00001"
    folder = demo / "DATA_BASEDIR" / "2D_Images" / "PanNuke_VG" / "crops" / tag
    crops = {  # name -> (rows, columns) of the picture
        f"{tag}_000000_class_7_000.png": (slice(10, 40), slice(10, 40)),  # 30 x 30: not grown
        f"{tag}_000000_class_-1_001.png": (slice(0, 28), slice(36, 64)),  # 3 x 4, grown and shifted inside
        f"{tag}_000000_dead_002.png": (slice(30, 60), slice(3, 33)),  # a known category beside them
    }
    assert sorted(os.listdir(folder)) == sorted(crops)
    for name, (rows, cols) in crops.items():
        assert np.array_equal(_png(folder / name), picture[rows, cols]), name


@pytest.mark.parametrize(
    ("category", "name"),
    [(5, "class_5"), (-1, "class_-1"), (None, "class_none"), (float("nan"), "class_nan"),
     (float("inf"), "class_inf"), ("x y", "class_x_y")],
)  # fmt: skip
def test_pannuke_vg_class_name_of_any_category(category, name):
    """get_class_name (CLASS_MAP, else class_<int(id)>, else class_<id as printed>), lower-cased, then runs of
    other characters than word, '-' and '.' as one '_'."""
    from preprocess.convert.mask_bbox_crop import _class_name

    assert _class_name(["neoplastic", "inflammatory", "connective", "dead", "epithelial"], category) == name


# --- the demo's task JSONs -----------------------------------------------------------------------------------


@pytest.mark.parametrize("subset", ["Gastrointestinal", "SkinLesion", "UltrasoundNerve", "PanNuke_VG"])
def test_demo_task_json_resolves(settings, demo, subset):
    _convert(settings, subset)
    registry = settings.registry()
    reports = validate.validate_subset(registry, registry.subset(f"2D_Task/{subset}"), demo / "DATA_BASEDIR")
    assert reports and all(r.passed for r in reports), [f for r in reports for f in r.failures]
    assert all(r.records >= 3 and r.ok == r.paths == 2 * r.records for r in reports)
