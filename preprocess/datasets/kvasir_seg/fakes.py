"""Kvasir-SEG: the demo's tiny copy of its download (`demo`) and real-size items (`real_size`, `SIZE`, `REAL_SEED`);
preprocess/demo/folders.py finds them."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from preprocess.demo import fields
from preprocess.demo.files import encoded, item_id, put
from preprocess.demo.images import encode, pattern
from preprocess.demo.real_sizes import Size
from preprocess.demo.release_images import crops

# The subsets whose images the demo's release ships, each with the oracle that makes them from the demo's raw
# files (preprocess/demo/release_images: the reference rule stated apart from the conversions).
RELEASE_IMAGES = {
    "2D_Task/Gastrointestinal": crops.gastrointestinal,
}

KVASIR_IDS = [
    "cju0qkwl35piu0993l0dewei2",
    "cju0qoxqj9q6s0835b43399p4",
    "cju0roawvklrq0799vmjorwfv",
    "cju0rx1idathl0835detmsp84",
    "cju0s2a9ekvms080138tjjpxr",
]


KVASIR_SPLITS = {KVASIR_IDS[0]: "train", KVASIR_IDS[1]: "test", KVASIR_IDS[2]: "test", KVASIR_IDS[3]: "test"}


# boxes per image as kavsir_bboxes.json gives them; images are 60 x 80 (height x width)
KVASIR_BOXES = {
    KVASIR_IDS[0]: [(20, 10, 50, 30)],
    KVASIR_IDS[1]: [(5, 5, 15, 12), (30, 20, 70, 50), (40, 2, 60, 12)],  # the largest is the second
    KVASIR_IDS[2]: [(10, 10, 20, 20), (50, 30, 60, 40)],  # equal areas: the first wins
    KVASIR_IDS[3]: [(60, 40, 95, 70)],  # reaches past the right and bottom edges: clamped, not shifted
    KVASIR_IDS[4]: [(10, 10, 40, 40)],  # no row in split.csv: left out
}


def demo(base: Path) -> None:
    (base / "images").mkdir(parents=True, exist_ok=True)
    (base / "masks").mkdir(parents=True, exist_ok=True)
    annotations = {}
    for n, image_id in enumerate(KVASIR_IDS):
        mask = np.zeros((60, 80), np.uint8)
        for x0, y0, x1, y1 in KVASIR_BOXES[image_id]:
            mask[y0:y1, x0:x1] = 255
        noisy = np.clip(mask.astype(int) + np.random.default_rng(n).integers(-8, 9, mask.shape), 0, 255)
        (base / "images" / f"{image_id}.jpg").write_bytes(encode(pattern(400 + n, (60, 80)), "JPEG"))
        (base / "masks" / f"{image_id}.jpg").write_bytes(encode(noisy.astype(np.uint8), "JPEG"))
        boxes = [
            {"label": "polyp", "xmin": x0, "ymin": y0, "xmax": x1, "ymax": y1}
            for x0, y0, x1, y1 in KVASIR_BOXES[image_id]
        ]
        annotations[image_id] = {"height": 60, "width": 80, "bbox": boxes}
    (base / "kavsir_bboxes.json").write_text(json.dumps(annotations))
    rows = [f"{split},{image_id}.png" for image_id, split in KVASIR_SPLITS.items()]
    rows.append("test,cjz14qsk2wci60794un9ozwmw.png")  # a row without an image in the box file: unused
    (base / "split.csv").write_text("split,original_image_path\n" + "\n".join(rows) + "\n")


# --- real size ----------------------------------------------------------------------------------------------

SIZE = Size(
    "RGB JPEG 720x576 and a JPEG mask of the same size",
    "Kvasir-SEG (Jha et al. 2020): 332x487 to 1920x1072; 2d-images.md 4",
)
REAL_SEED = 11  # added to the run's seed: each source its own, whichever others are written


def real_size(base: Path, n: int, seed: int) -> dict:
    height, width = 576, 720
    boxes, split = {}, []
    for k in range(n):
        image_id = item_id("kvasir_seg", seed, k)[:25]
        x0, y0, x1, y1 = (round(v) for v in fields.box(seed + k, height, width))
        mask = np.zeros((height, width), np.uint8)
        mask[y0:y1, x0:x1] = 255
        put(base / "images" / f"{image_id}.jpg", encoded(fields.photo((height, width), seed + k), "JPEG"))
        put(base / "masks" / f"{image_id}.jpg", encoded(mask, "JPEG"))
        boxes[image_id] = {"height": height, "width": width,
                           "bbox": [{"label": "polyp", "xmin": x0, "ymin": y0, "xmax": x1, "ymax": y1}]}  # fmt: skip
        split.append(f"test,{image_id}.png")
    put(base / "kavsir_bboxes.json", json.dumps(boxes))
    put(base / "split.csv", "split,original_image_path\n" + "\n".join(split) + "\n")
    return {}
