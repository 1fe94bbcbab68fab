"""Demo and test fakes of the downloads that mask crops are cut from: Kvasir-SEG and MedSegBench.

Kvasir-SEG: images/<id>.jpg, masks/<id>.jpg (JPEG, so not binary), kavsir_bboxes.json (the upstream spelling:
{id: {height, width, bbox: [{label, xmin, ymin, xmax, ymax}, ...]}}) and the benchmark's split.csv
(header `split,original_image_path`, rows naming `<id>.png`). MedSegBench: flat `<flag>_512.npz` with
`{split}_images` (uint8, (N, H, W, 3) or gray (N, H, W)) and `{split}_label` (0/1 uint8), plus the per-category
`{split}_images_C1`, `{split}_label_C1`, ... of the archives that have them. The demo's arrays are 128 px; the
file names are those of the 512 variant.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from preprocess.demo.images import encode, pattern

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


def kvasir_seg(base: Path) -> None:
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


def _npz(path: Path, arrays: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as handle:
        np.savez_compressed(handle, **arrays)


def _split(count: int, channels: int, seed: int, masks: dict) -> tuple[np.ndarray, np.ndarray]:
    """count images of 128 px and their 0/1 masks: masks[i] is (x0, y0, x1, y1) or None (empty)."""
    images = np.stack([pattern(seed + i, (128, 128), channels) for i in range(count)]).astype(np.uint8)
    labels = np.zeros((count, 128, 128), np.uint8)
    for i in range(count):
        box = masks.get(i, (30 + i, 20 + i, 90, 60 + 2 * i))
        if box is not None:
            labels[i, box[1] : box[3], box[0] : box[2]] = 1
    return images, labels


# per archive: image channels, and the unusual masks of its test split
MEDSEGBENCH = {
    "polypgen": (3, {2: (40, 30, 41, 70)}),  # one column wide: nothing left once the last column goes
    "isic2018": (3, {2: (10, 10, 30, 90)}),  # 20 px wide: dropped with its image
    "uwaterlooskincancer": (3, {}),
    "ultrasoundnerve": (1, {1: None}),  # an empty mask
    "usforkidney": (1, {2: (100, 100, 128, 128)}),  # 28 x 28 at the corner: kept
}
CATEGORIES = {"polypgen": 6, "uwaterlooskincancer": 2}  # PolypGen: six centres; UWaterloo: melanoma or not


def medsegbench(base: Path) -> None:
    for number, (flag, (channels, test_masks)) in enumerate(MEDSEGBENCH.items()):
        arrays = {}
        for split, count in (("train", 2), ("val", 1), ("test", 3)):
            images, labels = _split(count, channels, 10 * number, test_masks if split == "test" else {})
            arrays[f"{split}_images"], arrays[f"{split}_label"] = images, labels
            for category in range(1, CATEGORIES.get(flag, 0) + 1):  # each category's share of the images
                share = slice(category - 1, None, CATEGORIES[flag])
                arrays[f"{split}_images_C{category}"] = images[share]
                arrays[f"{split}_label_C{category}"] = labels[share]
        _npz(base / f"{flag}_512.npz", arrays)


WRITERS = {"kvasir_seg": kvasir_seg, "medsegbench": medsegbench}
