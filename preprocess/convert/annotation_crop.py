"""Crops from annotated boxes, as the benchmark's grounding scripts cut them: VinDr-CXR, VinDr-Mammo,
Chest ImaGenome (gold boxes on MIMIC-CXR-JPG).

params (every output name is a template; the fields each recipe fills are listed below):
  recipe    a recipe (the kind's `recipes` in a dataset folder's recipes.yaml, whose code is one of the Recipe objects
            below), or {source variant: name} when the route depends on the copy the user has
  query     name of the full (query) image under the image root; absent: the kind writes no query image
  crop      name of one crop under the image root
  png_copy  VinDr-CXR: where a user's own PNG copy of the DICOMs lives, relative to the source's raw folder
  splits    the splits to build (default: every split, as the scripts do)

Recipes (the route a source variant selects is in brackets):
  vindr_cxr              annotations/annotations_{train,test}.csv; fields split (train|test, by the CSV),
                         image_id, class_id, index. When the folder of `png_copy` (its part before the first
                         field, e.g. <raw>/vindr-cxr/VinDr-CXR-dataset/ai-vinbigdata/) exists, every query
                         image is hard-linked from that copy and the crops are cut from its pixels (the pixels
                         the reference crops came from); otherwise the query image is written from the DICOM
                         {split}/{image_id}.dicom (preprocess.formats.dicomio: first VOI window, MONOCHROME1 inverted,
                         8-bit), which reproduces the names but not necessarily the reference pixels.
  vindr_mammo            [derived] the Mammo-CLIP copy: vindr_detection_v1_folds.csv (resized_* boxes) and
                         images_png/<patient_id>/<image_id>.png, hard-linked; fields patient_id, image_id, split
                         (training -> train, else test), class_id, index. Reproduces the reference.
  vindr_mammo_physionet  [physionet] finding_annotations.csv (xmin..ymax) on images/<study_id>/<image_id>.dicom
                         decoded by preprocess.formats.dicomio (FOR PROCESSING images skipped); patient_id = study_id.
                         Same names, but NOT the reference pixels: the derived copy's resize is not known.
  chest_imagenome_gold   gold_dataset/gold_bbox_coordinate_annotations_1000images.csv on the MIMIC-CXR-JPG image
                         that gold_all_sentences_500pts_1000studies.txt places (its first row of an image);
                         fields image_id (the DICOM id), class_id; no query image (the MIMIC links serve it).
                         A region annotated twice on one image keeps its last box (the script overwrites).
  chest_imagenome_silver  the crops that the subset's Train_Data JSONL files name (paths matching `crop` under
                         the image root; no JSONL, no crops): boxes from <dicom_id>_SceneGraph.json read inside
                         silver_dataset/scene_graph.zip, or in the folder it was extracted to (flat, or one
                         level deeper: scene_graph/scene_graph/; preprocess.formats.unpacked) (the last object
                         of a region, skipped when a coordinate
                         is null), on the MIMIC-CXR-JPG image of its patient_id and study_id; class_id numbers
                         the sorted region names of all scene graphs (or params.classes). A named crop the scene
                         graphs do not hold is logged and left out (the validation summary lists it).

Shared rules: rows without a box and "No finding"/"No Finding" are skipped; coordinates int(float(v)) floored
at 0; class_id = position of the name in the sorted names of every row that has a box, in all splits, taken
before any row is judged (a bad row left out under on_bad_input: skip keeps its name in the numbering, so it
never renumbers the others); boxes of one (image, class) are merged (boxes.merge_overlapping) and crop `index`
k is the k-th box of the merged list; crops follow boxes.reference_crop, which also gives an inverted box
(x_max < x_min or y_max < y_min), a zero-size box and a box past the border the scripts' window (28 pixels
around the midpoint, shifted inside), as the scripts accept them; pixels are kept in the image's own mode
(8/16-bit gray, RGB).
"""

from __future__ import annotations

import ast
import csv
import os
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from PIL import Image

from preprocess.convert import boxes, scenegraph
from preprocess.convert.outputs import HardLink, Png, Result
from preprocess.convert.scenegraph import SceneGraphs
from preprocess.errors import RawDataError
from preprocess.formats.dicomio import read_dicom
from preprocess.release import trainlist


@dataclass
class Item:
    """One image and the crops cut from it."""

    image_id: str
    source: str  # the raw image file (its path labels the item in logs and manifests)
    fields: dict  # template fields of the image: split, patient_id, ...
    crops: list = field(default_factory=list)  # (class_id, index, box)
    link: bool = False  # the query image is the raw file itself (hard-linked), not written from pixels


@dataclass(frozen=True)
class Recipe:
    plan: object  # plan(ctx) -> list[Item]
    skip_for_processing: bool = False
    outputs: object = None  # outputs(ctx, item) when the item's image and boxes are read only as it is built


# --- reading the annotation files -----------------------------------------------------------------------------


def _rows(path: Path, required: tuple[str, ...], delimiter: str = ","):
    """(line number, row) of a CSV/TSV with the required columns; other columns are ignored."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as handle:
            reader = csv.DictReader(handle, delimiter=delimiter)
            missing = [c for c in required if c not in (reader.fieldnames or [])]
            if missing:
                raise RawDataError(
                    f"{path}: missing columns {missing} (it has: {reader.fieldnames}); is it the right file?"
                )
            return [(number, row) for number, row in enumerate(reader, start=2)]
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise RawDataError(f"{path}: cannot read ({exc}); download it again") from None


def _box(path: Path, number: int, row: dict, columns: tuple[str, ...]) -> tuple[int, int, int, int]:
    """The row's box, int(float(v)) floored at 0 as the scripts read it: a cell that is not a finite number
    makes this one row bad (never the column). An inverted or empty box is kept: the scripts crop it with their
    minimum window (boxes.reference_crop)."""
    try:
        return tuple(max(0, int(float(row[c]))) for c in columns)
    except (TypeError, ValueError, OverflowError):
        values = {c: row[c] for c in columns}
        raise RawDataError(
            f"{path} line {number}: box {values} is not four numbers; the file is damaged, download it again"
        ) from None


def _raise(item: str, exc: RawDataError) -> None:
    raise exc


def _bad_rows(ctx):
    """Bad rows of an annotation file go through the bad-input policy one by one: they stop the job
    (on_bad_input: fail) or are logged, named by file and line, and counted (skip)."""

    def bad(item: str, exc: RawDataError) -> None:
        with ctx.guard(item):
            raise exc

    return bad


def _parsed(bad, parse, path: Path, number: int, row: dict, *args):
    """parse(path, number, row, *args), or None when the row is bad (and `bad` let it be skipped)."""
    try:
        return parse(path, number, row, *args)
    except RawDataError as exc:
        bad(f"{path} line {number}", exc)
        return None


def _spec_path(ctx, file_id: str, source_id: str | None = None) -> Path:
    source = ctx.source(source_id)
    spec = source.file(file_id)
    base = ctx.raw_dir(source_id)
    path = next((base / p for p in spec.paths if os.path.lexists(base / p)), base / spec.paths[0])
    if spec.holds and os.path.isdir(path):  # a folder of the content (scene graphs), maybe one level deeper
        return ctx.raw_content(path, spec.holds)
    return ctx.raw_file(path) if os.path.lexists(path) else path  # a missing one is named where it is read


def _class_ids(names) -> dict[str, int]:
    return {name: index for index, name in enumerate(sorted(set(names)))}


def _grouped_items(groups: dict, image_of: dict, class_ids: dict) -> list[Item]:
    """Items in image order, each with the merged boxes of its (image, class) groups."""
    items: dict[str, Item] = {}
    for (image_id, name), found in groups.items():
        item = items.setdefault(image_id, image_of[image_id])
        for index, box in enumerate(boxes.merge_overlapping(found)):
            item.crops.append((class_ids[name], index, box))
    return [items[k] for k in sorted(items)]


# --- recipes --------------------------------------------------------------------------------------------------

VINDR_CXR_FILES = (("annotations_train", "train"), ("annotations_test", "test"))
VINDR_CXR_BOX = ("x_min", "y_min", "x_max", "y_max")


def read_vindr_cxr(files, bad=_raise) -> tuple[dict, dict, set[str]]:
    """Boxes of annotations_{train,test}.csv files ((path, split) pairs, train first): {(image_id, class name):
    [box, ...]} in file order, each image's split (an image in both files counts as the later one's), and the
    class names of every row with a box, bad ones included. A bad row goes to bad(item, error), which raises
    (the default) or records it."""
    groups, split_of, names = defaultdict(list), {}, set()
    for path, split in files:
        for number, row in _rows(path, ("image_id", "class_name", *VINDR_CXR_BOX)):
            if row["class_name"] == "No finding" or not (row["x_min"] or "").strip():
                continue
            names.add(row["class_name"])
            box = _parsed(bad, _box, path, number, row, VINDR_CXR_BOX)
            if box is not None:
                groups[(row["image_id"], row["class_name"])].append(box)
                split_of[row["image_id"]] = split
    return groups, split_of, names


def _vindr_cxr(ctx) -> list[Item]:
    files = [(_spec_path(ctx, file_id), split) for file_id, split in VINDR_CXR_FILES]
    groups, split_of, names = read_vindr_cxr(files, _bad_rows(ctx))
    base, copy = ctx.raw_dir(), ctx.params.get("png_copy")
    use_copy = copy is not None and (base / _static_prefix(copy)).is_dir()
    ctx.log(
        f"{ctx.subset.key}: query images "
        + (f"hard-linked from the PNG copy {base / _static_prefix(copy)}" if use_copy else "written from the DICOMs")
    )
    images = {}
    for image_id, split in split_of.items():
        fields = {"split": split, "image_id": image_id}
        source = ctx.name("png_copy", **fields) if use_copy else f"{split}/{image_id}.dicom"
        images[image_id] = Item(image_id, str(base / source), fields, link=use_copy)
    return _grouped_items(groups, images, _class_ids(names))


MAMMO_DERIVED_BOX = ("resized_xmin", "resized_ymin", "resized_xmax", "resized_ymax")
MAMMO_PHYSIONET_BOX = ("xmin", "ymin", "xmax", "ymax")


def _mammo(ctx, columns: tuple[str, ...], patient_column: str, image: str, link: bool) -> list[Item]:
    path, bad = _spec_path(ctx, "boxes"), _bad_rows(ctx)
    groups, images, names = defaultdict(list), {}, set()
    for number, row in _rows(path, ("image_id", patient_column, "finding_categories", "split", *columns)):
        if not (row[columns[0]] or "").strip():
            continue
        categories = _parsed(bad, finding_categories, path, number, row)
        if categories is None or categories == ["No Finding"]:
            continue
        names.update(c for c in categories if c != "No Finding")  # before the box is judged
        box = _parsed(bad, _box, path, number, row, columns)
        if box is None:
            continue
        image_id = row["image_id"].replace(".png", "")
        fields = {
            "image_id": image_id,
            "patient_id": row[patient_column],
            "split": "train" if row["split"] == "training" else "test",
        }
        images[image_id] = Item(image_id, str(ctx.raw_dir() / image.format(**fields)), fields, link=link)
        for category in categories:
            if category != "No Finding":
                groups[(image_id, category)].append(box)
    return _grouped_items(groups, images, _class_ids(names))


def finding_categories(path: Path, number: int, row: dict) -> list[str]:
    """The finding_categories cell: a Python list literal of names (single quotes), nothing else."""
    text = row["finding_categories"]
    try:
        categories = ast.literal_eval(text or "")
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        categories = None
    if not isinstance(categories, list) or not categories or not all(isinstance(c, str) for c in categories):
        raise RawDataError(
            f"{path} line {number}: finding_categories {text!r} is not a list of names like ['Mass']; fix the row"
        )
    return categories


def _vindr_mammo(ctx) -> list[Item]:
    return _mammo(ctx, MAMMO_DERIVED_BOX, "patient_id", "images_png/{patient_id}/{image_id}.png", link=True)


def _vindr_mammo_physionet(ctx) -> list[Item]:
    return _mammo(ctx, MAMMO_PHYSIONET_BOX, "study_id", "images/{patient_id}/{image_id}.dicom", link=False)


GOLD_BOX = ("original_x1", "original_y1", "original_x2", "original_y2")
MIMIC_IMAGE = "files/p{patient_id:.2}/p{patient_id}/s{study_id}/{image_id}.jpg"


def _chest_imagenome_gold(ctx) -> list[Item]:
    sentences = _spec_path(ctx, "gold_sentences", "chest_imagenome")
    placed = {}
    for _, row in _rows(sentences, ("image_id", "patient_id", "study_id"), delimiter="\t"):
        placed.setdefault(row["image_id"], row)  # the first row of an image places it
    path = _spec_path(ctx, "gold_boxes", "chest_imagenome")
    regions: dict[str, dict] = defaultdict(dict)
    rows = _rows(path, ("image_id", "bbox_name", *GOLD_BOX))
    class_ids = _class_ids(row["bbox_name"] for _, row in rows)  # every row's region, before any is judged
    for number, row in rows:
        box = _parsed(_bad_rows(ctx), _box, path, number, row, GOLD_BOX)
        if box is not None:
            regions[row["image_id"]][row["bbox_name"]] = box  # the last box wins
    mimic, items, unplaced = ctx.raw_dir("mimic_cxr_jpg"), [], []
    for image_id, found in regions.items():
        if image_id not in placed:
            unplaced.append(image_id)
            continue
        dicom_id = image_id.replace(".dcm", "")
        where = {"image_id": dicom_id, "patient_id": placed[image_id]["patient_id"]}
        source = mimic / MIMIC_IMAGE.format(study_id=placed[image_id]["study_id"], **where)
        crops = [(class_ids[name], 0, box) for name, box in found.items()]
        items.append(Item(dicom_id, str(source), {"image_id": dicom_id, "split": "test"}, crops))
    if unplaced:
        ctx.log(f"{len(unplaced)} gold images are not in {sentences.name} and have no crops (as in the reference)")
    return sorted(items, key=lambda item: item.image_id)


def _chest_imagenome_silver(ctx) -> list[Item]:
    """One item per image the subset's Train_Data JSONL names silver crops of (none without a JSONL)."""
    graphs = SceneGraphs(_spec_path(ctx, "scene_graphs", "chest_imagenome"), ctx.raw_file)
    wanted = trainlist.wanted(ctx.settings.data_basedir, ctx.registry, ctx.subset, ctx.params["crop"])
    if not wanted:
        ctx.log(f"{ctx.subset.key}: no Train_Data JSONL names a silver crop; nothing to build")
        return []
    if not graphs.members():  # every wanted crop would be "no box": an empty build is no build
        raise RawDataError(
            f"{graphs.path} holds no <dicom_id>{scenegraph.SUFFIX}: it is not Chest ImaGenome's scene_graph.zip "
            "(or its extracted folder); download silver_dataset/scene_graph.zip again"
        )
    names = ctx.params.get("classes") or graphs.names()
    by_image: dict[str, list] = defaultdict(list)
    for fields in wanted:
        by_image[fields["image_id"]].append(int(fields["class_id"]))
    _SILVER.update(graphs=graphs, names=sorted(set(names)))
    label = f"{graphs.path}: {{}}{scenegraph.SUFFIX}"
    return [
        Item(dicom, label.format(dicom), {"image_id": dicom, "split": "train"}, [(c, 0, None) for c in sorted(ids)])
        for dicom, ids in sorted(by_image.items())
    ]


_SILVER: dict = {}  # the scene graphs and the numbered region names of the running silver job


def _silver_outputs(ctx, item: Item):
    """The wanted crops of one image, boxes from its scene graph; a crop the graphs do not hold is logged."""
    graph, names = _SILVER["graphs"].read(item.image_id), _SILVER["names"]
    if graph is None:
        ctx.log(f"{item.source}: no such scene graph; its {len(item.crops)} wanted crops are not built")
        return
    found = scenegraph.regions(graph)
    pixels = _decode(str(ctx.raw_dir("mimic_cxr_jpg") / MIMIC_IMAGE.format(
        patient_id=str(graph.get("patient_id")), study_id=graph.get("study_id"), image_id=item.image_id
    )))  # fmt: skip
    height, width = pixels.shape[:2]
    for class_id, index, _ in item.crops:
        name = names[class_id] if class_id < len(names) else None
        if name not in found:
            ctx.log(f"{item.source}: no box for class {class_id} ({name or 'unknown'}); that crop is not built")
            continue
        box = tuple(max(0, int(float(v))) for v in found[name])
        x0, y0, x1, y1 = boxes.reference_crop(*box, width, height)
        crop = ctx.name("crop", **{**item.fields, "class_id": class_id, "index": index})
        yield Png(ctx.output_path(crop), pixels[y0:y1, x0:x1])


# The code of each recipe: the dataset folders' recipes.yaml declare the recipes and names these (their `code`).
VINDR_CXR = Recipe(_vindr_cxr)
VINDR_MAMMO = Recipe(_vindr_mammo)
VINDR_MAMMO_PHYSIONET = Recipe(_vindr_mammo_physionet, skip_for_processing=True)
CHEST_IMAGENOME_GOLD = Recipe(_chest_imagenome_gold)
CHEST_IMAGENOME_SILVER = Recipe(_chest_imagenome_silver, outputs=_silver_outputs)


# --- names ----------------------------------------------------------------------------------------------------


def _static_prefix(template: str) -> str:
    return template.split("{", 1)[0]


# --- building -------------------------------------------------------------------------------------------------


def plan(ctx) -> list[Item]:
    splits = set(ctx.params.get("splits", ("train", "test")))
    return [item for item in ctx.recipe["code"].plan(ctx) if item.fields["split"] in splits]


def _decode(path: str) -> np.ndarray:
    """Pixels in the file's own mode: 8-bit gray, 16-bit gray or RGB (other modes as a loader sees them)."""
    try:
        with Image.open(path) as image:
            if image.mode in ("L", "RGB"):
                return np.asarray(image)
            if image.mode.startswith("I"):
                pixels = np.asarray(image)
                if pixels.min() < 0 or pixels.max() > 65535:
                    raise RawDataError(f"{path}: {image.mode} pixels outside 0..65535; not a gray PNG")
                return pixels.astype(np.uint16)
            return np.asarray(image.convert("L" if image.mode in ("1", "LA") else "RGB"))
    except FileNotFoundError:
        raise RawDataError(f"{path}: missing; the annotations name this image, complete the copy") from None
    except OSError as exc:
        raise RawDataError(f"{path}: unreadable image ({exc}); replace the file") from None


def _pixels(ctx, item: Item, skip_for_processing: bool) -> np.ndarray | None:
    if os.path.lexists(item.source):  # a missing image has its own message below
        ctx.raw_file(item.source)
    if not item.source.endswith(".dicom"):
        return _decode(item.source)
    if not os.path.exists(item.source):
        raise RawDataError(f"{item.source}: missing; the annotations name this image, download it again")
    image = read_dicom(Path(item.source))
    if image.for_processing and skip_for_processing:
        ctx.log(f"skipped {item.source}: a FOR PROCESSING image (not meant for display), no query or crops")
        return None
    return image.pixels


def _outputs(ctx, item: Item, skip_for_processing: bool):
    pixels = _pixels(ctx, item, skip_for_processing)
    if pixels is None:
        return
    if "query" in ctx.params:
        query = ctx.output_path(ctx.name("query", **item.fields))
        yield HardLink(query, Path(item.source)) if item.link else Png(query, pixels)
    height, width = pixels.shape[:2]
    for class_id, index, box in item.crops:
        x0, y0, x1, y1 = boxes.reference_crop(*box, width, height)
        name = ctx.name("crop", **{**item.fields, "class_id": class_id, "index": index})
        yield Png(ctx.output_path(name), pixels[y0:y1, x0:x1])


def produce(ctx, items: list[Item]):
    chosen = ctx.recipe["code"]
    for item in items:
        if chosen.outputs is not None:
            yield Result(item.source, chosen.outputs(ctx, item), (item.source,))
        else:
            yield Result(item.source, _outputs(ctx, item, chosen.skip_for_processing), (item.source,))
