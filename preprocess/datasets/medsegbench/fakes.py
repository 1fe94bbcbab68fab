"""MedSegBench: the demo's tiny copy of its download (`demo`) and real-size items (`real_size`, `SIZE`, `REAL_SEED`);
preprocess/demo/folders.py finds them."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from preprocess.demo import fields, real_npz
from preprocess.demo.files import npz
from preprocess.demo.images import pattern
from preprocess.demo.real_sizes import Size
from preprocess.demo.release_images import crops

# The subsets whose images the demo's release ships, each with the oracle that makes them from the demo's raw
# files (preprocess/demo/release_images: the reference rule stated apart from the conversions).
RELEASE_IMAGES = {
    "2D_Task/SkinLesion": crops.skin_lesion,
    "2D_Task/UltrasoundNerve": crops.ultrasound_nerve,
}


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


def demo(base: Path) -> None:
    for number, (flag, (channels, test_masks)) in enumerate(MEDSEGBENCH.items()):
        arrays = {}
        for split, count in (("train", 2), ("val", 1), ("test", 3)):
            images, labels = _split(count, channels, 10 * number, test_masks if split == "test" else {})
            arrays[f"{split}_images"], arrays[f"{split}_label"] = images, labels
            for category in range(1, CATEGORIES.get(flag, 0) + 1):  # each category's share of the images
                share = slice(category - 1, None, CATEGORIES[flag])
                arrays[f"{split}_images_C{category}"] = images[share]
                arrays[f"{split}_label_C{category}"] = labels[share]
        npz(base / f"{flag}_512.npz", arrays)


# --- real size ----------------------------------------------------------------------------------------------

SIZE = Size(
    "npz at 128, 256 and 512 px (a file a flag and size, deflated): uint8 (N, S, S, 3) or (N, S, S), 0/1 masks; "
    "polypgen with categories C1-C6",
    "MedSegBench (Kus and Aydin 2024, Sci Data 11:1283): 128/256/512 variants; 2d-images.md 2",
)
REAL_SEED = 12  # added to the run's seed: each source its own, whichever others are written


REAL_FLAGS = {"polypgen": (3, 6), "isic2018": (3, 0), "uwaterlooskincancer": (3, 2), "ultrasoundnerve": (1, 0),
               "usforkidney": (1, 0)}  # fmt: skip


def real_size(base: Path, n: int | dict, seed: int) -> dict:
    """Every flag at every size: n test images, 2 train and 1 val (the kind reads the test split)."""
    for variant, choice in real_npz.variants("medsegbench")[1].items():
        size = choice["size"]
        margin = round(40 * size / 512)  # the mask a little larger than the box, at every size alike
        for number, (flag, (channels, categories)) in enumerate(REAL_FLAGS.items()):
            arrays = {}
            for split, count in (("train", 2), ("val", 1), ("test", real_npz.items_at(n, variant))):
                photos = [fields.photo((size, size), seed + number * 1000 + k, channels) for k in range(count)]
                images = np.stack(photos)
                labels = np.zeros((count, size, size), np.uint8)
                for k in range(count):
                    x0, y0, x1, y1 = (round(v) for v in fields.box(seed + k, size, size))
                    labels[k, y0 : y1 + margin, x0 : x1 + margin] = 1
                arrays[f"{split}_images"], arrays[f"{split}_label"] = images, labels
                for category in range(1, categories + 1):
                    share = slice(category - 1, None, categories)
                    arrays[f"{split}_images_C{category}"], arrays[f"{split}_label_C{category}"] = (
                        images[share],
                        labels[share],
                    )
            npz(base / f"{flag}_{size}.npz", arrays)
    return {}
