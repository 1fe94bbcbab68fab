"""Boxes, the crop rule, and the crops cut from masks (the annotated-box subsets and DICOM decoding are in
tests/test_annotation_crops.py)."""

from __future__ import annotations

import io
import json
import os

import numpy as np
import pyarrow.parquet as pq
from PIL import Image

from preprocess import boxes, steps


def _png(path) -> np.ndarray:
    with Image.open(path) as image:
        return np.array(image)


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


def test_noisy_jpeg_mask_is_thresholded():
    mask = np.array([[3, 8, 0], [250, 247, 5]], np.uint8)  # Kvasir-SEG masks are JPEG: 0-8 and 247-255
    assert boxes.mask_box(mask, threshold=127) == (0, 1, 2, 2)


def test_reference_crop_rule():
    # a 10x4 box grows to 28x28 around its integer midpoint (15, 12)
    assert boxes.reference_crop(10.7, 10.2, 20.9, 14.8, 100, 100) == (1, 0, 29, 28)  # rows shifted from -2
    # large boxes keep their size; coordinates are truncated
    assert boxes.reference_crop(10.9, 5.5, 60.2, 50.1, 100, 100) == (10, 5, 60, 50)
    # near the right/bottom edge the crop is shifted back inside
    assert boxes.reference_crop(95, 95, 99, 99, 100, 100) == (72, 72, 100, 100)
    # negative coordinates are floored at 0; an image smaller than 28 px gives the whole image
    assert boxes.reference_crop(-5, -5, 3, 3, 20, 20) == (0, 0, 20, 20)


def test_pannuke_crop_uses_the_rounded_centre():
    assert boxes.pannuke_crop((10, 10, 13, 12), 256, 256) == (0, 0, 28, 28)  # centre (12, 11), shifted inside
    left, top, right, bottom = boxes.pannuke_crop((100, 100, 105, 103), 256, 256)
    assert (right - left, bottom - top) == (28, 28)
    assert (left + right) // 2 == round((100 + 105) / 2) and (top + bottom) // 2 == round((100 + 103) / 2)


# --- the subsets --------------------------------------------------------------------------------------------


def _convert(settings, subset, conversion=None):
    return steps.convert(settings, settings.registry(), subset, conversion, 0, 1, None)


def _check_crop(crop_path, image, x0, y0, x1, y1):
    box = boxes.reference_crop(x0, y0, x1, y1, image.shape[1], image.shape[0])
    got = _png(crop_path)
    assert got.shape[:2] == (box[3] - box[1], box[2] - box[0])
    assert min(got.shape[:2]) >= min(28, *image.shape[:2])
    assert 0 <= box[0] < box[2] <= image.shape[1] and 0 <= box[1] < box[3] <= image.shape[0]
    assert np.array_equal(got, image[box[1] : box[3], box[0] : box[2]])


def test_kvasir_seg_uses_the_misspelled_box_file_and_the_split(settings, demo):
    _convert(settings, "Gastrointestinal", "kvasir_seg")
    raw = demo / "raw" / "Kvasir-SEG"
    root = demo / "DATA_BASEDIR" / "2D_Images" / "Gastrointestinal" / "kvasir"
    annotations = json.loads((raw / "kavsir_bboxes.json").read_text())
    test_ids = [line.split(",")[0] for line in (raw / "split.csv").read_text().splitlines()[1:] if "test" in line]
    assert sorted(os.listdir(root / "crop")) == sorted(f"{i}_0.png" for i in test_ids)
    for image_id in test_ids:
        image = _png(raw / "images" / f"{image_id}.jpg")
        box = annotations[image_id]["bbox"][0]
        _check_crop(root / "crop" / f"{image_id}_0.png", image, box["xmin"], box["ymin"], box["xmax"], box["ymax"])
        assert os.path.samefile(root / "images" / f"{image_id}.jpg", raw / "images" / f"{image_id}.jpg") or (
            (root / "images" / f"{image_id}.jpg").read_bytes() == (raw / "images" / f"{image_id}.jpg").read_bytes()
        )


def test_medsegbench_masks_to_crops_with_empty_masks_skipped(settings, demo, capsys):
    _convert(settings, "UltrasoundNerve", "nerve")
    assert "1 test images of ultrasoundnerve have an empty mask and were skipped" in capsys.readouterr().out
    with np.load(demo / "raw" / "MedSegBench" / "ultrasoundnerve_512.npz") as archive:
        images, masks = archive["test_images"], archive["test_label"]
    root = demo / "DATA_BASEDIR" / "2D_Images" / "UltrasoundNerve" / "ultrasoundnerve"
    assert sorted(os.listdir(root / "crop")) == ["test00000_0.png", "test00002_0.png"]
    for index in (0, 2):
        x0, y0, x1, y1 = boxes.mask_box(masks[index])
        _check_crop(root / "crop" / f"test{index:05d}_0.png", images[index], x0, y0, x1, y1)


def test_medsegbench_category_keys(settings, demo):
    _convert(settings, "SkinLesion", "uwaterloo")
    crops = sorted(os.listdir(demo / "DATA_BASEDIR" / "2D_Images" / "SkinLesion" / "uwaterlooskincancer" / "crop"))
    assert crops == ["test_C100000_0.png", "test_C100001_0.png", "test_C200000_0.png", "test_C200001_0.png"]


def test_pannuke_vg_instances_to_crops(settings, demo):
    _convert(settings, "PanNuke_VG")
    root = demo / "DATA_BASEDIR" / "2D_Images" / "PanNuke_VG"
    table = pq.read_table(demo / "raw" / "PanNuke" / "data" / "fold1-00000-of-00001.parquet").to_pylist()
    tag = "fold1-00000-of-00001"
    assert sorted(os.listdir(root / "images" / tag)) == [f"{tag}_{r:06d}.png" for r in range(3)]
    expected = []
    for row, record in enumerate(table):
        image = _png(io.BytesIO(record["image"]["bytes"]))
        for number, (instance, category) in enumerate(zip(record["instances"], record["categories"], strict=True)):
            mask = _png(io.BytesIO(instance["bytes"]))
            kind = ["neoplastic", "inflammatory", "connective", "dead", "epithelial"][category]
            name = f"{tag}_{row:06d}_{kind}_{number:03d}.png"
            expected.append(name)
            box = boxes.pannuke_crop(boxes.mask_box(mask), 32, 32)
            assert np.array_equal(_png(root / "crops" / tag / name), image[box[1] : box[3], box[0] : box[2]])
    assert sorted(os.listdir(root / "crops" / tag)) == sorted(expected)
    assert len(expected) == 4  # row 1 has no nucleus; the one-pixel edge nuclei are kept


def test_isic2018_and_polypgen_crop_pixels(settings, demo):
    for subset, conversion, flag in (
        ("SkinLesion", "isic2018", "isic2018"),
        ("Gastrointestinal", "polypgen", "polypgen"),
    ):
        _convert(settings, subset, conversion)
        with np.load(demo / "raw" / "MedSegBench" / f"{flag}_512.npz") as archive:
            images, masks = archive["test_images"], archive["test_label"]
        root = demo / "DATA_BASEDIR" / "2D_Images" / subset / flag
        for index in range(len(images)):
            x0, y0, x1, y1 = boxes.mask_box(masks[index])
            _check_crop(root / "crop" / f"test{index:05d}_0.png", images[index], x0, y0, x1, y1)
            assert np.array_equal(_png(root / "images" / f"test{index:05d}.png"), images[index])
