"""Images stored in parquet rows: PanNuke's classification images and ROCO-VQA's.

PanNuke: rows of `data/fold{n}-00000-of-00001.parquet` (n = 1, 2, 3), tissue 0..18 naming the folder; the
split is PanNuke_split.csv's for `<Tissue>/fold{n}_{row:08d}.png` (else the unpadded row); decoded and saved as
PNG, modes PNG holds kept, others as RGB; `2D_Images/PanNuke/{split}_images/<Tissue>/fold{n}_{row:08d}.png`.
ROCO-VQA: five files in the benchmark's fixed order, one counter over all their rows from 1, the split the
file name before its first "-"; the image bytes as stored, `2D_Images/ROCO-VQA/images/{split}_sample_{seq:06d}.jpg`.
"""

from __future__ import annotations

import csv
import io

import pyarrow.parquet as pq
from PIL import Image

from preprocess.demo.release_images.outputs import Outputs

TISSUES = ["Adrenal Gland", "Bile Duct", "Bladder", "Breast", "Cervix", "Colon", "Esophagus", "Head and Neck",
           "Kidney", "Liver", "Lung", "Ovarian", "Pancreatic", "Prostate", "Skin", "Stomach", "Testis", "Thyroid",
           "Uterus"]  # fmt: skip
PNG_MODES = {"1", "L", "LA", "P", "RGB", "RGBA", "I", "I;16"}
ROCO_ORDER = [
    "Vaild-00000-of-00001-1ddc94eb806f44ae.parquet",
    "Train-00000-of-00001-91a106d1a22c7cc9.parquet",
    "Valid-00001-of-00002.parquet",
    "Test-00000-of-00001-91a106d1a22c7cc9.parquet",
    "Valid-00000-of-00002.parquet",
]


def _decoded(data: bytes):
    def decode():
        image = Image.open(io.BytesIO(data))
        image.load()
        return image if image.mode in PNG_MODES else image.convert("RGB")

    return decode


def pannuke(raw, named) -> Outputs:
    base = raw("pannuke")
    with open(base / "PanNuke_split.csv", newline="", encoding="utf-8") as handle:
        splits = {row["image_path"]: row["split"] for row in csv.DictReader(handle)}
    made = {}
    for fold in (1, 2, 3):
        table = pq.read_table(base / "data" / f"fold{fold}-00000-of-00001.parquet", columns=["image", "tissue"])
        for row, (cell, tissue) in enumerate(
            zip(*(table.column(c).to_pylist() for c in ("image", "tissue")), strict=True)
        ):
            if tissue is None or not 0 <= int(tissue) < len(TISSUES):
                continue
            name = TISSUES[int(tissue)]
            split = splits.get(f"{name}/fold{fold}_{row:08d}.png", splits.get(f"{name}/fold{fold}_{row}.png"))
            if split is None:
                continue
            target = f"2D_Images/PanNuke/{split}_images/{name}/fold{fold}_{row:08d}.png"
            duplicate = 0
            while target in made:  # the script's free name: _1, _2, ... before the suffix
                duplicate += 1
                target = f"2D_Images/PanNuke/{split}_images/{name}/fold{fold}_{row:08d}_{duplicate}.png"
            made[target] = _decoded(cell["bytes"])
    return made


def roco_qa(raw, named) -> Outputs:
    made, seq = {}, 0
    for file in ROCO_ORDER:
        split = file.split("-")[0]
        for cell in pq.read_table(raw("roco_qa") / "data" / file, columns=["image"]).column("image").to_pylist():
            seq += 1
            if cell is not None and cell.get("bytes") is not None:
                made[f"2D_Images/ROCO-VQA/images/{split}_sample_{seq:06d}.jpg"] = lambda b=cell["bytes"]: bytes(b)
    return made
