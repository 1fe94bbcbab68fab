"""Crops from annotated boxes (VinDr-CXR, VinDr-Mammo, Chest ImaGenome) and the DICOM decoding behind them.

Each conversion test states the benchmark scripts' rules here, in plain Python (Vision_Grounding/*/Preprocess.py
of ziz-797/Processing_Code): names are literal, the merge order and the crop box are computed below without
preprocess.convert.boxes, and pixels are compared with the raw image read independently.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
import yaml
from PIL import Image

from conftest import demo_settings, demo_values
from preprocess.convert import boxes
from preprocess.datasets.vindr_mammo.fakes import vindr_mammo_physionet
from preprocess.demo.dicoms import _dicom, xray
from preprocess.errors import PreprocessError, RawDataError
from preprocess.formats.dicomio import read_dicom
from preprocess.pipeline import steps
from preprocess.registry.config import settings_from_dict

CXR_A, CXR_B = "0a6fd1c1a33ba8b6cafe3aa5ef0e5c9a", "9f8e7d6c5b4a39281706f5e4d3c2b1a0"  # test split
CXR_T = "1b2c3d4e5f60718293a4b5c6d7e8f901"  # train split
PATIENT = "4e3ac9a1d2f1b0c7e5a6d8f9b1c2d3e4"
M1, M2, M3 = "2f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c", "8c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f", "c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8"
D0, D1 = "02aa804e-bde0afdd-112c0b34-7bc16630-4e384014", "2a2277a9-b0ded155-c0de8eb9-c124d10e-82c5caab"


# --- the reference rules, written out ---------------------------------------------------------------------------


@pytest.fixture
def settings(demo):
    """These tests compare every split the benchmark's scripts write, so they ask for the train split too."""
    return demo_settings(demo, splits="all")


def min_size_crop(x0, y0, x1, y1, width, height):
    """cx = (x0+x1)//2, w = max(x1-x0, 28); x0 = max(0, cx - w//2), x1 = min(W, x0 + w), x0 = max(0, x1 - w)."""
    cx, cy = (x0 + x1) // 2, (y0 + y1) // 2
    w, h = max(x1 - x0, 28), max(y1 - y0, 28)
    left = max(0, cx - w // 2)
    right = min(width, left + w)
    left = max(0, right - w)
    top = max(0, cy - h // 2)
    bottom = min(height, top + h)
    top = max(0, bottom - h)
    return left, top, right, bottom


def _area(b):
    return max(0, b[2] - b[0]) * max(0, b[3] - b[1])


def _qualifies(a, b):
    inter = max(0, min(a[2], b[2]) - max(a[0], b[0])) * max(0, min(a[3], b[3]) - max(a[1], b[1]))
    if inter == 0:
        return False
    return inter / (_area(a) + _area(b) - inter) >= 0.5 or inter / min(_area(a), _area(b)) >= 0.7


def reference_merge(found, append=True):
    """First qualifying pair (i < j): both removed, their union appended (append=False: the union replaces
    box i in place, the order the pipeline used before), start over."""
    found = list(found)
    restart = True
    while restart:
        restart = False
        for i in range(len(found)):
            for j in range(i + 1, len(found)):
                if _qualifies(found[i], found[j]):
                    a, b = found[i], found[j]
                    union = (min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3]))
                    if append:
                        found = [box for k, box in enumerate(found) if k not in (i, j)] + [union]
                    else:
                        found[i] = union
                        del found[j]
                    restart = True
                    break
            if restart:
                break
    return found


def _png(path) -> np.ndarray:
    with Image.open(path) as image:
        return np.array(image)


def _cut(image: np.ndarray, box) -> np.ndarray:
    x0, y0, x1, y1 = min_size_crop(*box, image.shape[1], image.shape[0])
    return image[y0:y1, x0:x1]


def _convert(settings, subset, conversion=None):
    return steps.Build(settings).convert(subset=subset, conversion=conversion)


def _files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


def _windowed(path: Path) -> np.ndarray:
    """DICOM PS3.3 C.11.2.1.2 with the first window value (or the 0.5/99.5th percentiles), MONOCHROME1 inverted."""
    import pydicom

    dataset = pydicom.dcmread(path)
    values = dataset.pixel_array.astype(np.float64)
    if "WindowCenter" in dataset:
        centre, width = (
            float(v[0]) if hasattr(v, "__len__") else float(v) for v in (dataset.WindowCenter, dataset.WindowWidth)
        )
        low, high = centre - 0.5 - (width - 1) / 2, centre - 0.5 + (width - 1) / 2
    else:
        low, high = np.percentile(values, [0.5, 99.5])
    scaled = (np.clip(values, low, high) - low) / (high - low) * 255.0
    if dataset.PhotometricInterpretation == "MONOCHROME1":
        scaled = 255.0 - scaled
    return scaled.astype(np.uint8)


# --- merge ------------------------------------------------------------------------------------------------------


def test_merge_by_iou_or_overlap_of_the_smaller_box():
    assert boxes.merge_overlapping([(0, 0, 10, 10), (1, 1, 11, 11)]) == [(0, 0, 11, 11)]  # IoU 0.68
    assert boxes.merge_overlapping([(0, 0, 10, 10), (2, 2, 6, 6)]) == [(0, 0, 10, 10)]  # small one inside
    assert boxes.merge_overlapping([(0, 0, 10, 10), (8, 8, 20, 20)]) == [(0, 0, 10, 10), (8, 8, 20, 20)]
    assert boxes.merge_overlapping([(0, 0, 10, 10), (10, 0, 20, 10)]) == [(0, 0, 10, 10), (10, 0, 20, 10)]  # touch
    chain = boxes.merge_overlapping([(0, 0, 10, 10), (1, 0, 11, 10), (2, 0, 12, 10)])
    assert chain == [(0, 0, 12, 10)]  # merged until no pair qualifies


def test_merged_union_goes_to_the_end_of_the_list():
    found = [(20, 30, 30, 40), (21, 31, 31, 41), (50, 60, 62, 70)]
    assert boxes.merge_overlapping(found) == [(50, 60, 62, 70), (20, 30, 31, 41)]
    assert reference_merge(found) == [(50, 60, 62, 70), (20, 30, 31, 41)]
    assert reference_merge(found, append=False) == [(20, 30, 31, 41), (50, 60, 62, 70)]  # the order that was wrong


# --- DICOM ------------------------------------------------------------------------------------------------------


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
    from pydicom.encaps import encapsulate

    _dicom(tmp_path / "x.dicom", xray(10))
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


# --- VinDr-CXR --------------------------------------------------------------------------------------------------

# Classes of train AND test, sorted: Aortic enlargement 0, Calcification 1 (train only), Cardiomegaly 2,
# Nodule/Mass 3. Boxes as the script reads them: int(float(v)), floored at 0, merged with the union appended.
CXR_CROPS = {
    f"crop/{CXR_A}_3_0.png": (CXR_A, (50, 60, 62, 70)),  # the lone box moves to the front
    f"crop/{CXR_A}_3_1.png": (CXR_A, (20, 30, 31, 41)),  # union of (20, 30, 30, 40) and (21, 31, 31, 41)
    f"crop/{CXR_A}_0_0.png": (CXR_A, (40, 10, 60, 30)),  # (45, 15, 50, 20) lies inside it
    f"crop/{CXR_B}_2_0.png": (CXR_B, (10, 50, 70, 80)),
    f"crop/{CXR_B}_3_0.png": (CXR_B, (0, 2, 8, 9)),  # x -3.5 floored at 0
    f"crop/{CXR_T}_0_0.png": (CXR_T, (41, 11, 59, 29)),
    f"crop/{CXR_T}_1_0.png": (CXR_T, (12, 14, 30, 33)),
}
CXR_QUERY = {
    CXR_A: f"VinDr-CXR-dataset/ai-vinbigdata/test/{CXR_A}.png",
    CXR_B: f"VinDr-CXR-dataset/ai-vinbigdata/test/{CXR_B}.png",
    CXR_T: f"VinDr-CXR-dataset/ai-vinbigdata/train/{CXR_T}.png",
}


def test_vindr_cxr_names_merge_order_and_pixels_from_the_dicoms(settings, demo):
    _convert(settings, "VindrCXR")
    root, raw = demo / "DATA_BASEDIR" / "2D_Images" / "VindrCXR", demo / "raw" / "vindr-cxr"
    assert _files(root) == sorted([*CXR_QUERY.values(), *CXR_CROPS])
    nodules = [(20, 30, 30, 40), (21, 31, 31, 41), (50, 60, 62, 70)]  # Nodule/Mass of CXR_A in file order
    assert reference_merge(nodules) == [CXR_CROPS[f"crop/{CXR_A}_3_{k}.png"][1] for k in (0, 1)]
    assert reference_merge(nodules, append=False) != reference_merge(nodules)  # the order matters here
    for image_id, split in ((CXR_A, "test"), (CXR_B, "test"), (CXR_T, "train")):
        expected = _windowed(raw / split / f"{image_id}.dicom")  # A: MONOCHROME1, B: JPEG 2000
        assert np.array_equal(_png(root / CXR_QUERY[image_id]), expected), image_id
    full = _png(root / CXR_QUERY[CXR_A])
    assert full[0, 0] < 60 and full[35, 25] > 200  # MONOCHROME1 on disk, air dark and the finding bright
    for name, (image_id, box) in CXR_CROPS.items():
        assert np.array_equal(_png(root / name), _cut(_png(root / CXR_QUERY[image_id]), box)), name
    assert _png(root / f"crop/{CXR_B}_3_0.png").shape == (28, 28)


def test_vindr_cxr_png_copy_is_linked_and_cropped(settings, demo, capsys):
    raw = demo / "raw" / "vindr-cxr"
    copies = {
        CXR_A: (np.arange(96 * 80, dtype=np.uint32).reshape(96, 80) * 7 % 65536).astype(np.uint16),  # 16-bit
        CXR_B: (np.arange(96 * 80).reshape(96, 80) % 251).astype(np.uint8),
        CXR_T: (255 - np.arange(96 * 80).reshape(96, 80) % 256).astype(np.uint8),
    }
    for image_id, pixels in copies.items():
        path = raw / CXR_QUERY[image_id]
        path.parent.mkdir(parents=True, exist_ok=True)
        Image.fromarray(pixels).save(path)
    _convert(settings, "VindrCXR")
    assert "hard-linked from the PNG copy" in capsys.readouterr().out
    root = demo / "DATA_BASEDIR" / "2D_Images" / "VindrCXR"
    assert _files(root) == sorted([*CXR_QUERY.values(), *CXR_CROPS])
    for relative in CXR_QUERY.values():
        assert os.path.samefile(root / relative, raw / relative)
    for name, (image_id, box) in CXR_CROPS.items():
        got = _png(root / name)
        assert got.dtype == copies[image_id].dtype and np.array_equal(got, _cut(copies[image_id], box)), name


def test_vindr_cxr_png_copy_missing_an_image_names_it(settings, demo):
    folder = demo / "raw" / "vindr-cxr" / "VinDr-CXR-dataset" / "ai-vinbigdata" / "test"
    folder.mkdir(parents=True)
    for image_id in (CXR_A, CXR_B):  # the test split's copies are whole: its conversion runs
        Image.fromarray(np.zeros((96, 80), np.uint8)).save(folder / f"{image_id}.png")
    with pytest.raises(RawDataError, match=rf"train/{CXR_T}.png: missing; the annotations name this image"):
        _convert(settings, "VindrCXR")


def test_vindr_cxr_box_that_is_not_a_number_names_file_and_line(demo):
    csv = demo / "raw" / "vindr-cxr" / "annotations" / "annotations_test.csv"
    csv.write_text(csv.read_text() + f"{CXR_B},Cardiomegaly,12,oops,30,40\n")
    settings = settings_from_dict(demo_values(demo, verify_checksums=False))  # the demo's MD5 no longer holds
    with pytest.raises(RawDataError, match=r"annotations_test.csv line 10: box .* is not four numbers"):
        _convert(settings, "VindrCXR")


# --- VinDr-Mammo ------------------------------------------------------------------------------------------------

# Categories of all rows, sorted: Architectural Distortion 0 (training only), Mass 1, Suspicious Calcification 2.
MAMMO_CROPS = {
    f"crop/{M1}_1_0.png": (M1, (10, 20, 40, 50)),
    f"crop/{M1}_1_1.png": (M1, (50, 90, 66, 118)),
    f"crop/{M1}_2_0.png": (M1, (10, 20, 40, 50)),  # the same row lists both categories
    f"crop/{M3}_0_0.png": (M3, (5, 5, 20, 20)),
}


def test_vindr_mammo_derived_copy_is_linked_and_cropped(settings, demo):
    _convert(settings, "VindrMammo")
    root, raw = demo / "DATA_BASEDIR" / "2D_Images" / "VindrMammo", demo / "raw" / "vindr-mammo"
    queries = [f"images_png/{PATIENT}/{M1}.png", f"images_png/{PATIENT}/{M3}.png"]  # M2: No Finding only
    assert _files(root) == sorted([*queries, *MAMMO_CROPS])
    for relative in queries:
        assert os.path.samefile(root / relative, raw / relative)
    for name, (image_id, box) in MAMMO_CROPS.items():
        image = _png(raw / "images_png" / PATIENT / f"{image_id}.png")
        assert np.array_equal(_png(root / name), _cut(image, box)), name


def test_vindr_mammo_physionet_route_decodes_the_dicoms(demo, capsys):
    raw = demo / "raw" / "vindr-mammo"
    vindr_mammo_physionet(raw)
    overrides = yaml.safe_load((demo / "registry-overrides.yaml").read_text())
    del overrides["sources"]["vindr_mammo"]  # the registry's own physionet file list applies
    (demo / "overrides.yaml").write_text(yaml.safe_dump(overrides))
    settings = settings_from_dict(
        demo_values(
            demo,
            registry_overrides=str(demo / "overrides.yaml"),
            source_variants={"vindr_mammo": "physionet"},
            splits="all",
        )
    )
    _convert(settings, "VindrMammo")
    assert f"{M3}.dicom: a FOR PROCESSING image" in capsys.readouterr().out
    root = demo / "DATA_BASEDIR" / "2D_Images" / "VindrMammo"
    study = "a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6"  # the study folder stands for the patient
    assert _files(root) == [f"crop/{M1}_0_0.png", f"crop/{M1}_1_0.png", f"images_png/{study}/{M1}.png"]
    full = _png(root / f"images_png/{study}/{M1}.png")
    assert np.array_equal(full, _windowed(raw / "images" / study / f"{M1}.dicom"))
    for cid in (0, 1):  # Mass 0, Suspicious Calcification 1: only the physionet rows count
        assert np.array_equal(_png(root / f"crop/{M1}_{cid}_0.png"), _cut(full, (10, 20, 40, 50)))


# --- Chest ImaGenome --------------------------------------------------------------------------------------------

# Gold names sorted: cardiac silhouette 0, left lung 1, right lung 2, trachea 3 (on an image without a place).
GOLD_CROPS = {
    f"gold_crop/{D0}_2_0.png": ("p10/p10000032/s50414267", D0, (3, 5, 13, 20)),  # the later of two boxes
    f"gold_crop/{D0}_1_0.png": ("p10/p10000032/s50414267", D0, (16, 3, 30, 29)),
    f"gold_crop/{D1}_0_0.png": ("p10/p10000032/s53189527", D1, (8, 8, 20, 23)),
    f"gold_crop/{D1}_1_0.png": ("p10/p10000032/s53189527", D1, (0, 1, 40, 31)),  # x1 -2 floored, x2 past the edge
}


def test_chest_imagenome_gold_crops_on_mimic_images(settings, demo, capsys):
    _convert(settings, "ChestImagrome", "gold_crops")
    assert "1 gold images are not in gold_all_sentences_500pts_1000studies.txt" in capsys.readouterr().out
    root = demo / "DATA_BASEDIR" / "2D_Images" / "ChestImagrome"
    assert _files(root / "gold_crop") == sorted(name.split("/")[1] for name in GOLD_CROPS)
    for name, (folder, dicom, box) in GOLD_CROPS.items():
        image = _png(demo / "raw" / "mimic-cxr-jpg" / "files" / folder / f"{dicom}.jpg")  # mode L
        assert np.array_equal(_png(root / name), _cut(image, box)), name
    _convert(settings, "ChestImagrome", "mimic_links")
    assert (root / "p10" / "p10000032" / "s50414267" / f"{D0}.jpg").is_file()  # the query path resolves


def test_a_template_field_the_recipe_lacks_is_named(settings, demo):
    registry = settings.registry()
    subset = registry.subset("VindrCXR")
    subset.conversions[0].params["crop"] = "crop/{image_id}_{label}.png"
    with pytest.raises(PreprocessError, match=r"param crop .* uses a field this recipe does not fill"):
        steps.Build(settings, registry).convert(subset="VindrCXR")
