"""Grounding crops from masks and boxes: MedSegBench (SkinLesion, UltrasoundNerve), Gastrointestinal
(Kvasir-SEG boxes and PolypGen masks) and PanNuke_VG. Boxes are (x0, y0, x1, y1) as Pillow's crop takes
them: columns x0 .. x1 - 1 and rows y0 .. y1 - 1.
"""

from __future__ import annotations

import io
import json
import os
import re

import numpy as np
import pyarrow.parquet as pq
from PIL import Image

from preprocess.demo.release_images.outputs import Outputs

SPLIT_WORDS = {"train", "val", "valid", "validation", "test"}
MASK_DIRS = ["labels", "label", "label_C1", "masks", "mask"]  # the first the npz has, per split
NUCLEI = {0: "Neoplastic", 1: "Inflammatory", 2: "Connective", 3: "Dead", 4: "Epithelial"}


def _extent(mask: np.ndarray, past_last: int):
    """(x0, y0, x1, y1) around the pixels > 0, the max edge at the last pixel + past_last; None if empty."""
    ys, xs = np.nonzero(mask > 0)
    if xs.size == 0:
        return None
    return int(xs.min()), int(ys.min()), int(xs.max()) + past_last, int(ys.max()) + past_last


def _clamped(box, width: int, height: int):
    """The scripts' clamp: starts into [0, size - 1], ends into [0, size]; None when nothing is left."""
    x0, y0 = max(0, min(box[0], width - 1)), max(0, min(box[1], height - 1))
    x1, y1 = max(0, min(box[2], width)), max(0, min(box[3], height))
    return None if x1 <= x0 or y1 <= y0 else (x0, y0, x1, y1)


def _rgb(array: np.ndarray) -> Image.Image:
    return Image.fromarray(np.ascontiguousarray(array.astype(np.uint8))).convert("RGB")


def _pair(made: Outputs, image: Image.Image, box, full: str, crop: str) -> None:
    made[full] = lambda: image
    made[crop] = lambda: image.crop(box)


def _split_arrays(arrays) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """split -> (images, masks) of a MedSegBench npz, the masks the first of MASK_DIRS the split has."""
    found = {}
    for key in arrays.files:
        split, _, rest = key.partition("_")
        if rest == "images" and split in SPLIT_WORDS:
            masks = next((f"{split}_{name}" for name in MASK_DIRS if f"{split}_{name}" in arrays.files), None)
            if masks is not None:
                found[split] = (arrays[key], arrays[masks])
    return found


def _medsegbench(raw, folder: str, flags: list[str], min_side: int) -> Outputs:
    """Every split; one box around the whole mask; a crop narrower or lower than min_side dropped with its image."""
    made = {}
    for flag in flags:
        with np.load(raw("medsegbench") / f"{flag}_512.npz") as arrays:
            for split, (images, masks) in sorted(_split_arrays(arrays).items()):
                for index in range(len(images)):
                    image = _rgb(images[index])
                    mask = masks[index][:, :, 0] if masks[index].ndim == 3 else masks[index]
                    box = _extent(mask, 1)
                    box = box and _clamped(box, *image.size)
                    if box is None or box[2] - box[0] < min_side or box[3] - box[1] < min_side:
                        continue
                    stem = f"2D_Images/{folder}/images/{split}_{index:05d}_{flag}"
                    _pair(made, image, box, f"{stem}.png", f"{stem}_crop.png")
    return made


def skin_lesion(raw, named) -> Outputs:
    return _medsegbench(raw, "SkinLesion", ["isic2018", "uwaterlooskincancer"], 28)


def ultrasound_nerve(raw, named) -> Outputs:
    return _medsegbench(raw, "UltrasoundNerve", ["ultrasoundnerve", "usforkidney"], 28)


def _kvasir_seg(raw) -> Outputs:
    """The largest-area box of each image of the box file (the first of equal areas), split from split.csv
    matched by stem; images without a split row are left out."""
    base = raw("kvasir_seg")
    splits = {}
    for line in (base / "split.csv").read_text(encoding="utf-8").splitlines()[1:]:
        if "," in line:
            split, name = (part.strip() for part in line.split(",", 1))
            splits[os.path.splitext(name)[0]] = split
    made = {}
    for image_id, info in json.loads((base / "kavsir_bboxes.json").read_text(encoding="utf-8")).items():
        path = base / "images" / f"{image_id}.jpg"
        boxes = [b for b in info.get("bbox", []) if {"xmin", "ymin", "xmax", "ymax"} <= set(b)]
        if not path.is_file() or image_id not in splits or not boxes:
            continue
        corners = [tuple(int(float(b[k])) for k in ("xmin", "ymin", "xmax", "ymax")) for b in boxes]
        largest = max(corners, key=lambda c: max(0, c[2] - c[0]) * max(0, c[3] - c[1]))
        image = Image.open(path).convert("RGB")
        box = _clamped(largest, *image.size)
        if box is not None:
            stem = f"2D_Images/Gastrointestinal/images/{splits[image_id]}_{image_id}"
            _pair(made, image, box, f"{stem}.png", f"{stem}_polyp.png")
    return made


def _polypgen(raw) -> Outputs:
    """train, test and val; the mask's inclusive max used as the exclusive edge (its last row and column fall out)."""
    made = {}
    with np.load(raw("medsegbench") / "polypgen_512.npz") as arrays:
        for split in ("train", "test", "val"):
            images, masks = arrays[f"{split}_images"], arrays[f"{split}_label"]
            for index in range(len(images)):
                image = _rgb(images[index])
                box = _extent(masks[index], 0)
                box = box and _clamped(box, *image.size)
                if box is not None:
                    stem = f"2D_Images/Gastrointestinal/images/{split}_{index:05d}"
                    _pair(made, image, box, f"{stem}.png", f"{stem}_polyp.png")
    return made


def gastrointestinal(raw, named) -> Outputs:
    return _kvasir_seg(raw) | _polypgen(raw)


def _grown(box, width: int, height: int, least: int = 28):
    """At least `least` px a side (at most the image) around the box's centre, then moved inside the image."""
    size_x, size_y = min(max(box[2] - box[0], least), width), min(max(box[3] - box[1], least), height)
    x0 = round((box[0] + box[2]) / 2.0 - size_x / 2.0)  # Python's round: halves to even
    y0 = round((box[1] + box[3]) / 2.0 - size_y / 2.0)
    x0, y0 = max(0, x0), max(0, y0)  # moved right/down when it starts outside ...
    x0, y0 = max(0, min(x0, width - size_x)), max(0, min(y0, height - size_y))  # ... left/up when it ends outside
    return x0, y0, x0 + size_x, y0 + size_y


def _decoded(cell) -> Image.Image:
    image = Image.open(io.BytesIO(cell["bytes"]))
    image.load()
    return image


def pannuke_vg(raw, named) -> Outputs:
    """Every row of every parquet under data/: the full image, and a crop per nucleus mask named by its class
    and its position in the row's list."""
    made, data = {}, raw("pannuke") / "data"
    for path in sorted(data.rglob("*.parquet")):
        tag = re.sub(r"_+", "_", re.sub(r"[^\w\-.]+", "_", path.relative_to(data).with_suffix("").as_posix())).strip(
            "_"
        )
        table = pq.read_table(path, columns=["image", "instances", "categories"])
        columns = (table.column(c).to_pylist() for c in ("image", "instances", "categories"))
        for row, (cell, instances, categories) in enumerate(zip(*columns, strict=True)):
            image = _decoded(cell).convert("RGB")
            made[f"2D_Images/PanNuke_VG/images/{tag}/{tag}_{row:06d}.png"] = lambda i=image: i
            pairs = zip(instances or [], categories or [], strict=False)  # as far as both lists go
            for inst, (mask, category) in enumerate(pairs):
                box = _extent(np.asarray(_decoded(mask).convert("L")), 1)
                if box is None:
                    continue
                box = _grown(box, *image.size)
                label = NUCLEI.get(int(category), f"class_{category}").lower()
                name = f"2D_Images/PanNuke_VG/crops/{tag}/{tag}_{row:06d}_{label}_{inst:03d}.png"
                made[name] = lambda i=image, b=box: i.crop(b)
    return made
