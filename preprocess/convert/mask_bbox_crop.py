"""A full image and a crop around its lesion or nuclei, from segmentation masks or the boxes shipped with them.

params (declared in registry/kinds.yaml):
  dataset     the recipe that reads the raw data (the kind's `recipes` in a dataset folder's recipes.yaml, whose
              code is a class below with plan and produce): kvasir_seg (the largest box per image of
              kavsir_bboxes.json, the split from the benchmark's split.csv), medsegbench (one box around the
              whole mask of each image of a `<flag>_<size>.npz`, every split), pannuke (one box per instance
              mask of the parquet rows, grown to `grow_to`)
  image, crop name templates relative to the image root (fields: each recipe's entry in its recipes.yaml)
  max_edge, min_crop, grow_to, mask_keys, classes: the box rules, as the benchmark's scripts apply them
  splits      the splits built: medsegbench key prefixes, kvasir_seg split.csv values, pannuke test | train
              (a (row, class) group with a grown box is train, as the grounding script splits them)
Images are decoded, converted to RGB and written as PNG, as those scripts save them. Nothing is dropped
silently: images without a box, empty masks, boxes empty inside the image and crops under `min_crop` (dropped
with their image) are counted in the job log.
"""

from __future__ import annotations

import io
import os
import re
from collections import defaultdict
from pathlib import Path

import numpy as np
from PIL import Image

from preprocess.convert import boxes
from preprocess.convert.outputs import Png, Result
from preprocess.convert.parquet_extract import list_rows
from preprocess.errors import RawDataError
from preprocess.formats import textparse
from preprocess.formats.csvio import read_split_csv
from preprocess.formats.npzio import NpzFile
from preprocess.formats.parquet import iter_images

# --- what every recipe shares ------------------------------------------------------------------------------


class Tally:
    """Counts of what was left out, by reason, for one line each in the job log."""

    def __init__(self, ctx):
        self.ctx, self.items = ctx, defaultdict(list)

    def skip(self, reason: str, item) -> None:
        self.items[reason].append(str(item))

    def report(self) -> None:
        for reason, items in self.items.items():
            shown = ", ".join(items[:5]) + (", ..." if len(items) > 5 else "")
            self.ctx.log(f"{self.ctx.subset.key}/{self.ctx.conversion.name}: {len(items)} left out, {reason}: {shown}")


def _names(ctx, **fields) -> tuple[str, str]:
    return ctx.name("image", **fields), ctx.name("crop", **fields)


def _pair(ctx, image: np.ndarray, box, names: tuple[str, str], tally: Tally, item):
    """The full image and its crop, unless the clamped box is empty or the crop is under min_crop."""
    height, width = image.shape[:2]
    inside = boxes.clip_to_image(box, width, height)
    if inside is None:
        tally.skip("box empty inside the image", item)
        return
    minimum = ctx.params.get("min_crop", 0)
    if inside[2] - inside[0] < minimum or inside[3] - inside[1] < minimum:
        tally.skip(f"crop under {minimum} px (its full image too)", item)
        return
    yield Png(ctx.output_path(names[0]), image)
    yield Png(ctx.output_path(names[1]), boxes.crop(image, inside))


def _decode_rgb(data: bytes, where: str) -> np.ndarray:
    try:
        with Image.open(io.BytesIO(data)) as image:
            return np.asarray(image.convert("RGB"))
    except (OSError, ValueError, Image.DecompressionBombError) as exc:
        raise RawDataError(f"{where}: not a readable image ({exc}); download the file again") from None


def _array_rgb(array: np.ndarray, where: str) -> np.ndarray:
    """An npz image as the scripts save and reopen it: to uint8 (floats in [0, 1] scaled by 255, clipped,
    truncated), gray and RGBA to RGB."""
    array = np.asarray(array)
    if array.dtype != np.uint8:
        values = array.astype(np.float32)
        if values.size and values.min() >= 0 and values.max() <= 1.0:
            values = values * 255.0
        array = np.clip(values, 0, 255).astype(np.uint8)
    if array.ndim == 3 and array.shape[2] == 1:
        array = array[:, :, 0]
    if array.ndim == 2:
        return np.repeat(array[:, :, None], 3, axis=2)
    if array.ndim == 3 and array.shape[2] in (3, 4):
        return array[:, :, :3]
    raise RawDataError(f"{where}: image of shape {array.shape} is neither gray nor RGB")


# --- Kvasir-SEG ---------------------------------------------------------------------------------------------


class KvasirSeg:
    """Boxes from kavsir_bboxes.json (the largest of an image, the first on ties), every split of split.csv."""

    SPLIT_KEY = "original_image_path"  # rows name `<id>.png`; the image is images/<id>.jpg

    @staticmethod
    def _tables(ctx) -> tuple[Path, dict, dict]:
        source = ctx.source(ctx.params.get("source"))
        base = ctx.raw_dir(source.id)
        candidates = [base / p for p in source.file("boxes").paths]
        boxes_file = next((ctx.raw_file(p) for p in candidates if os.path.lexists(p)), None)
        if boxes_file is None:
            names = ", ".join(p.name for p in candidates)
            raise RawDataError(f"{base}: none of {names} is there; unzip Kvasir-SEG again")
        try:
            annotations = textparse.read_json(boxes_file, textparse.DATA_BYTES)
        except textparse.TextError as exc:
            raise RawDataError(f"{exc}; unzip Kvasir-SEG again") from None
        if not isinstance(annotations, dict):
            raise RawDataError(f"{boxes_file}: expected an object of image id -> boxes")
        rows = read_split_csv(base / source.file("split").paths[0], (KvasirSeg.SPLIT_KEY,))
        return base, annotations, {Path(name).stem: split for name, split in rows.items()}

    @staticmethod
    def plan(ctx) -> list[str]:
        _, annotations, splits = KvasirSeg._tables(ctx)
        unsplit = [image_id for image_id in annotations if image_id not in splits]
        if unsplit:
            ctx.log(f"{len(unsplit)} images of the box file have no row in split.csv and are left out: {unsplit[:5]}")
        chosen = ctx.params.get("splits")
        return [i for i in annotations if i in splits and (chosen is None or splits[i] in chosen)]

    @staticmethod
    def produce(ctx, items):
        base, annotations, splits = KvasirSeg._tables(ctx)
        tally = Tally(ctx)
        for image_id in items:
            outputs = KvasirSeg._outputs(ctx, base, annotations, splits[image_id], image_id, tally)
            yield Result(image_id, outputs, (base / "images" / f"{image_id}.jpg",))
        tally.report()

    @staticmethod
    def _outputs(ctx, base: Path, annotations: dict, split: str, image_id: str, tally: Tally):
        source = base / "images" / f"{image_id}.jpg"
        if not os.path.lexists(source):
            raise RawDataError(f"{source}: in the box file and split.csv but missing")
        ctx.raw_file(source)
        box = _largest_box(annotations[image_id], image_id)
        if box is None:
            tally.skip("no box with xmin, ymin, xmax, ymax", image_id)
            return
        image = _decode_rgb(source.read_bytes(), str(source))
        yield from _pair(ctx, image, box, _names(ctx, split=split, stem=image_id), tally, image_id)


def _int_box(entry: dict) -> tuple[int, int, int, int]:
    return tuple(int(float(entry[key])) for key in ("xmin", "ymin", "xmax", "ymax"))


def _largest_box(info, image_id: str):
    entries = info.get("bbox", []) if isinstance(info, dict) else []
    if not isinstance(entries, list):
        return None
    valid = [b for b in entries if isinstance(b, dict) and {"xmin", "ymin", "xmax", "ymax"} <= b.keys()]

    def size(entry) -> int:
        try:
            x0, y0, x1, y1 = _int_box(entry)
        except (TypeError, ValueError):
            return -1
        return max(0, x1 - x0) * max(0, y1 - y0)

    if not valid:
        return None
    try:
        return _int_box(max(valid, key=size))  # max keeps the first of equal areas
    except (TypeError, ValueError):
        raise RawDataError(f"kavsir_bboxes.json: {image_id} has no numeric box coordinates") from None


# --- MedSegBench --------------------------------------------------------------------------------------------


_BATCH = 8  # images (and masks) read at a time: 6 MB at 512 px RGB


class MedSegBench:
    """One box around all mask pixels > 0 of each image; the mask array is the first of `mask_keys` present."""

    SPLITS = ("train", "val", "valid", "validation", "test")  # key prefixes the scripts treat as splits

    @staticmethod
    def _archive(ctx) -> Path:
        source = ctx.source(ctx.params.get("source"))
        return ctx.raw_file(ctx.raw_dir(source.id) / source.file(ctx.params["flag"]).paths[0])

    @staticmethod
    def _splits(ctx, archive: NpzFile, log: bool) -> list[tuple[str, str, str, int]]:
        """(split, images key, masks key, count) of each split that has images and masks."""
        prefixes = {key.split("_", 1)[0] for key in archive.keys if "_" in key}
        wanted = ctx.params.get("splits") or sorted(prefixes & set(MedSegBench.SPLITS))
        found = []
        for split in wanted:
            images = f"{split}_images"
            masks = [t.format(split=split) for t in ctx.params.get("mask_keys", ["{split}_label"])]
            masks = next((key for key in masks if key in archive.keys), None)
            if images not in archive.keys or masks is None:
                if log:
                    ctx.log(f"{archive.path}: split {split} left out, it has no {images} or no mask array")
                continue
            counts = archive.info(images).shape[0], archive.info(masks).shape[0]
            if counts[0] != counts[1] and log:
                ctx.log(f"{archive.path}: {images} has {counts[0]} images, {masks} {counts[1]}: the extra left out")
            found.append((split, images, masks, min(counts)))
        if not found:
            raise RawDataError(f"{archive.path}: no split with images and masks (keys: {', '.join(archive.keys)})")
        return found

    @staticmethod
    def plan(ctx) -> list[tuple[str, int]]:
        with NpzFile(MedSegBench._archive(ctx)) as archive:
            return [(s, i) for s, _, _, count in MedSegBench._splits(ctx, archive, True) for i in range(count)]

    @staticmethod
    def produce(ctx, items):
        wanted = defaultdict(list)
        for split, index in items:
            wanted[split].append(index)
        tally = Tally(ctx)
        with NpzFile(MedSegBench._archive(ctx)) as archive:
            for split, images_key, masks_key, _ in MedSegBench._splits(ctx, archive, False):
                if split not in wanted:
                    continue
                # Both arrays are read in step, a few items at a time: a job's memory does not grow with the split.
                chosen = sorted(wanted[split])
                batches = [chosen[start : start + _BATCH] for start in range(0, len(chosen), _BATCH)]
                pairs = zip(archive.rows(images_key, batches), archive.rows(masks_key, batches), strict=True)
                for indices, (images, masks) in zip(batches, pairs, strict=True):
                    for index, image, mask in zip(indices, images, masks, strict=True):
                        where = f"{archive.path}: {images_key}[{index}]"
                        outputs = MedSegBench._outputs(ctx, image, mask, split, index, where, tally)
                        yield Result(where, outputs, (archive.path,))
        tally.report()

    @staticmethod
    def _outputs(ctx, image, mask, split: str, index: int, where: str, tally: Tally):
        item = f"{split} {index:05d}"
        box = _whole_mask_box(mask, ctx.params.get("max_edge", "after"))
        if box is None:
            tally.skip("empty mask", item)
            return
        names = _names(ctx, split=split, index=index, flag=ctx.params["flag"])
        yield from _pair(ctx, _array_rgb(image, where), box, names, tally, item)


def _whole_mask_box(mask: np.ndarray, max_edge: str):
    mask = np.asarray(mask)
    if mask.ndim == 3:
        mask = mask[:, :, 0]  # the scripts read the first channel of a 3-D mask
    box = boxes.mask_box(mask)
    if box is None or max_edge == "after":
        return box
    # 'at': the PolypGen script's inclusive maximum is used as the exclusive edge: the last row and column go
    return box[0], box[1], box[2] - 1, box[3] - 1


# --- PanNuke ------------------------------------------------------------------------------------------------


class PanNuke:
    """Every row of the parquet files under data/: the image, and one grown box per instance mask."""

    FILES = ("data/*.parquet",)

    @staticmethod
    def plan(ctx) -> list[tuple[str, int]]:
        base = ctx.raw_dir(ctx.params.get("source"))
        return list_rows(base, list(PanNuke.FILES), ctx.subset.key, ctx.log, ctx.raw_file)

    @staticmethod
    def produce(ctx, items):
        data_folder = ctx.raw_dir(ctx.params.get("source")) / "data"
        wanted: dict[str, set[int]] = defaultdict(set)
        for file, row in items:
            wanted[file].add(row)
        tally = Tally(ctx)
        for file, rows in sorted(wanted.items()):
            tag = _tag(Path(file), data_folder)
            for record in iter_images(Path(file), "image", ["instances", "categories"]):
                if record.row in rows:
                    yield Result(f"{file} row {record.row}", PanNuke._row(ctx, record, tag, tally), (file,))
        tally.report()

    @staticmethod
    def _row(ctx, record, tag: str, tally: Tally):
        where = f"{record.file} row {record.row}"
        if record.data is None:
            tally.skip("row without an image", where)
            return
        image = _decode_rgb(record.data, where)
        crops = list(PanNuke._crops(ctx, record, image, tally, where))
        # A (row, class) group with any grown box is the reference's train split, the others its test split.
        grown_labels = {label for _, label, box, grown in crops if grown != box}
        chosen = ctx.params.get("splits")
        keep = [c for c in crops if chosen is None or ("train" if c[1] in grown_labels else "test") in chosen]
        if keep or (not crops and (chosen is None or "test" in chosen)):  # a row without crops: as the test split
            yield Png(ctx.output_path(ctx.name("image", tag=tag, row=record.row)), image)
        for inst, label, _, grown in keep:
            name = ctx.name("crop", tag=tag, row=record.row, label=label, inst=inst)
            yield Png(ctx.output_path(name), boxes.crop(image, grown))

    @staticmethod
    def _crops(ctx, record, image, tally: Tally, where: str):
        """(instance position, class name, mask box, grown box) of each usable instance of the row."""
        instances, categories = record.fields["instances"] or [], record.fields["categories"] or []
        if len(instances) != len(categories):
            tally.skip("instances beyond the shorter of instances and categories", where)
        for inst, (instance, category) in enumerate(zip(instances, categories, strict=False)):
            item = f"{where} instance {inst}"
            label = _class_name(ctx.params["classes"], category)
            try:
                mask = _decode_mask((instance or {}).get("bytes"))
            except RawDataError:
                tally.skip("unreadable instance mask", item)
                continue
            box = boxes.mask_box(mask)
            if box is None:
                tally.skip("empty instance mask", item)
                continue
            yield inst, label, box, boxes.grow_to_minimum(box, image.shape[1], image.shape[0], ctx.params["grow_to"])


def _decode_mask(data: bytes | None) -> np.ndarray:
    if data is None:
        raise RawDataError("no mask bytes")
    try:
        with Image.open(io.BytesIO(data)) as mask:
            return np.asarray(mask.convert("L"))
    except (OSError, ValueError) as exc:
        raise RawDataError(str(exc)) from None


def _class_name(classes: list[str], category) -> str:
    """The crop's class as the grounding script names it: `classes[id]` for an id in range, otherwise
    `class_<id>` (the id as an integer when it is one, else its text), lower-cased and sanitised. The script
    crops a nucleus of an unknown category like any other, under that name."""
    try:
        number = int(category)
    except (TypeError, ValueError, OverflowError):  # None, text, NaN, infinity: the script names them as printed
        name = f"class_{category}"
    else:
        name = classes[number] if 0 <= number < len(classes) else f"class_{number}"
    return _sanitised(name.lower())


def _tag(path: Path, data_folder: Path) -> str:
    """The parquet path under data/ without suffix, sanitised."""
    return _sanitised(path.relative_to(data_folder).with_suffix("").as_posix())


def _sanitised(text: str) -> str:
    """Runs of other characters than word, '-' and '.' as one '_', runs of '_' as one, none at either end."""
    return re.sub(r"_+", "_", re.sub(r"[^\w\-.]+", "_", text)).strip("_")


# --- the kind -----------------------------------------------------------------------------------------------


def plan(ctx):
    return ctx.recipe["code"].plan(ctx)


def produce(ctx, items):
    return ctx.recipe["code"].produce(ctx, items)
