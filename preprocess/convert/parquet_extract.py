"""Images out of Hugging Face parquet files, bytes kept as they are (PNG/JPEG are not re-encoded).

params:
  dataset   a recipe below: which files, which column holds the image, how files are named
Naming (relative to the subset's image root):
  pannuke_classification  <Tissue Name>/fold{k}_{row:08d}.png, test rows of PanNuke_split.csv only
  roco_qa                 <image_id><ext>
  others                  <sha256 of the bytes, 20 hex digits><ext>: one file per distinct image, however
                          many questions show it (RadImageNet-VQA, VQA-RAD, PathVQA, MedPix)
Rows without an image are skipped and counted in the log; bytes that are not a known image format are decoded
with Pillow and written as PNG, or stop the job naming file and row when Pillow cannot read them either.
"""

from __future__ import annotations

import glob as globlib
import io
import os
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from preprocess.convert.base import write_output
from preprocess.csvio import read_split_csv
from preprocess.errors import RawDataError
from preprocess.extract.formats import content_name, image_extension
from preprocess.extract.parquet import iter_images
from preprocess.pngio import encode_png

PANNUKE_TISSUES = [
    "Adrenal Gland",
    "Bile Duct",
    "Bladder",
    "Breast",
    "Cervix",
    "Colon",
    "Esophagus",
    "Head & Neck",
    "Kidney",
    "Liver",
    "Lung",
    "Ovarian",
    "Pancreatic",
    "Prostate",
    "Skin",
    "Stomach",
    "Testis",
    "Thyroid",
    "Uterus",
]

RECIPES = {
    "pannuke_classification": {"files": ["data/fold*-00000-of-00001.parquet"], "image": "image", "fields": ["tissue"]},
    "roco_qa": {"files": ["data/Test-*.parquet"], "image": "image", "fields": ["image_id"]},
    "radimagenet_vqa": {"files": ["benchmark/test-*.parquet"], "image": "image", "fields": []},
    "vqa_rad": {"files": ["data/test-*.parquet"], "image": "image", "fields": []},
    "pathvqa": {"files": ["data/test-*.parquet"], "image": "image", "fields": []},
    "medpix_clinqa": {"files": ["data/train-*.parquet"], "image": "image_id", "fields": []},  # sic: image column
}


def list_rows(base: Path, patterns: list[str], what: str) -> list[tuple[str, int]]:
    """(file, row) of every row of the parquet files matching the patterns, from their footers only."""
    files = sorted(
        {Path(p) for pattern in patterns for p in globlib.glob(os.path.join(globlib.escape(str(base)), pattern))}
    )
    if not files:
        raise RawDataError(f"{what}: no parquet file matches {patterns} under {base}")
    items = []
    for path in files:
        try:
            rows = pq.ParquetFile(path).metadata.num_rows
        except Exception as exc:  # pyarrow raises several types for a damaged footer
            raise RawDataError(f"{path}: not a readable parquet file ({exc}); download it again") from None
        items += [(str(path), row) for row in range(rows)]
    return items


def plan(ctx) -> list[tuple[str, int]]:
    recipe = RECIPES[ctx.params["dataset"]]
    return list_rows(ctx.raw_dir(ctx.params.get("source")), recipe["files"], ctx.subset.key)


def build(ctx, items) -> None:
    dataset = ctx.params["dataset"]
    recipe = RECIPES[dataset]
    wanted: dict[str, set[int]] = {}
    for file, row in items:
        wanted.setdefault(file, set()).add(row)
    split = _pannuke_split(ctx) if dataset == "pannuke_classification" else None
    root = ctx.image_root
    data_basedir, overwrite = ctx.settings.data_basedir, ctx.settings.overwrite_existing
    skipped, written = 0, set()
    for file, rows in sorted(wanted.items()):
        for record in iter_images(Path(file), recipe["image"], recipe["fields"]):
            if record.row not in rows:
                continue
            ctx.advance()
            if record.data is None:
                skipped += 1
                continue
            encoded = None
            with ctx.guard(f"{record.file} row {record.row}"):
                encoded = _encoded(record)
            if encoded is None:
                continue
            data, extension = encoded
            relative = _name(dataset, record, extension, split)
            if relative is None or relative in written:  # not in the test split, or an image seen already
                continue
            written.add(relative)
            ctx.add_records([write_output(root / relative, data, data_basedir, overwrite)])
    if skipped:
        ctx.log(f"{skipped} rows have no image and were skipped")


def _encoded(record) -> tuple[bytes, str]:
    extension = image_extension(record.data)
    if extension:
        return record.data, extension
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(record.data)) as image:
            array = np.asarray(image.convert("RGB" if image.mode not in ("L", "I;16") else image.mode))
    except (UnidentifiedImageError, OSError, ValueError) as exc:
        raise RawDataError(f"{record.file}: row {record.row} holds bytes that are not an image ({exc})") from None
    return encode_png(array), ".png"


def _name(dataset: str, record, extension: str, split) -> str | None:
    if dataset == "pannuke_classification":
        fold = Path(record.file).name.split("-")[0].replace("fold", "")
        tissue = record.fields["tissue"]
        tissue = PANNUKE_TISSUES[tissue] if isinstance(tissue, int) else str(tissue)
        stem = f"fold{fold}_{record.row:08d}"
        return f"{tissue}/{stem}.png" if split.get(f"{tissue}/{stem}.png") == "test" else None
    if dataset == "roco_qa":
        image_id = str(record.fields["image_id"]).replace("/", "_")
        return f"{image_id}{extension}"
    return content_name(record.data, extension)


def _pannuke_split(ctx) -> dict[str, str]:
    return read_split_csv(ctx.raw_dir(ctx.params.get("source")) / "PanNuke_split.csv", ("image_path",))
