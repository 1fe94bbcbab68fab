"""Boxes, the annotation crop rule, DICOM decoding, and the annotation crops (VinDr, Chest ImaGenome).

The mask crops (Gastrointestinal, SkinLesion, UltrasoundNerve, PanNuke_VG) are in test_mask_crops.py."""

from __future__ import annotations

import os

import numpy as np
import pytest
from PIL import Image

from preprocess import boxes, steps
from preprocess.demo.crops import _dicom, xray
from preprocess.dicomio import read_dicom
from preprocess.errors import RawDataError


def _png(path) -> np.ndarray:
    with Image.open(path) as image:
        return np.array(image)


# --- boxes on literal arrays --------------------------------------------------------------------------------


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


def test_merge_by_iou_or_overlap_of_the_smaller_box():
    assert boxes.merge_overlapping([(0, 0, 10, 10), (1, 1, 11, 11)]) == [(0, 0, 11, 11)]  # IoU 0.68
    assert boxes.merge_overlapping([(0, 0, 10, 10), (2, 2, 6, 6)]) == [(0, 0, 10, 10)]  # small one inside
    assert boxes.merge_overlapping([(0, 0, 10, 10), (8, 8, 20, 20)]) == [(0, 0, 10, 10), (8, 8, 20, 20)]
    chain = boxes.merge_overlapping([(0, 0, 10, 10), (1, 0, 11, 10), (2, 0, 12, 10)])
    assert chain == [(0, 0, 12, 10)]  # merged until no pair qualifies


# --- DICOM ------------------------------------------------------------------------------------------------


def test_monochrome1_shows_air_dark_and_bone_bright_like_its_twin(tmp_path):
    stored = xray(7)
    _dicom(tmp_path / "m2.dicom", stored, "MONOCHROME2", window=([2000], [4000]))
    _dicom(tmp_path / "m1.dicom", 4095 - stored, "MONOCHROME1", window=([2095], [4000]))
    m2, m1 = read_dicom(tmp_path / "m2.dicom").pixels, read_dicom(tmp_path / "m1.dicom").pixels
    assert m2[0, 0] < 40 and m2[35, 25] > 200  # air dark, the dense finding bright
    assert np.abs(m1.astype(int) - m2.astype(int)).max() <= 1


def test_jpeg2000_and_rle_decode_to_the_uncompressed_pixels(tmp_path):
    from pydicom.uid import JPEG2000Lossless, RLELossless

    stored = xray(8)
    _dicom(tmp_path / "raw.dicom", stored)
    _dicom(tmp_path / "j2k.dicom", stored, compress=JPEG2000Lossless)
    _dicom(tmp_path / "rle.dicom", stored, compress=RLELossless)
    plain = read_dicom(tmp_path / "raw.dicom").pixels
    assert np.array_equal(read_dicom(tmp_path / "j2k.dicom").pixels, plain)
    assert np.array_equal(read_dicom(tmp_path / "rle.dicom").pixels, plain)


def test_truncated_pixel_data_names_the_file(tmp_path):
    _dicom(tmp_path / "full.dicom", xray(9))
    data = (tmp_path / "full.dicom").read_bytes()
    (tmp_path / "cut.dicom").write_bytes(data[: len(data) - 4000])
    with pytest.raises(RawDataError, match=r"cut.dicom: pixel data cannot be decoded"):
        read_dicom(tmp_path / "cut.dicom")
    (tmp_path / "junk.dicom").write_bytes(b"not dicom at all")
    with pytest.raises(RawDataError, match=r"junk.dicom: not a readable DICOM file"):
        read_dicom(tmp_path / "junk.dicom")


def test_unsupported_transfer_syntax_is_named(tmp_path):
    import pydicom

    _dicom(tmp_path / "x.dicom", xray(10))
    from pydicom.encaps import encapsulate

    dataset = pydicom.dcmread(tmp_path / "x.dicom")
    dataset.file_meta.TransferSyntaxUID = "1.2.840.10008.1.2.4.100"  # MPEG2 video: no decoder installed
    dataset.PixelData = encapsulate([dataset.PixelData])
    dataset["PixelData"].VR = "OB"
    dataset.save_as(tmp_path / "mpeg.dicom")
    with pytest.raises(RawDataError, match=r"mpeg.dicom: pixel data cannot be decoded \(transfer syntax"):
        read_dicom(tmp_path / "mpeg.dicom")


def test_window_and_rescale(tmp_path):
    stored = np.array([[0, 1000], [2000, 4095]], np.uint16)
    _dicom(tmp_path / "w.dicom", stored, window=([1000, 50], [2000, 10]))  # the first value counts
    got = read_dicom(tmp_path / "w.dicom").pixels
    low, high = 1000 - 0.5 - 1999 / 2, 1000 - 0.5 + 1999 / 2
    expected = ((np.clip(stored.astype(float), low, high) - low) / (high - low) * 255).astype(np.uint8)
    assert np.array_equal(got, expected)


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


def test_vindr_cxr_merge_class_ids_and_monochrome1(settings, demo):
    _convert(settings, "VindrCXR")
    root = demo / "DATA_BASEDIR" / "2D_Images" / "VindrCXR"
    first, second = "0a6fd1c1a33ba8b6cafe3aa5ef0e5c9a", "9f8e7d6c5b4a39281706f5e4d3c2b1a0"
    # classes sorted: Aortic enlargement 0, Cardiomegaly 1, Nodule/Mass 2; the two nodule boxes merge into one
    assert sorted(os.listdir(root / "crop")) == [f"{first}_0_0.png", f"{first}_2_0.png", f"{second}_1_0.png"]
    full = _png(root / "images" / f"{first}.png")
    assert full[0, 0] < 60 and full[35, 25] > 200  # MONOCHROME1 on disk, air dark and the finding bright
    _check_crop(root / "crop" / f"{first}_2_0.png", full, 20, 30, 31, 41)


def test_vindr_mammo_categories_split_and_for_processing(settings, demo, capsys):
    _convert(settings, "VindrMammo")
    root = demo / "DATA_BASEDIR" / "2D_Images" / "VindrMammo"
    assert "m0003.dicom: a FOR PROCESSING image" in capsys.readouterr().out
    assert sorted(os.listdir(root / "crop")) == ["m0001_0_0.png", "m0001_1_0.png"]
    assert sorted(os.listdir(root / "images")) == ["m0001.png"]


def test_chest_imagenome_gold_crops_and_mimic_queries(settings, demo):
    written = _convert(settings, "ChestImagrome")
    root = demo / "DATA_BASEDIR" / "2D_Images" / "ChestImagrome"
    names = sorted(os.listdir(root / "gold_crop"))
    assert names == sorted(p.split("/")[-1] for p, kind, _ in written if "gold_crop" in p)
    dicom = "2a2277a9-b0ded155-c0de8eb9-c124d10e-82c5caab"
    assert f"{dicom}_0_0.png" in names  # 'cardiac silhouette' is class 0 of the sorted region names
    image = _png(root / "p10" / "p10000032" / "s53189527" / f"{dicom}.jpg")  # through the MIMIC-CXR links
    _check_crop(root / "gold_crop" / f"{dicom}_0_0.png", image, 8, 8, 20, 23)


def test_vindr_mammo_crop_pixels(settings, demo):
    _convert(settings, "VindrMammo")
    root = demo / "DATA_BASEDIR" / "2D_Images" / "VindrMammo"
    full = _png(root / "images" / "m0001.png")
    assert np.array_equal(full, read_dicom(demo / "raw" / "vindr-mammo" / "images" / "a1b2c3d4" / "m0001.dicom").pixels)
    for cid in (0, 1):  # Mass and Suspicious Calcification share the row's box
        _check_crop(root / "crop" / f"m0001_{cid}_0.png", full, 10, 20, 40, 50)
