"""The bad-input corpus of annotation tables: masks and boxes, CSVs with a BOM, missing columns or a short row,
VinDr boxes that are not numbers, finding categories; each case, the exact behaviour, and nothing written
outside the allowed folders."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from badinput import run_case
from preprocess.convert import boxes
from preprocess.errors import RawDataError


def case_empty_mask(tmp):
    return boxes.mask_box(np.zeros((5, 5))), boxes.component_boxes(np.zeros((5, 5)))


def case_box_outside_image(tmp):
    return boxes.reference_crop(180, -40, 260, 10, 200, 100)


def case_csv_with_bom(tmp):
    from preprocess.formats.csvio import read_split_csv

    (tmp / "s.csv").write_bytes("\ufefffolder_name,split\n12,train\n".encode())
    return read_split_csv(tmp / "s.csv", ("folder_name",))


def case_csv_missing_columns(tmp):
    from preprocess.formats.csvio import read_split_csv

    (tmp / "m.csv").write_text("folder,part\n12,train\n")
    return read_split_csv(tmp / "m.csv", ("folder_name",))


def case_nan_coordinates(tmp):
    from preprocess.convert.annotation_crop import read_vindr_cxr

    (tmp / "annotations_test.csv").write_text(
        "image_id,class_name,x_min,y_min,x_max,y_max\na,Nodule/Mass,,,,\na,Nodule/Mass,1,2,30,40\nb,Cardiomegaly,nan,1,2,3\n"
    )
    return read_vindr_cxr([(tmp / "annotations_test.csv", "test")])


def case_split_csv_latin1(tmp):
    from preprocess.formats.csvio import read_split_csv

    (tmp / "split.csv").write_bytes("split,original_image_path\ntrain,a.png\ntest,caf\xe9.png\n".encode("latin-1"))
    return read_split_csv(tmp / "split.csv", ("original_image_path",))


def case_split_csv_short_row(tmp):
    from preprocess.formats.csvio import read_split_csv

    (tmp / "split.csv").write_text("folder_name,split\n12,train\n13\n")
    return read_split_csv(tmp / "split.csv", ("folder_name",))


VINDR_HEADER = "image_id,class_name,x_min,y_min,x_max,y_max\n"


def _vindr(tmp, rows: str, bad=None):
    from preprocess.convert.annotation_crop import read_vindr_cxr

    (tmp / "annotations_test.csv").write_text(VINDR_HEADER + rows)
    files = [(tmp / "annotations_test.csv", "test")]
    return read_vindr_cxr(files) if bad is None else read_vindr_cxr(files, bad)


def case_vindr_forty(tmp):
    return _vindr(tmp, "a,Nodule/Mass,1,2,30,40\nb,Nodule/Mass,forty,2,30,40\n")


def case_vindr_forty_skipped(tmp):
    seen = []
    groups, _, _ = _vindr(tmp, "a,Nodule/Mass,1,2,30,40\nb,Nodule/Mass,forty,2,30,40\n", lambda i, e: seen.append(i))
    return dict(groups), [Path(s).name for s in seen]


def case_vindr_inverted_box(tmp):
    return _vindr(tmp, "a,Nodule/Mass,30,2,1,40\n")


def case_vindr_short_row(tmp):
    return _vindr(tmp, "a,Nodule/Mass,1,2\n")


def _categories(text: str):
    from preprocess.convert.annotation_crop import finding_categories

    return finding_categories(Path("vindr_detection_v1_folds.csv"), 7, {"finding_categories": text})


def case_categories_without_brackets(tmp):
    return _categories("'Mass'")


def case_categories_not_names(tmp):
    return _categories("['Mass', 3]")


def case_categories_good(tmp):
    return _categories("['Mass', 'Suspicious Calcification']")


CASES = {
    "empty mask": (case_empty_mask, lambda r: r == (None, [])),
    "box outside the image": (case_box_outside_image, lambda r: r == (120, 0, 200, 28)),  # shifted back inside
    "CSV with a BOM": (case_csv_with_bom, lambda r: r == {"12": "train"}),
    "CSV with missing columns": (
        case_csv_missing_columns,
        (RawDataError, r"m.csv: expected columns folder_name and split"),
    ),
    # an empty box is a row without a finding (skipped, as the script does); the text 'nan' is a bad box
    "NaN coordinates": (
        case_nan_coordinates,
        (RawDataError, r"annotations_test.csv line 4: box .* is not four numbers"),
    ),
    "Latin-1 split CSV": (case_split_csv_latin1, (RawDataError, r"split.csv line 3: not UTF-8 \(byte 0xe9")),
    "split CSV with a short row": (case_split_csv_short_row, (RawDataError, r"split.csv line 3: 1 cells")),
    "VinDr box 'forty'": (
        case_vindr_forty,
        (RawDataError, r"annotations_test.csv line 3: box \{'x_min': 'forty'.* is not four numbers"),
    ),
    "VinDr box 'forty' skipped alone": (
        case_vindr_forty_skipped,
        lambda r: r == ({("a", "Nodule/Mass"): [(1, 2, 30, 40)]}, ["annotations_test.csv line 3"]),
    ),
    # the scripts accept an inverted box (their 28-pixel window crops it): kept, as read
    # (tests/datasets/test_odd_rows.py)
    "VinDr inverted box": (
        case_vindr_inverted_box,
        lambda r: dict(r[0]) == {("a", "Nodule/Mass"): [(30, 2, 1, 40)]},
    ),
    "VinDr short row": (case_vindr_short_row, (RawDataError, r"annotations_test.csv line 2: box .* not four")),
    "finding_categories without brackets": (
        case_categories_without_brackets,
        (RawDataError, r"vindr_detection_v1_folds.csv line 7: finding_categories \"'Mass'\" is not a list"),
    ),
    "finding_categories with a number": (
        case_categories_not_names,
        (RawDataError, r"vindr_detection_v1_folds.csv line 7: finding_categories .* is not a list of names"),
    ),
    "finding_categories as published": (
        case_categories_good,
        lambda r: r == ["Mass", "Suspicious Calcification"],
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_bad_input_corpus(tmp_path, name):
    run_case(tmp_path, *CASES[name])
