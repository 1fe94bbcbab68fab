"""Crops from annotated boxes: VinDr-CXR and VinDr-Mammo (DICOM), Chest ImaGenome (gold boxes on MIMIC-CXR-JPG).

params:
  dataset   vindr_cxr | vindr_mammo | chest_imagenome
Names (relative to the subset's image root):
  vindr_cxr        images/{image_id}.png (the full image) and crop/{image_id}_{cid}_{k}.png
  vindr_mammo      images/{image_id}.png and crop/{image_id}_{cid}_{k}.png (test split; FOR PROCESSING skipped)
  chest_imagenome  gold_crop/{dicom_id}_{cid}_0.png (the query images come through the MIMIC-CXR links)
cid is the position of the class (region) name in the sorted list of names; k numbers the merged boxes of one
(image, class) pair. Boxes follow the shared crop rule (boxes.reference_crop).
"""

from __future__ import annotations

import ast
import gzip
import math
from collections import defaultdict
from pathlib import Path

import numpy as np
import pandas as pd
from PIL import Image

from preprocess import boxes
from preprocess.convert.base import write_output
from preprocess.dicomio import read_dicom
from preprocess.errors import RawDataError
from preprocess.pngio import encode_png


def _read_csv(path: Path, required: set[str]) -> pd.DataFrame:
    try:
        table = pd.read_csv(path, encoding="utf-8-sig")
    except (OSError, ValueError) as exc:
        raise RawDataError(f"{path}: cannot read ({exc})") from None
    missing = required - set(table.columns)
    if missing:
        raise RawDataError(f"{path}: missing columns {sorted(missing)} (it has: {list(table.columns)})")
    return table


def _finite(*values) -> bool:
    return all(isinstance(v, (int, float)) and math.isfinite(v) for v in values)


# Each planner returns items (image id, image path, {class id: [boxes]}) in a stable order.


def _vindr_cxr(base: Path) -> list:
    table = _read_csv(
        base / "annotations" / "annotations_test.csv", {"image_id", "class_name", "x_min", "y_min", "x_max", "y_max"}
    )
    table = table[table["class_name"] != "No finding"]
    classes = sorted(table["class_name"].unique())
    grouped: dict = defaultdict(lambda: defaultdict(list))
    for row in table.itertuples(index=False):
        if _finite(row.x_min, row.y_min, row.x_max, row.y_max) and row.x_max > row.x_min and row.y_max > row.y_min:
            grouped[row.image_id][classes.index(row.class_name)].append((row.x_min, row.y_min, row.x_max, row.y_max))
    return [
        (
            image_id,
            str(base / "test" / f"{image_id}.dicom"),
            {cid: boxes.merge_overlapping(found) for cid, found in sorted(by_class.items())},
        )
        for image_id, by_class in sorted(grouped.items())
    ]


def _vindr_mammo(base: Path) -> list:
    table = _read_csv(
        base / "finding_annotations.csv",
        {"study_id", "image_id", "finding_categories", "xmin", "ymin", "xmax", "ymax", "split"},
    )
    table = table[table["split"] == "test"]
    rows = []
    for row in table.itertuples(index=False):
        try:
            categories = ast.literal_eval(row.finding_categories)  # a Python-style list with single quotes
        except (ValueError, SyntaxError):
            raise RawDataError(
                f"finding_annotations.csv: unreadable finding_categories {row.finding_categories!r}"
            ) from None
        for category in categories:
            if category != "No Finding" and _finite(row.xmin, row.ymin, row.xmax, row.ymax):
                rows.append((row.study_id, row.image_id, category, (row.xmin, row.ymin, row.xmax, row.ymax)))
    classes = sorted({r[2] for r in rows})
    grouped: dict = defaultdict(lambda: defaultdict(list))
    studies = {}
    for study, image_id, category, box in rows:
        grouped[image_id][classes.index(category)].append(box)
        studies[image_id] = study
    return [
        (
            image_id,
            str(base / "images" / studies[image_id] / f"{image_id}.dicom"),
            {cid: boxes.merge_overlapping(found) for cid, found in sorted(by_class.items())},
        )
        for image_id, by_class in sorted(grouped.items())
    ]


def _chest_imagenome(base: Path, mimic: Path) -> list:
    table = _read_csv(
        base / "gold_dataset" / "gold_bbox_coordinate_annotations_1000images.csv",
        {"image_id", "bbox_name", "original_x1", "original_y1", "original_x2", "original_y2"},
    )
    classes = sorted(table["bbox_name"].unique())
    with gzip.open(mimic / "mimic-cxr-2.0.0-split.csv.gz", "rt") as handle:
        split = pd.read_csv(handle, dtype=str)
    where = {
        row.dicom_id: f"files/p{row.subject_id[:2]}/p{row.subject_id}/s{row.study_id}/{row.dicom_id}.jpg"
        for row in split.itertuples(index=False)
    }
    grouped: dict = defaultdict(dict)
    for row in table.itertuples(index=False):
        dicom_id = str(row.image_id).removesuffix(".dcm")
        cid = classes.index(row.bbox_name)
        box = (row.original_x1, row.original_y1, row.original_x2, row.original_y2)
        if cid not in grouped[dicom_id] and _finite(*box):  # the first annotation of a region is the crop
            grouped[dicom_id][cid] = [box]
    items = []
    for dicom_id, by_class in sorted(grouped.items()):
        if dicom_id not in where:
            raise RawDataError(f"gold box image {dicom_id} is not in mimic-cxr-2.0.0-split.csv.gz")
        items.append((dicom_id, str(mimic / where[dicom_id]), dict(sorted(by_class.items()))))
    return items


def plan(ctx) -> list:
    dataset = ctx.params["dataset"]
    if dataset == "vindr_cxr":
        return _vindr_cxr(ctx.raw_dir("vindr_cxr"))
    if dataset == "vindr_mammo":
        return _vindr_mammo(ctx.raw_dir("vindr_mammo"))
    if dataset == "chest_imagenome":
        return _chest_imagenome(ctx.raw_dir("chest_imagenome"), ctx.raw_dir("mimic_cxr_jpg"))
    raise RawDataError(f"{ctx.subset.key}: no annotation recipe {dataset!r}")


def _load(path: str, dataset: str, ctx) -> np.ndarray | None:
    if dataset == "chest_imagenome":
        try:
            with Image.open(path) as image:
                return np.asarray(image.convert("L"))
        except OSError as exc:
            raise RawDataError(f"{path}: unreadable image ({exc})") from None
    image = read_dicom(Path(path))
    if image.for_processing:
        ctx.log(f"skipped {path}: a FOR PROCESSING image (not meant for display)")
        return None
    return image.pixels


def build(ctx, items) -> None:
    dataset = ctx.params["dataset"]
    root, data_basedir, overwrite = ctx.image_root, ctx.settings.data_basedir, ctx.settings.overwrite_existing
    for image_id, path, by_class in ctx.track(items):
        pixels = None
        with ctx.guard(path):
            pixels = _load(path, dataset, ctx)
        if pixels is None:
            continue
        height, width = pixels.shape
        if dataset != "chest_imagenome":
            ctx.add_records(
                [write_output(root / "images" / f"{image_id}.png", encode_png(pixels), data_basedir, overwrite)]
            )
        folder = "gold_crop" if dataset == "chest_imagenome" else "crop"
        for cid, found in by_class.items():
            for k, (x0, y0, x1, y1) in enumerate(found):
                box = boxes.reference_crop(x0, y0, x1, y1, width, height)
                area = np.ascontiguousarray(boxes.crop(pixels, box))
                ctx.add_records(
                    [
                        write_output(
                            root / folder / f"{image_id}_{cid}_{k}.png", encode_png(area), data_basedir, overwrite
                        )
                    ]
                )
