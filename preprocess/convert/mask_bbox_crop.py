"""Crops around lesions and nuclei from segmentation masks (or the boxes shipped with them).

params:
  dataset   pannuke | kvasir_seg | medsegbench
  flag      medsegbench: the archive (polypgen, isic2018, uwaterlooskincancer, ultrasoundnerve, usforkidney)
  boxes     medsegbench: 'mask' (one box around all lesion pixels, default) or 'components' (one per
            8-connected component)
Names (relative to the subset's image root) and box rules: see the README table "Crops".
Empty masks have no box: they are skipped and counted in the job log, never cropped to a zero-size image.
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import numpy as np
from PIL import Image

from preprocess import boxes
from preprocess.convert.base import write_output
from preprocess.convert.parquet_extract import RECIPES as PARQUET
from preprocess.convert.parquet_extract import list_rows
from preprocess.csvio import read_split_csv
from preprocess.errors import RawDataError
from preprocess.extract.formats import image_extension
from preprocess.extract.parquet import iter_images
from preprocess.npzio import NpzFile
from preprocess.pngio import encode_png

PANNUKE_CLASSES = ["neoplastic", "inflammatory", "connective", "dead", "epithelial"]


def plan(ctx):
    dataset = ctx.params["dataset"]
    if dataset == "pannuke":
        return list_rows(
            ctx.raw_dir(ctx.params.get("source")), PARQUET["pannuke_classification"]["files"], ctx.subset.key
        )
    if dataset == "kvasir_seg":
        return _kvasir_test_ids(ctx)
    if dataset == "medsegbench":
        return list(range(_medsegbench_count(ctx)))
    raise RawDataError(f"{ctx.subset.key}: no crop recipe {dataset!r}")


def build(ctx, items) -> None:
    {"pannuke": _build_pannuke, "kvasir_seg": _build_kvasir, "medsegbench": _build_medsegbench}[ctx.params["dataset"]](
        ctx, items
    )


def _decode(data: bytes) -> np.ndarray:
    with Image.open(io.BytesIO(data)) as image:
        return np.asarray(image.convert("RGB") if image.mode not in ("L", "1", "RGB") else image)


def _write(ctx, relative: str, data: bytes):
    return write_output(ctx.image_root / relative, data, ctx.settings.data_basedir, ctx.settings.overwrite_existing)


# --- PanNuke ------------------------------------------------------------------------------------------------


def _tag(path: Path, data_folder: Path) -> str:
    relative = path.relative_to(data_folder).with_suffix("")
    return re.sub(r"[^A-Za-z0-9_.-]", "_", relative.as_posix())


def _build_pannuke(ctx, items) -> None:
    data_folder = ctx.raw_dir(ctx.params.get("source")) / "data"
    wanted: dict[str, set[int]] = {}
    for file, row in items:
        wanted.setdefault(file, set()).add(row)
    empty = 0
    for file, rows in sorted(wanted.items()):
        tag = _tag(Path(file), data_folder)
        for record in iter_images(Path(file), PARQUET["pannuke_classification"]["image"], ["instances", "categories"]):
            if record.row not in rows:
                continue
            ctx.advance()
            if record.data is None:
                continue
            stem = f"{tag}_{record.row:06d}"
            extension = image_extension(record.data) or ".png"
            ctx.add_records([_write(ctx, f"images/{tag}/{stem}{extension}", record.data)])
            image = _decode(record.data)
            height, width = image.shape[:2]
            instances = record.fields["instances"] or []
            categories = record.fields["categories"] or []
            for number, (instance, category) in enumerate(zip(instances, categories, strict=True)):
                box = boxes.mask_box(_decode(instance["bytes"]))
                if box is None:
                    empty += 1
                    continue
                area = boxes.crop(image, boxes.pannuke_crop(box, width, height))
                name = f"crops/{tag}/{stem}_{PANNUKE_CLASSES[category]}_{number:03d}.png"
                ctx.add_records([_write(ctx, name, encode_png(np.ascontiguousarray(area)))])
    if empty:
        ctx.log(f"{empty} empty instance masks skipped")


# --- Kvasir-SEG ---------------------------------------------------------------------------------------------


def _kvasir_base(ctx) -> Path:
    return ctx.raw_dir(ctx.params.get("source", "kvasir_seg"))


def _kvasir_test_ids(ctx) -> list[str]:
    splits = read_split_csv(_kvasir_base(ctx) / "split.csv", ("image_id", "id", "image", "filename", "name"))
    return sorted(Path(key).stem for key, split in splits.items() if split.lower() == "test")


def _build_kvasir(ctx, items) -> None:
    base = _kvasir_base(ctx)
    boxes_file = next((base / n for n in ("kavsir_bboxes.json", "kvasir_bboxes.json") if (base / n).exists()), None)
    if boxes_file is None:
        raise RawDataError(f"{base}: neither kavsir_bboxes.json nor kvasir_bboxes.json is there")
    annotations = json.loads(boxes_file.read_text(encoding="utf-8"))
    for image_id in ctx.track(items):
        source = base / "images" / f"{image_id}.jpg"
        if image_id not in annotations or not source.exists():
            missing = "box in the box file" if source.exists() else "image file"
            ctx.bad_input(image_id, RawDataError(f"{base}: test image {image_id} has no {missing}"))
            continue
        ctx.add_records([_write(ctx, f"kvasir/images/{image_id}.jpg", source.read_bytes())])
        image = _decode(source.read_bytes())
        height, width = image.shape[:2]
        for k, box in enumerate(annotations[image_id]["bbox"]):
            area = boxes.reference_crop(box["xmin"], box["ymin"], box["xmax"], box["ymax"], width, height)
            ctx.add_records(
                [
                    _write(
                        ctx,
                        f"kvasir/crop/{image_id}_{k}.png",
                        encode_png(np.ascontiguousarray(boxes.crop(image, area))),
                    )
                ]
            )


# --- MedSegBench --------------------------------------------------------------------------------------------


def _medsegbench_archive(ctx) -> Path:
    source = ctx.source("medsegbench")
    return ctx.raw_dir("medsegbench") / source.file(ctx.params["flag"]).paths[0]


def _medsegbench_keys(archive: NpzFile) -> list[tuple[str, str]]:
    """(images key, masks key) pairs of the test split: the plain keys, or the per-category ones."""
    if "test_images" in archive.keys and "test_label" in archive.keys:
        return [("test_images", "test_label")]
    pairs = [(k, k.replace("_images_", "_label_")) for k in archive.keys if re.fullmatch(r"test_images_C\d+", k)]
    if not pairs:
        raise RawDataError(f"{archive.path}: no test_images/test_label arrays (it has: {', '.join(archive.keys)})")
    return sorted(pairs, key=lambda pair: int(pair[0].rsplit("C", 1)[1]))


def _medsegbench_count(ctx) -> int:
    with NpzFile(_medsegbench_archive(ctx)) as archive:
        return sum(archive.info(images).shape[0] for images, _ in _medsegbench_keys(archive))


def _build_medsegbench(ctx, items) -> None:
    flag, wanted, empty = ctx.params["flag"], set(items), 0
    with NpzFile(_medsegbench_archive(ctx)) as archive:
        offset = 0
        for images_key, masks_key in _medsegbench_keys(archive):
            images, masks = archive.array(images_key), archive.array(masks_key)
            if masks.shape[:3] != images.shape[:3]:
                raise RawDataError(
                    f"{archive.path}: {masks_key} {masks.shape} does not match {images_key} {images.shape}"
                )
            prefix = "test" if images_key == "test_images" else f"test_{images_key.rsplit('_', 1)[1]}"
            for index in range(images.shape[0]):
                if offset + index not in wanted:
                    continue
                ctx.advance()
                stem = f"{prefix}{index:05d}"
                image = images[index]
                found = (
                    boxes.component_boxes(masks[index])
                    if ctx.params.get("boxes") == "components"
                    else [b for b in [boxes.mask_box(masks[index])] if b]
                )
                if not found:
                    empty += 1
                    continue
                ctx.add_records([_write(ctx, f"{flag}/images/{stem}.png", encode_png(np.ascontiguousarray(image)))])
                height, width = image.shape[:2]
                for k, (x0, y0, x1, y1) in enumerate(found):
                    area = boxes.reference_crop(x0, y0, x1, y1, width, height)
                    ctx.add_records(
                        [
                            _write(
                                ctx,
                                f"{flag}/crop/{stem}_{k}.png",
                                encode_png(np.ascontiguousarray(boxes.crop(image, area))),
                            )
                        ]
                    )
            offset += images.shape[0]
    if empty:
        ctx.log(f"{empty} test images of {flag} have an empty mask and were skipped")
