"""Demo and test fakes of the downloads that crops are cut from: Kvasir-SEG, MedSegBench (masks); the
annotated-box ones (VinDr-CXR, VinDr-Mammo, Chest ImaGenome) are in preprocess/demo/annotations.py."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from preprocess.demo.annotations import WRITERS as ANNOTATION_WRITERS
from preprocess.demo.annotations import _dicom, xray  # noqa: F401  (tests/test_bad_input.py imports them here)
from preprocess.demo.images import encode, pattern


def kvasir_seg(base: Path) -> dict:
    ids = ["cju0qkwl35piu0993l0dewei2", "cju0qoxqj9q6s0835b43399p4", "cju0roawvklrq0799vmjorwfv"]
    boxes = {}
    for n, image_id in enumerate(ids):
        image = pattern(400 + n, (60, 80))
        mask = np.zeros((60, 80), np.uint8)
        mask[10 + n : 30 + n, 20:50] = 255
        noisy = np.clip(mask.astype(int) + np.random.default_rng(n).integers(-8, 9, mask.shape), 0, 255)
        (base / "images").mkdir(parents=True, exist_ok=True)
        (base / "masks").mkdir(parents=True, exist_ok=True)
        (base / "images" / f"{image_id}.jpg").write_bytes(encode(image, "JPEG"))
        (base / "masks" / f"{image_id}.jpg").write_bytes(encode(noisy.astype(np.uint8), "JPEG"))  # not binary
        boxes[image_id] = {"height": 60, "width": 80,
                           "bbox": [{"label": "polyp", "xmin": 20, "ymin": 10 + n, "xmax": 50, "ymax": 30 + n}]}
    (base / "kavsir_bboxes.json").write_text(json.dumps(boxes))  # the upstream spelling
    (base / "split.csv").write_text("image_id,split\n" + "".join(
        f"{i},{'train' if n == 0 else 'test'}\n" for n, i in enumerate(ids)))
    test = ids[1:]
    return {"2D_Task/Gastrointestinal": [f"kvasir/crop/{i}_0.png" for i in test] + [f"kvasir/images/{i}.jpg" for i in test]}


def _npz(path: Path, arrays: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as handle:
        np.savez_compressed(handle, **arrays)


def _seg_split(count: int, size: int, channels: int, seed: int, empty: tuple = ()):
    images = np.stack([pattern(seed + i, (size, size), channels) for i in range(count)]).astype(np.uint8)
    masks = np.zeros((count, size, size), np.uint8)
    for i in range(count):
        if i not in empty:
            masks[i, 20 + i : 60 + i, 30:90] = 1
    return images, masks


def medsegbench(base: Path) -> dict:
    referenced: dict[str, list[str]] = {}
    for flag, channels, subset in (("polypgen", 3, "2D_Task/Gastrointestinal"), ("isic2018", 3, "2D_Task/SkinLesion"),
                                   ("ultrasoundnerve", 1, "2D_Task/UltrasoundNerve"),
                                   ("usforkidney", 1, "2D_Task/UltrasoundNerve")):
        arrays = {}
        for split, count in (("train", 2), ("val", 1), ("test", 3)):
            empty = (1,) if flag == "ultrasoundnerve" and split == "test" else ()
            arrays[f"{split}_images"], arrays[f"{split}_label"] = _seg_split(count, 128, channels, len(flag), empty)
        _npz(base / f"{flag}_512.npz", arrays)  # the demo's arrays are 128 px; the name is the variant's
        kept = [i for i in range(3) if not (flag == "ultrasoundnerve" and i == 1)]
        referenced.setdefault(subset, []).extend(f"{flag}/crop/test{i:05d}_0.png" for i in kept)
    arrays = {}  # UWaterloo: per-category keys only (C1 melanoma, C2 not melanoma)
    for category in (1, 2):
        for split, count in (("train", 1), ("val", 1), ("test", 2)):
            images, masks = _seg_split(count, 128, 3, 30 + category)
            arrays[f"{split}_images_C{category}"], arrays[f"{split}_label_C{category}"] = images, masks
    _npz(base / "uwaterlooskincancer_512.npz", arrays)
    referenced["2D_Task/SkinLesion"] += [f"uwaterlooskincancer/crop/test_C{c}{i:05d}_0.png" for c in (1, 2)
                                        for i in range(2)]
    return referenced


WRITERS = {
    "kvasir_seg": kvasir_seg,
    "medsegbench": medsegbench,
    **ANNOTATION_WRITERS,
}
