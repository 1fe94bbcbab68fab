"""Odd rows as the benchmark's scripts treat them (REFERENCE.md sections 4 and 6; Vision_Grounding/{VindrCXR,
VindrMammo,ChestImagenome}/Preprocess.py and Image_Classification/PanNuke/Preprocess.py of ziz-797/Processing_Code).

The grounding scripts read each coordinate as max(0, int(float(v))) and never check the order, so an inverted
box (x2 < x1 or y2 < y1), a zero-size box and a box past the border are cropped with their minimum window; the
class names are collected from every row before any crop is made, so a bad row left out under
`on_bad_input: skip` keeps its place in the numbering. The PanNuke script warns and skips a row whose tissue
is empty or not one of its 19 names. The rules are written out below; the builds go through the CLI on a demo
copy whose annotation files are rewritten here.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from PIL import Image
from test_annotation_crops import min_size_crop

from conftest import demo_values

CXR_A, CXR_B = "0a6fd1c1a33ba8b6cafe3aa5ef0e5c9a", "9f8e7d6c5b4a39281706f5e4d3c2b1a0"  # the demo's test images
CXR_T = "1b2c3d4e5f60718293a4b5c6d7e8f901"  # its train image
PATIENT = "4e3ac9a1d2f1b0c7e5a6d8f9b1c2d3e4"
M1, M2, M3 = "2f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c", "8c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f", "c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8"
D0 = ("p10", "p10000032", "s50414267", "02aa804e-bde0afdd-112c0b34-7bc16630-4e384014")
D1 = ("p10", "p10000032", "s53189527", "2a2277a9-b0ded155-c0de8eb9-c124d10e-82c5caab")


# --- the scripts' rules, written out ----------------------------------------------------------------------------


def read_box(cells) -> tuple[int, int, int, int]:
    """max(0, int(float(v))) for each coordinate, in the order x_min, y_min, x_max, y_max; no order check."""
    return tuple(max(0, int(float(v))) for v in cells)


def window(box, width: int, height: int) -> tuple[int, int, int, int]:
    """crop_with_min_size, as stated once in tests/datasets/test_annotation_crops.py (min_size_crop): a PIL crop box."""
    return min_size_crop(*box, width, height)


def class_ids(names) -> dict[str, int]:
    """class id = position in the sorted set of the names of every row that has a box."""
    return {name: i for i, name in enumerate(sorted(set(names)))}


def pil_crop(path: Path, box) -> np.ndarray:
    with Image.open(path) as image:
        return np.array(image.crop(window(box, image.width, image.height)))


def png(path: Path) -> np.ndarray:
    with Image.open(path) as image:
        return np.array(image)


# --- running the CLI ------------------------------------------------------------------------------------------


def convert(demo: Path, tmp_path: Path, subset: str, *more: str, **config) -> subprocess.CompletedProcess:
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**demo_values(demo), "verify_checksums": False, "splits": "all", **config}))
    command = [sys.executable, "-m", "preprocess", "convert", subset, "--config", str(path), *more]
    return subprocess.run(command, capture_output=True, text=True, cwd=tmp_path)


def crops(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


# --- VinDr-CXR ------------------------------------------------------------------------------------------------

CXR_TEST_ROWS = [  # image, class, x_min, y_min, x_max, y_max (the demo's images are 80 wide, 96 high)
    (CXR_A, "Nodule/Mass", "60.0", "50.0", "40.0", "70.0"),  # inverted in x
    (CXR_A, "Cardiomegaly", "30.5", "44.0", "30.9", "44.0"),  # zero size
    (CXR_B, "Pleural effusion", "90.0", "100.0", "120.0", "130.0"),  # wholly past the right and bottom edges
    (CXR_B, "Aortic enlargement", "10.0", "60.0", "50.0", "20.0"),  # inverted in y
]
CXR_TRAIN_ROWS = [(CXR_T, "Calcification", "12.0", "14.0", "30.0", "33.0")]
CXR_BAD = (CXR_B, "Atelectasis", "abc", "1", "2", "3")  # leaving its name out would renumber four classes


def _write_cxr(demo: Path, test_rows) -> None:
    folder = demo / "raw" / "vindr-cxr" / "annotations"
    lines = [
        "image_id,class_name,x_min,y_min,x_max,y_max",
        *(",".join(r) for r in test_rows),
        f"{CXR_B},No finding,,,,",
    ]
    (folder / "annotations_test.csv").write_text("\n".join(lines) + "\n")
    lines = ["image_id,rad_id,class_name,x_min,y_min,x_max,y_max"]
    lines += [f"{r[0]},R8,{','.join(r[1:])}" for r in CXR_TRAIN_ROWS]
    (folder / "annotations_train.csv").write_text("\n".join(lines) + "\n")


def _check_cxr(demo: Path, ids: dict[str, int]) -> None:
    root = demo / "DATA_BASEDIR" / "2D_Images" / "VindrCXR"
    split = {CXR_A: "test", CXR_B: "test", CXR_T: "train"}
    expected = {f"{image}_{ids[name]}_0.png": (image, read_box(cells)) for image, name, *cells in CXR_TEST_ROWS}
    expected |= {f"{image}_{ids[name]}_0.png": (image, read_box(cells)) for image, name, *cells in CXR_TRAIN_ROWS}
    assert crops(root / "crop") == sorted(expected)
    for name, (image, box) in expected.items():
        query = root / "VinDr-CXR-dataset" / "ai-vinbigdata" / split[image] / f"{image}.png"
        assert np.array_equal(png(root / "crop" / name), pil_crop(query, box)), name


def test_vindr_cxr_inverted_empty_and_outside_boxes_get_the_scripts_window(demo, tmp_path):
    _write_cxr(demo, CXR_TEST_ROWS)
    done = convert(demo, tmp_path, "2D_Task/VindrCXR")
    assert done.returncode == 0, done.stdout + done.stderr
    ids = class_ids(name for _, name, *_ in CXR_TEST_ROWS + CXR_TRAIN_ROWS)
    assert ids == {"Aortic enlargement": 0, "Calcification": 1, "Cardiomegaly": 2, "Nodule/Mass": 3,
                   "Pleural effusion": 4}  # fmt: skip
    _check_cxr(demo, ids)
    # the windows themselves, as the rule gives them on an 80 x 96 image
    assert window(read_box(CXR_TEST_ROWS[0][2:]), 80, 96) == (36, 46, 64, 74)
    assert window(read_box(CXR_TEST_ROWS[2][2:]), 80, 96) == (
        50,
        66,
        80,
        96,
    )  # a 30-pixel box: its own size, shifted inside


def test_vindr_cxr_skipped_bad_row_keeps_its_class_id(demo, tmp_path):
    _write_cxr(demo, [*CXR_TEST_ROWS, CXR_BAD])
    done = convert(demo, tmp_path, "2D_Task/VindrCXR", on_bad_input="skip")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "annotations_test.csv line 6: box {'x_min': 'abc'" in done.stdout + done.stderr
    ids = class_ids(name for _, name, *_ in [*CXR_TEST_ROWS, CXR_BAD, *CXR_TRAIN_ROWS])
    assert ids == {"Aortic enlargement": 0, "Atelectasis": 1, "Calcification": 2, "Cardiomegaly": 3, "Nodule/Mass": 4,
                   "Pleural effusion": 5}  # fmt: skip
    _check_cxr(demo, ids)


# --- VinDr-Mammo ----------------------------------------------------------------------------------------------

MAMMO_HEADER = (
    "study_id,series_id,image_id,laterality,view_position,height,width,breast_birads,breast_density,"
    "finding_categories,finding_birads,xmin,ymin,xmax,ymax,split,patient_id,fold,"
    "resized_xmin,resized_ymin,resized_xmax,resized_ymax"
)
MAMMO_ROWS = [  # image, categories, split, resized box (the demo's PNGs are 72 wide, 120 high)
    (M1, ["Mass"], "test", ("40.0", "90.0", "20.0", "60.0")),  # inverted in x and y
    (M2, ["Suspicious Calcification"], "test", ("30.2", "30.7", "30.9", "30.1")),  # zero size once truncated
    (M3, ["Focal Asymmetry", "Mass"], "training", ("100.0", "130.0", "110.0", "150.0")),  # past the border
]
MAMMO_BAD = (M1, ["Asymmetry"], "test", ("abc", "1", "2", "3"))


def _write_mammo(demo: Path, rows) -> None:
    lines = [MAMMO_HEADER]
    for image, categories, split, box in rows:
        listed = "[" + ", ".join(f"'{c}'" for c in categories) + "]"
        lines.append(
            f'a1b2c3d4,s1,{image},L,CC,3518,2800,BI-RADS 4,DENSITY C,"{listed}",BI-RADS 4,1,2,3,4,{split},'
            f"{PATIENT},0,{','.join(box)}"
        )
    lines.append(f"a1b2c3d4,s1,{M2},R,MLO,3518,2800,BI-RADS 1,DENSITY B,\"['No Finding']\",,,,,,test,{PATIENT},0,,,,")
    (demo / "raw" / "vindr-mammo" / "vindr_detection_v1_folds.csv").write_text("\n".join(lines) + "\n")


def _check_mammo(demo: Path, ids: dict[str, int]) -> None:
    root = demo / "DATA_BASEDIR" / "2D_Images" / "VindrMammo"
    expected = {
        f"{image}_{ids[c]}_0.png": (image, read_box(box))
        for image, categories, _, box in MAMMO_ROWS
        for c in categories
    }
    assert crops(root / "crop") == sorted(expected)
    for name, (image, box) in expected.items():
        raw = demo / "raw" / "vindr-mammo" / "images_png" / PATIENT / f"{image}.png"
        assert np.array_equal(png(root / "crop" / name), pil_crop(raw, box)), name


def test_vindr_mammo_inverted_empty_and_outside_boxes_get_the_scripts_window(demo, tmp_path):
    _write_mammo(demo, MAMMO_ROWS)
    done = convert(demo, tmp_path, "2D_Task/VindrMammo")
    assert done.returncode == 0, done.stdout + done.stderr
    ids = class_ids(c for _, categories, _, _ in MAMMO_ROWS for c in categories)
    assert ids == {"Focal Asymmetry": 0, "Mass": 1, "Suspicious Calcification": 2}
    _check_mammo(demo, ids)


def test_vindr_mammo_skipped_bad_row_keeps_its_class_id(demo, tmp_path):
    _write_mammo(demo, [*MAMMO_ROWS, MAMMO_BAD])
    done = convert(demo, tmp_path, "2D_Task/VindrMammo", on_bad_input="skip")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "vindr_detection_v1_folds.csv line 5: box" in done.stdout + done.stderr
    ids = class_ids(c for _, categories, _, _ in [*MAMMO_ROWS, MAMMO_BAD] for c in categories)
    assert ids == {"Asymmetry": 0, "Focal Asymmetry": 1, "Mass": 2, "Suspicious Calcification": 3}
    _check_mammo(demo, ids)


# --- Chest ImaGenome gold -------------------------------------------------------------------------------------

GOLD_HEADER = (
    "image_id,x1,y1,x2,y2,width,height,bbox_name,annot_id,original_x1,original_x2,original_y1,"
    "original_y2,original_width,original_height,annotator,coord224,coord_original"
)
GOLD_ROWS = [  # image, region, original x1, x2, y1, y2 (the file's column order; the images are 32 x 32)
    (D0, "right lung", "20.0", "10.0", "4.0", "19.0"),  # inverted in x
    (D0, "trachea", "16.4", "16.8", "16.0", "16.0"),  # zero size once truncated
    (D1, "aortic arch", "40.0", "50.0", "35.0", "45.0"),  # wholly past the border
    (D1, "left lung", "2.0", "14.0", "5.0", "20.0"),
]
GOLD_BAD = (D1, "abdomen", "abc", "14.0", "5.0", "20.0")


def _write_gold(demo: Path, rows) -> None:
    lines = [GOLD_HEADER]
    for n, (image, region, x1, x2, y1, y2) in enumerate(rows):
        lines.append(f"{image[3]}.dcm,0,0,0,0,224,224,{region},{n},{x1},{x2},{y1},{y2},32,32,1,,")
    path = demo / "raw" / "chest-imagenome" / "gold_dataset" / "gold_bbox_coordinate_annotations_1000images.csv"
    path.write_text("\n".join(lines) + "\n")


def test_chest_imagenome_gold_odd_boxes_and_a_skipped_row(demo, tmp_path):
    _write_gold(demo, [*GOLD_ROWS, GOLD_BAD])
    done = convert(demo, tmp_path, "2D_Task/ChestImagrome", "--conversion", "gold_crops", on_bad_input="skip")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "gold_bbox_coordinate_annotations_1000images.csv line 6: box" in done.stdout + done.stderr
    ids = class_ids(region for _, region, *_ in [*GOLD_ROWS, GOLD_BAD])
    assert ids == {"abdomen": 0, "aortic arch": 1, "left lung": 2, "right lung": 3, "trachea": 4}
    root = demo / "DATA_BASEDIR" / "2D_Images" / "ChestImagrome" / "gold_crop"
    expected = {f"{image[3]}_{ids[region]}_0.png": (image, cells) for image, region, *cells in GOLD_ROWS}
    assert crops(root) == sorted(expected)
    for name, (image, (x1, x2, y1, y2)) in expected.items():
        raw = demo / "raw" / "mimic-cxr-jpg" / "files" / image[0] / image[1] / image[2] / f"{image[3]}.jpg"
        assert np.array_equal(png(root / name), pil_crop(raw, read_box((x1, y1, x2, y2)))), name


# --- PanNuke classification -----------------------------------------------------------------------------------

TISSUES = ["Adrenal Gland", "Bile Duct", "Bladder", "Breast", "Cervix", "Colon", "Esophagus", "Head and Neck",
           "Kidney", "Liver", "Lung", "Ovarian", "Pancreatic", "Prostate", "Skin", "Stomach", "Testis", "Thyroid",
           "Uterus"]  # fmt: skip


def _set_tissues(demo: Path, fold: int, values: list) -> None:
    path = demo / "raw" / "PanNuke" / "data" / f"fold{fold}-00000-of-00001.parquet"
    table = pq.read_table(path)
    index = table.schema.get_field_index("tissue")
    pq.write_table(table.set_column(index, "tissue", pa.array(values, pa.int64())), path)


def test_pannuke_tissue_outside_the_names_is_a_logged_skip(demo, tmp_path):
    _set_tissues(demo, 1, [19, None, 5])  # row 0: one past Uterus; row 1: empty; row 2: Colon, as published
    _set_tissues(demo, 3, [1, 2, -1])  # row 2: below Adrenal Gland
    done = convert(demo, tmp_path, "2D_Task/PanNuke")
    assert done.returncode == 0, done.stdout + done.stderr
    text = done.stdout + done.stderr
    assert "3 rows have no tissue in 0..18 and were skipped, as the benchmark's script skips them" in text
    for row in ("fold1-00000-of-00001.parquet row 0 (tissue 19)", "fold1-00000-of-00001.parquet row 1 (tissue None)",
                "fold3-00000-of-00001.parquet row 2 (tissue -1)"):  # fmt: skip
        assert row in text
    # the other rows keep their names: <split>_images/<tissue name>/fold<n>_<row:08d>.png (split from the CSV)
    root = demo / "DATA_BASEDIR" / "2D_Images" / "PanNuke"
    written = {
        f"train_images/{TISSUES[5]}/fold1_00000002.png": (1, 2),
        f"test_images/{TISSUES[6]}/fold2_00000000.png": (2, 0),
        f"test_images/{TISSUES[7]}/fold2_00000001.png": (2, 1),
        f"test_images/{TISSUES[1]}/fold3_00000000.png": (3, 0),
        f"train_images/{TISSUES[2]}/fold3_00000001.png": (3, 1),
    }  # fold2 row 2 is in no line of the split CSV
    assert sorted(p.relative_to(root).as_posix() for p in root.rglob("*.png")) == sorted(written)
    for name, (fold, row) in written.items():
        table = pq.read_table(demo / "raw" / "PanNuke" / "data" / f"fold{fold}-00000-of-00001.parquet")
        with Image.open(io.BytesIO(table.column("image")[row].as_py()["bytes"])) as image:
            assert np.array_equal(png(root / name), np.array(image)), name


@pytest.mark.parametrize("value", ["5", 2.0])
def test_pannuke_tissue_of_another_type_is_still_bad_input(demo, tmp_path, value):
    path = demo / "raw" / "PanNuke" / "data" / "fold1-00000-of-00001.parquet"
    table = pq.read_table(path)
    kind = pa.string() if isinstance(value, str) else pa.float64()
    column = pa.array([value, value, value], kind)
    pq.write_table(table.set_column(table.schema.get_field_index("tissue"), "tissue", column), path)
    done = convert(demo, tmp_path, "2D_Task/PanNuke")
    assert done.returncode == 2
    assert f"fold1-00000-of-00001.parquet row 0: tissue {value!r} is not a label value 0..18" in done.stderr
