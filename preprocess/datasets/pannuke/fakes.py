"""PanNuke (Hugging Face RationAI/PanNuke): the demo's tiny copy of its download (`demo`) and real-size items
(`real_size`, `SIZE`, `REAL_SEED`); preprocess/demo/folders.py finds them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa

from preprocess.demo import archives, fields
from preprocess.demo.files import encoded, put
from preprocess.demo.images import encode, pattern
from preprocess.demo.real_sizes import Size
from preprocess.demo.release_images import crops, parquets

# The subsets whose images the demo's release ships, each with the oracle that makes them from the demo's raw
# files (preprocess/demo/release_images: the reference rule stated apart from the conversions).
RELEASE_IMAGES = {
    "2D_Task/PanNuke": parquets.pannuke,
    "2D_Task/PanNuke_VG": crops.pannuke_vg,
}

# Per fold, per row: tissue value (0..18 upstream) and the PanNuke_split.csv line of the row (None: no line).
# Tissue 7 is "Head and Neck"; fold3 row 0 is listed unpadded; fold2 row 2 is in no line of the CSV.
PANNUKE_ROWS = {
    1: [
        (3, "Breast/fold1_00000000.png,test"),
        (4, "Cervix/fold1_00000001.png,test"),
        (5, "Colon/fold1_00000002.png,train"),
    ],
    2: [(6, "Esophagus/fold2_00000000.png,test"), (7, "Head and Neck/fold2_00000001.png,test"), (0, None)],
    3: [
        (1, "Bile Duct/fold3_0.png,test"),
        (2, "Bladder/fold3_00000001.png,train"),
        (3, "Breast/fold3_00000002.png,test"),
    ],
}


def demo(base: Path) -> None:
    """The three fold files (image, instances, categories, tissue) and the benchmark's split CSV."""
    split_rows = ["image_path,split"]
    for fold, rows in PANNUKE_ROWS.items():
        images, instances, categories, tissues = [], [], [], []
        for row, (tissue, line) in enumerate(rows):
            images.append({"bytes": encode(pattern(fold * 10 + row, (32, 32)), "PNG"), "path": None})
            masks = []
            if row != 1:  # row 1 of each fold has no nucleus at all
                mask = np.zeros((32, 32), np.uint8)
                mask[4 + row : 9 + row, 5:8] = 1
                masks = [{"bytes": archives.mask_png(mask), "path": None}]
                tiny = np.zeros((32, 32), np.uint8)
                tiny[30, 30] = 1  # an edge nucleus of one pixel
                masks.append({"bytes": archives.mask_png(tiny), "path": None})
            instances.append(masks)
            categories.append([row % 5, 3][: len(masks)])
            tissues.append(tissue)
            if line is not None:
                split_rows.append(line)
        table = pa.table(
            {
                "image": pa.array(images, archives.IMAGE),
                "instances": pa.array(instances, pa.list_(archives.IMAGE)),
                "categories": pa.array(categories, pa.list_(pa.int64())),
                "tissue": pa.array(tissues, pa.int64()),
            }
        )
        archives.write_parquet(base / "data" / f"fold{fold}-00000-of-00001.parquet", table)
    (base / "PanNuke_split.csv").write_text("\n".join(split_rows) + "\n")


# --- real size ----------------------------------------------------------------------------------------------

SIZE = Size(
    "parquet rows of an RGB PNG 256x256 and 24 one-bit PNG instance masks",
    "PanNuke (Gamper et al. 2020): 256x256 at 40x, 189,744 nuclei on 7,901 images (24 per image); 2d-images.md 3",
)
REAL_SEED = 15  # added to the run's seed: each source its own, whichever others are written


def real_size(base: Path, n: int, seed: int) -> dict:
    split = ["image_path,split"]
    for fold in (1, 2, 3):
        images, instances, categories = [], [], []
        for k in range(n):
            images.append({"bytes": encoded(fields.photo((256, 256), seed + fold * 1000 + k), "PNG"), "path": None})
            masks = []
            for part in range(24):
                x0, y0, _, _ = (round(v) for v in fields.box(seed + fold * 1000 + k, 256, 256, part))
                mask = np.zeros((256, 256), np.uint8)
                mask[y0 : y0 + 12, x0 : x0 + 12] = 1
                masks.append({"bytes": archives.mask_png(mask), "path": None})
            instances.append(masks)
            categories.append([part % 5 for part in range(24)])
            split.append(f"Breast/fold{fold}_{k:08d}.png,{'test' if k % 2 == 0 else 'train'}")
        table = pa.table({
            "image": pa.array(images, archives.IMAGE), "instances": pa.array(instances, pa.list_(archives.IMAGE)),
            "categories": pa.array(categories, pa.list_(pa.int64())), "tissue": pa.array([3] * n, pa.int64()),
        })  # fmt: skip
        archives.write_parquet(base / "data" / f"fold{fold}-00000-of-00001.parquet", table, archives.ROW_GROUP)
    put(base / "PanNuke_split.csv", "\n".join(split) + "\n")
    return {}
