"""The authors' recipes re-stated plainly, for the conversions the demo's release has no oracle for (the ten
restricted subsets: the release may not ship their images, so preprocess/demo/release_images never makes them;
and the MedMNIST flags the demo leaves out, by the oracle's own rule).

Each recipe has the shape of a release oracle, `recipe(raw, named) -> Outputs`: raw(source_id) is the source's
raw folder, named the list of preprocess.demo.release_images.records.named(data_basedir, registry), and Outputs
maps each output name (relative to DATA_BASEDIR, equal to the pipeline's) to a zero-argument function giving
the file. A function gives bytes for a file that is the upstream's own bytes (the pipeline hard-links it), a
Pillow image for a file the scripts write with Pillow, or a `Link` for a symbolic link (the MIMIC-CXR and
CheXpert Plus image roots, which are links into the user's raw copy, not files).

`RECIPES` maps (subset key, conversion name) to its recipe, for the side-by-side benchmark to time next to the
pipeline's convert and a decode+encode floor; `VARIANT_RECIPES` adds the source variants the registry has
(VinDr-Mammo's PhysioNet DICOMs). benchmarks/check_recipes.py compares each with the pipeline's outputs.

Like the oracles, this module's own imports name none of preprocess.convert, preprocess.volumes or
preprocess.formats (the test of the oracles parses their imports in the same way): a comparison of the two is
a comparison of two statements of each rule. The rules are REFERENCE.md's (the
authors' scripts, `ziz-797/Processing_Code`), with one exception where the authors' input does not exist for a
user: VinDr-CXR's query PNGs, which the authors converted from the DICOMs by a route nobody published; the
recipe then states the pipeline's documented DICOM rule (docs/conversions/crops.md, "DICOM").
"""

from __future__ import annotations

import ast
import csv
import json
import re
import shutil
import tempfile
import zipfile
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
from PIL import Image

from preprocess.demo.release_images import medmnist
from preprocess.demo.release_images.outputs import Outputs, gray_or_rgb, raw_file

BENCHMARKS = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Link:
    """A symbolic link the recipe makes at its output name: `target` is the folder it points at. Two links
    are the same output when their targets resolve to the same folder."""

    target: Path


# --- boxes, as the VinDr and Chest ImaGenome grounding scripts handle them ------------------------------------
# A box is (x0, y0, x1, y1) with the max edge exclusive, as Pillow's crop takes it.

MIN_SIDE = 28  # the scripts' minimum crop side
MERGE_IOU, MERGE_CONTAINED = 0.5, 0.7  # merge two boxes at IoU >= 0.5, or >= 0.7 of the smaller one covered


def _coordinate(text: str) -> int:
    """A CSV cell as the scripts read a coordinate: int(float(v)), floored at 0."""
    return max(0, int(float(text)))


def _area(box) -> int:
    return max(0, box[2] - box[0]) * max(0, box[3] - box[1])  # an inverted box has no area


def _merge_wanted(a, b) -> bool:
    common = _area((max(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), min(a[3], b[3])))
    if common == 0:  # no overlap (and no division by an empty box's zero area)
        return False
    return common / (_area(a) + _area(b) - common) >= MERGE_IOU or common / min(_area(a), _area(b)) >= MERGE_CONTAINED


def merged(boxes: list) -> list:
    """The scripts' merge of one (image, class) group: find the first pair i < j, in list order, that overlaps
    enough, take both out, put their union at the END, and look again from the start until no pair merges.
    Crop k is the k-th box of what is left, so the order matters."""
    boxes = list(boxes)
    while True:
        pairs = ((i, j) for i in range(len(boxes)) for j in range(i + 1, len(boxes)))
        pair = next(((i, j) for i, j in pairs if _merge_wanted(boxes[i], boxes[j])), None)
        if pair is None:
            return boxes
        a, b = boxes[pair[0]], boxes[pair[1]]
        boxes = [box for k, box in enumerate(boxes) if k not in pair]
        boxes.append((min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3])))


def _window(low: int, high: int, limit: int) -> tuple[int, int]:
    """One axis of the scripts' minimum-size crop: the integer midpoint, a side of at least MIN_SIDE, moved
    inside [0, limit). An inverted or empty box gets a MIN_SIDE window around its midpoint too (never checked)."""
    side = max(high - low, MIN_SIDE)
    start = max(0, (low + high) // 2 - side // 2)
    end = min(limit, start + side)
    return max(0, end - side), end


def min_size_crop(image: Image.Image, box) -> Image.Image:
    x0, x1 = _window(box[0], box[2], image.width)
    y0, y1 = _window(box[1], box[3], image.height)
    return image.crop((x0, y0, x1, y1))


def _class_ids(names) -> dict[str, int]:
    """A class id is the position of its name in the sorted set of names."""
    return {name: index for index, name in enumerate(sorted(set(names)))}


def _crops(made: Outputs, name: str, image, groups: dict, class_ids: dict) -> None:
    """Crop k of each (class, boxes) group of one image, after the merge; `image()` gives the Pillow image,
    read once when the first crop is made."""
    for class_name, found in groups.items():
        for index, box in enumerate(merged(found)):
            crop = name.format(class_id=class_ids[class_name], index=index)
            made[crop] = lambda b=box: min_size_crop(image(), b)


def _once(read):
    """read() called on the first use only: an image shared by its query file and its crops."""
    cache = {}

    def value():
        if "v" not in cache:
            cache["v"] = read()
        return cache["v"]

    return value


def _png(path: Path) -> Image.Image:
    """A PNG as the scripts open it: Pillow's own mode (8- or 16-bit gray, RGB)."""
    image = Image.open(path)
    image.load()
    return image


# --- DICOM to 8 bits (VinDr-CXR's query images; VinDr-Mammo's PhysioNet route) ---------------------------------


def _first(value) -> float:
    """A header number, or the first of a multi-valued one (several VOI windows: the first is the default)."""
    from pydicom.multival import MultiValue

    return float(value[0] if isinstance(value, MultiValue) else value)


def dicom_pixels(path: Path) -> np.ndarray:
    """The pipeline's documented DICOM rule (docs/conversions/crops.md, "DICOM"), which the authors cannot
    give: their PNG copy of VinDr-CXR came from a conversion they did not publish. pydicom decodes (JPEG 2000
    through the pylibjpeg plug-ins), the rescale slope and intercept are applied; the first VOI window (first
    value of a multi-valued centre and width) maps linearly to 0..255 as DICOM PS3.3 C.11.2.1.2 defines it,
    or, without a window (or one narrower than 1), the 0.5th-99.5th percentiles of the non-padding pixels do;
    MONOCHROME1 is inverted (air dark, bone bright) before the truncation to uint8 (255 - s, then the floor:
    inverting after the floor would move some pixels by one), padding pixels are 0."""
    import pydicom

    dataset = pydicom.dcmread(str(path))
    stored = dataset.pixel_array
    values = stored.astype(np.float64) * float(dataset.get("RescaleSlope", 1) or 1)
    values += float(dataset.get("RescaleIntercept", 0) or 0)
    padding = dataset.get("PixelPaddingValue")
    real = np.ones(stored.shape, bool) if padding in (None, "") else stored != int(padding)
    centres, widths = dataset.get("WindowCenter"), dataset.get("WindowWidth")
    if centres not in (None, "") and widths not in (None, "") and _first(widths) >= 1:
        centre, width = _first(centres), _first(widths)
        low, high = centre - 0.5 - (width - 1) / 2, centre - 0.5 + (width - 1) / 2
    else:
        low, high = np.percentile(values[real] if real.any() else values, [0.5, 99.5])
    scaled = (np.clip(values, low, high) - low) / (high - low) * 255.0 if high > low else np.zeros(values.shape)
    if str(dataset.get("PhotometricInterpretation", "MONOCHROME2")).strip() == "MONOCHROME1":
        scaled = 255.0 - scaled
    scaled[~real] = 0
    return scaled.astype(np.uint8)


def _for_processing(path: Path) -> bool:
    """Whether the header (read without the pixels) says the image is FOR PROCESSING, not for display."""
    import pydicom

    dataset = pydicom.dcmread(str(path), stop_before_pixels=True)
    said = [str(dataset.get("PresentationIntentType", "")), *(str(v) for v in dataset.get("ImageType") or [])]
    return "FOR PROCESSING" in " ".join(said).upper()


def _dicom_image(path: Path) -> Image.Image:
    return gray_or_rgb(dicom_pixels(path))


# --- VinDr-CXR (REFERENCE.md "VinDr-CXR") -----------------------------------------------------------------------

VINDR_CXR = "2D_Images/VindrCXR"


def _vindr_cxr(raw, splits: set[str]) -> Outputs:
    """Both annotation files (train, then test) give the class ids and the groups; the wanted splits' images
    give a query PNG and their crops. The query image is the user's full-resolution PNG copy when they have one
    (the file itself, as the authors used theirs), else the DICOM converted (dicom_pixels)."""
    base = raw("vindr_cxr")
    groups, split_of = defaultdict(lambda: defaultdict(list)), {}
    for split in ("train", "test"):
        with open(base / "annotations" / f"annotations_{split}.csv", newline="", encoding="utf-8-sig") as handle:
            for row in csv.DictReader(handle):
                if row["class_name"] == "No finding" or not (row["x_min"] or "").strip():
                    continue
                box = tuple(_coordinate(row[c]) for c in ("x_min", "y_min", "x_max", "y_max"))
                groups[row["image_id"]][row["class_name"]].append(box)
                split_of[row["image_id"]] = split
    class_ids = _class_ids(name for found in groups.values() for name in found)
    copy = base / "VinDr-CXR-dataset" / "ai-vinbigdata"
    made = {}
    for image_id, found in groups.items():
        split = split_of[image_id]
        if split not in splits:
            continue
        query = f"{VINDR_CXR}/VinDr-CXR-dataset/ai-vinbigdata/{split}/{image_id}.png"
        if copy.is_dir():
            made[query] = raw_file(copy / split / f"{image_id}.png")
            image = _once(lambda p=copy / split / f"{image_id}.png": _png(p))
        else:
            image = _once(lambda p=base / split / f"{image_id}.dicom": _dicom_image(p))
            made[query] = image
        _crops(made, f"{VINDR_CXR}/crop/{image_id}_{{class_id}}_{{index}}.png", image, found, class_ids)
    return made


def vindr_cxr_test(raw, named) -> Outputs:
    return _vindr_cxr(raw, {"test"})


def vindr_cxr_train(raw, named) -> Outputs:
    return _vindr_cxr(raw, {"train"})


# --- VinDr-Mammo (REFERENCE.md "VinDr-Mammo") -------------------------------------------------------------------

VINDR_MAMMO = "2D_Images/VindrMammo"


def _mammo_rows(table: Path, box_columns: tuple[str, ...], patient_column: str):
    """(image_id, patient_id, split, categories, box) of each row with a box and a finding; and every listed
    category name (the class ids number them all, as the script collects them)."""
    rows, names = [], set()
    with open(table, newline="", encoding="utf-8-sig") as handle:
        for row in csv.DictReader(handle):
            if not (row[box_columns[0]] or "").strip():
                continue
            categories = [c for c in ast.literal_eval(row["finding_categories"]) if c != "No Finding"]
            if not categories:
                continue
            names.update(categories)
            box = tuple(_coordinate(row[c]) for c in box_columns)
            split = "train" if row["split"] == "training" else "test"
            rows.append((row["image_id"].replace(".png", ""), row[patient_column], split, categories, box))
    return rows, names


def _mammo(rows, names, splits: set[str], read, query_bytes) -> Outputs:
    """One query image per image_id and a crop per (category, merged box); read(patient, image) gives the
    Pillow image, query_bytes(patient, image) the query file's bytes when it is the upstream's own (else None:
    the query is the image itself)."""
    groups, patients, split_of = defaultdict(lambda: defaultdict(list)), {}, {}
    for image_id, patient, split, categories, box in rows:
        patients[image_id], split_of[image_id] = patient, split  # an image's last row says both, as in the script
        for category in categories:
            groups[image_id][category].append(box)
    class_ids, made = _class_ids(names), {}
    for image_id, found in groups.items():
        if split_of[image_id] not in splits:
            continue
        patient = patients[image_id]
        image = _once(lambda p=patient, i=image_id: read(p, i))
        query = f"{VINDR_MAMMO}/images_png/{patient}/{image_id}.png"
        made[query] = query_bytes(patient, image_id) or image
        _crops(made, f"{VINDR_MAMMO}/crop/{image_id}_{{class_id}}_{{index}}.png", image, found, class_ids)
    return made


def _vindr_mammo_derived(raw, splits: set[str]) -> Outputs:
    """The Mammo-CLIP PNG copy the authors cut from: resized_* boxes, the PNG kept as it is."""
    base = raw("vindr_mammo")
    columns = ("resized_xmin", "resized_ymin", "resized_xmax", "resized_ymax")
    rows, names = _mammo_rows(base / "vindr_detection_v1_folds.csv", columns, "patient_id")
    png = lambda patient, image_id: base / "images_png" / patient / f"{image_id}.png"  # noqa: E731
    return _mammo(rows, names, splits, lambda p, i: _png(png(p, i)), lambda p, i: raw_file(png(p, i)))


def _vindr_mammo_physionet(raw, splits: set[str]) -> Outputs:
    """The PhysioNet DICOMs (a source variant): the original boxes, study_id in place of patient_id, the DICOM
    converted by dicom_pixels and FOR PROCESSING images left out. Not the authors' pixels: the Mammo-CLIP copy's
    resize is not known, so this states the pipeline's documented route, not a reference rule."""
    base = raw("vindr_mammo")
    rows, names = _mammo_rows(base / "finding_annotations.csv", ("xmin", "ymin", "xmax", "ymax"), "study_id")
    dicom = lambda study, image_id: base / "images" / study / f"{image_id}.dicom"  # noqa: E731
    shown = [row for row in rows if not _for_processing(dicom(row[1], row[0]))]
    return _mammo(shown, names, splits, lambda s, i: _dicom_image(dicom(s, i)), lambda s, i: None)


def vindr_mammo_test(raw, named) -> Outputs:
    return _vindr_mammo_derived(raw, {"test"})


def vindr_mammo_train(raw, named) -> Outputs:
    return _vindr_mammo_derived(raw, {"train"})


def vindr_mammo_physionet_test(raw, named) -> Outputs:
    return _vindr_mammo_physionet(raw, {"test"})


def vindr_mammo_physionet_train(raw, named) -> Outputs:
    return _vindr_mammo_physionet(raw, {"train"})


# --- Chest ImaGenome (REFERENCE.md "Chest ImaGenome") -----------------------------------------------------------

CHEST = "2D_Images/ChestImagrome"


def _mimic_jpg(raw, patient_id: str, study_id: str, dicom_id: str) -> Path:
    return raw("mimic_cxr_jpg") / "files" / f"p{patient_id[:2]}" / f"p{patient_id}" / f"s{study_id}" / f"{dicom_id}.jpg"


def chest_imagenome_gold(raw, named) -> Outputs:
    """The gold boxes on the MIMIC-CXR-JPG image the sentences file places (its first row of an image); a
    region annotated twice keeps its last box (the script's dict overwrites it); class ids over the sorted
    region names of every row. Images the sentences file does not place get no crops."""
    base = raw("chest_imagenome") / "gold_dataset"
    placed = {}
    with open(base / "gold_all_sentences_500pts_1000studies.txt", newline="", encoding="utf-8-sig") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            placed.setdefault(row["image_id"], row)
    regions, names = defaultdict(dict), set()
    with open(base / "gold_bbox_coordinate_annotations_1000images.csv", newline="", encoding="utf-8-sig") as handle:
        for row in csv.DictReader(handle):
            names.add(row["bbox_name"])
            box = tuple(_coordinate(row[c]) for c in ("original_x1", "original_y1", "original_x2", "original_y2"))
            regions[row["image_id"]][row["bbox_name"]] = box
    class_ids, made = _class_ids(names), {}
    for image_id, found in regions.items():
        if image_id not in placed:
            continue
        dicom_id = image_id.replace(".dcm", "")
        path = _mimic_jpg(raw, placed[image_id]["patient_id"], placed[image_id]["study_id"], dicom_id)
        image = _once(lambda p=path: _png(p))  # a JPEG, opened as the scripts open it
        for region, box in found.items():
            made[f"{CHEST}/gold_crop/{dicom_id}_{class_ids[region]}_0.png"] = lambda b=box, i=image: min_size_crop(
                i(), b
            )
    return made


SCENE_GRAPH = "_SceneGraph.json"


def _scene_graphs(base: Path) -> dict[str, object]:
    """dicom id -> a function giving its scene graph, from silver_dataset/scene_graph.zip, or from the folder
    it was extracted to (its JSONs flat, or one level deeper)."""
    archive = base / "silver_dataset" / "scene_graph.zip"
    if archive.is_file():
        handle = zipfile.ZipFile(archive)
        members = [n for n in handle.namelist() if n.endswith(SCENE_GRAPH)]
        return {n.rsplit("/", 1)[-1][: -len(SCENE_GRAPH)]: (lambda n=n: json.loads(handle.read(n))) for n in members}
    folder = base / "silver_dataset" / "scene_graph"
    if (folder / "scene_graph").is_dir() and not any(folder.glob(f"*{SCENE_GRAPH}")):
        folder = folder / "scene_graph"
    return {
        p.name[: -len(SCENE_GRAPH)]: (lambda p=p: json.loads(p.read_text(encoding="utf-8")))
        for p in folder.glob(f"*{SCENE_GRAPH}")
    }


def _boxed(graph: dict) -> dict[str, tuple]:
    """Region name -> its original box: the last object of a region, when none of its four values is null."""
    found = {}
    for obj in graph.get("objects", []):
        found[obj.get("bbox_name")] = obj
    corners = ("original_x1", "original_y1", "original_x2", "original_y2")
    return {
        name: tuple(obj[c] for c in corners)
        for name, obj in found.items()
        if name is not None and all(obj.get(c) is not None for c in corners)
    }


def _silver_asked(named, regions: list[str]):
    """(dicom id, region name) of each Train_Data record that asks for a region of a Chest ImaGenome image: its
    query image is the MIMIC-CXR-JPG file, its question ends with the region's name (the longest that fits).
    `named` lists a record's query image with its question, not the crop it points at (its positive image),
    so the crop is found as the authors made it: the image's region."""
    longest_first = sorted(regions, key=len, reverse=True)
    for one in named:
        if one.side != "train" or not one.path.startswith(f"{CHEST}/") or not one.path.endswith(".jpg"):
            continue
        question = " ".join(str(one.question or "").lower().split())
        region = next((r for r in longest_first if question.endswith(r.lower())), None)
        if region is not None:
            yield Path(one.path).stem, region


def chest_imagenome_silver(raw, named) -> Outputs:
    """The authors sampled their silver crops over an unordered listing (not reproducible), so the crops are
    the ones the Train_Data JSONL asks for; class ids number the sorted region names of all scene graphs
    (objects with a box), the crop rule is the gold one, on the image of the graph's patient_id and study_id."""
    graphs = _scene_graphs(raw("chest_imagenome"))
    names = set()
    for read in graphs.values():
        names.update(o["bbox_name"] for o in read().get("objects", []) if o.get("original_x1") is not None)
    class_ids, made = _class_ids(names), {}
    for dicom, region in _silver_asked(named, sorted(names)):
        graph = graphs[dicom]() if dicom in graphs else {}
        box = _boxed(graph).get(region)
        if box is None:
            continue  # a crop the scene graphs do not hold: nothing to cut
        path = _mimic_jpg(raw, str(graph["patient_id"]), str(graph["study_id"]), dicom)
        box = tuple(_coordinate(v) for v in box)  # as the gold rows: int(float(v)), floored at 0
        name = f"{CHEST}/silver_sample_crop/{dicom}_{class_ids[region]}_0.png"
        made[name] = lambda p=path, b=box: min_size_crop(_png(p), b)
    return made


# --- links (REFERENCE.md "Image folders ... and the MIMIC-CXR links") -------------------------------------------

MIMIC_LINKS = {"files": "files", **{f"p{n}": f"files/p{n}" for n in range(10, 20)}}


def _mimic_links(folder: str):
    """The benchmark README's set-up by hand: `files` and p10 .. p19 in the image root, linked into the user's
    one MIMIC-CXR-JPG copy."""

    def recipe(raw, named) -> Outputs:
        base = raw("mimic_cxr_jpg")
        return {f"2D_Images/{folder}/{name}": (lambda t=base / target: Link(t)) for name, target in MIMIC_LINKS.items()}

    recipe.__name__ = recipe.__qualname__ = "mimic_links_" + re.sub(r"\W", "_", folder).lower()
    return recipe


def chexpert_plus_png(raw, named) -> Outputs:
    """The image root png/ is the download's PNG/ folder, linked (the level that holds train/ or valid/: its
    chunks unzipped one level deeper give PNG/PNG/)."""
    target = raw("chexpert_plus") / "PNG"
    if not any((target / split).is_dir() for split in ("train", "valid")) and (target / "PNG").is_dir():
        target = target / "PNG"
    return {"2D_Images/chexpert_plus/png": lambda: Link(target)}


# --- RadImageNet-VQA (the release's records name the images; docs/conversions/record-driven.md) -----------------

RADIMAGENET = "2D_Images/RadImageNet-VQA"


def _plain(text) -> str:
    """A question or answer as both sides agree on it: no image tag, no trailing choice list, no leading
    choice letter ("B. "), one case, single spaces."""
    text = re.sub(r"<image>|<\|image_\d+\|>", " ", str(text or ""))
    text = re.split(r"\s*\bChoices:", text, maxsplit=1)[0]
    text = re.sub(r"^\s*[A-Z]\.\s+", "", text)
    return " ".join(text.lower().split())


def _benchmark_rows(paths) -> dict[tuple[str, str], set[bytes]]:
    """(question, accepted answer) -> the images of the benchmark rows that accept it: the row's answer, its
    metadata.correct_text, and for a letter answer the choice it names."""
    found = defaultdict(set)
    for path in paths:
        table = pq.read_table(path, columns=["image", "question", "choices", "answer", "metadata"])
        for cell, question, choices, answer, metadata in zip(*(c.to_pylist() for c in table.columns), strict=True):
            accepted = {answer, (metadata or {}).get("correct_text")}
            if choices and len(answer or "") == 1 and "A" <= answer <= chr(ord("A") + len(choices) - 1):
                accepted.add(choices[ord(answer) - ord("A")])
            for one in accepted - {None}:
                found[(_plain(question), _plain(one))].add(bytes(cell["bytes"]))
    return found


def _alignment_rows(paths) -> dict[tuple[str, str], set[bytes]]:
    """(human prompt, caption) -> the images of the alignment rows with that conversation."""
    found = defaultdict(set)
    for path in paths:
        table = pq.read_table(path, columns=["image", "conversations"])
        for cell, turns in zip(*(c.to_pylist() for c in table.columns), strict=True):
            human = next((t["value"] for t in turns if t["from"] == "human"), None)
            caption = next((t["value"] for t in turns if t["from"] == "gpt"), None)
            found[(_plain(human), _plain(caption))].add(bytes(cell["bytes"]))
    return found


def _radimagenet(raw, named, side: str, prefix: str, rows) -> Outputs:
    """Each named path is the one image that every record naming it (its question and answer) allows; a path
    that several images, or none, fit is left out (a bad item, never a guess). `named` gives a record's first
    answer only, not its list of candidates, so the choice lists are not compared: the intersection over the
    path's records decides."""
    asked = defaultdict(list)
    for one in named:
        if one.side == side and one.path.startswith(prefix) and one.question is not None:
            asked[one.path].append((_plain(one.question), _plain(one.answer)))
    made = {}
    for path, pairs in asked.items():
        fits = set.intersection(*(rows.get(pair, set()) for pair in pairs))
        if len(fits) == 1:
            image = fits.pop()
            made[path] = lambda data=image: data  # the parquet's bytes, never re-encoded
    return made


def radimagenet_test(raw, named) -> Outputs:
    rows = _benchmark_rows(sorted((raw("radimagenet_vqa") / "benchmark").glob("test-*.parquet")))
    return _radimagenet(raw, named, "test", f"{RADIMAGENET}/test/", rows)


def radimagenet_train(raw, named) -> Outputs:
    rows = _alignment_rows(sorted((raw("radimagenet_vqa") / "alignment").glob("train-*.parquet")))
    return _radimagenet(raw, named, "train", f"{RADIMAGENET}/train/", rows)


# --- MRNet (REFERENCE.md "MRNet") -------------------------------------------------------------------------------


def _mrnet_slice(plane: np.ndarray) -> np.ndarray:
    """uint8 as stored; any other type min-max scaled per slice, truncated (a flat slice is black)."""
    if plane.dtype == np.uint8:
        return plane
    low, high = plane.min(), plane.max()
    return ((plane - low) / (high - low) * 255.0).astype(np.uint8) if high > low else np.zeros(plane.shape, np.uint8)


def _mrnet(raw, split: str) -> Outputs:
    """10 slices along axis 0 (floor of linspace; all when 10 or fewer), named by position and index, under
    {split}_images/ (the image root of valid; train by the same pattern [I])."""
    made = {}
    for plane in ("axial", "coronal", "sagittal"):
        for path in sorted((raw("mrnet") / "MRNet-v1.0" / split / plane).glob("*.npy")):
            volume = _once(lambda p=path: np.load(p))
            count = np.load(path, mmap_mode="r").shape[0]  # the header only: the names need the slice count
            picks = range(count) if count <= 10 else np.linspace(0, count - 1, 10).astype(int)
            folder = f"3D_Images/MRNet/{split}_images/{plane}/{path.stem}"
            for k, index in enumerate(picks):
                name = f"{folder}/slice_{k:02d}_orig_{int(index):03d}.png"
                made[name] = lambda v=volume, i=int(index): gray_or_rgb(_mrnet_slice(v()[i]))
    return made


def mrnet_test(raw, named) -> Outputs:
    return _mrnet(raw, "valid")


def mrnet_train(raw, named) -> Outputs:
    return _mrnet(raw, "train")


# --- CT-RATE: benchmarks/volume_path.py's re-statement, run as it is ---------------------------------------------


def _authors_ct_rate():
    """slices(path, folder) and drr(path, folder), the two CT-RATE scripts' steps as volume_path.py re-states
    them (its AUTHORS program, whose part before the command line defines them): one statement of the rule,
    timed there and checked here. The program text is read out of volume_path.py's source rather than by
    importing the module, which would need benchmarks/ on sys.path (for its sibling `timing`) and would import
    the pipeline's raw-file register for its own set-up: neither is part of the recipe."""
    tree = ast.parse((BENCHMARKS / "volume_path.py").read_text(encoding="utf-8"))
    program = next(
        node.value.value
        for node in tree.body
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["AUTHORS"]
    )
    definitions = program.split("\nout = Path(sys.argv[1])", 1)[0]
    namespace: dict = {}
    exec(compile(definitions, "volume_path.AUTHORS", "exec"), namespace)  # our own program text: volume_path.py's
    return namespace["slices"], namespace["drr"]


def _ct_rate(raw, split: str) -> Outputs:
    """Every dataset/{split}_fixed/<case>/<scan>/<scan>_1.nii.gz: 64 slices and the AP DRR; both are written by
    the re-stated scripts into a scratch folder on the first use of a scan and read back. So a timing of these
    outputs counts the scripts' own PNG writes plus one decode of each (and the caller's write on top):
    volume_path.py times the same program as a whole process, without those extra steps."""
    slices, drr = _authors_ct_rate()
    made = {}
    for path in sorted((raw("ct_rate") / "dataset" / f"{split}_fixed").glob("*/*/*_1.nii.gz")):
        scan = path.parent.name

        def run(path=path):
            scratch = Path(tempfile.mkdtemp(prefix="ct_rate_recipe_"))
            try:
                slices(str(path), scratch / "sliced")
                drr(str(path), scratch / "drr")
                return {p.relative_to(scratch).as_posix(): _png(p) for p in scratch.rglob("*.png")}
            finally:
                shutil.rmtree(scratch)

        images = _once(run)
        for k in range(64):
            name = f"slice_{k:03d}.png"
            made[f"3D_Images/CT_RATE/{split}_fixed_sliced/{scan}/{name}"] = lambda i=images, n=name: i()[f"sliced/{n}"]
        made[f"3D_Images/CT_RATE/{split}_fixed_drr/{scan}/drr_ap.png"] = lambda i=images: i()["drr/drr_ap.png"]
    return made


def ct_rate_test(raw, named) -> Outputs:
    return _ct_rate(raw, "valid")


def ct_rate_train(raw, named) -> Outputs:
    return _ct_rate(raw, "train")


# --- MedMNIST flags the demo's release leaves out: the oracle's rule, at 224 px (2D) and 64 (3D) ---------------

MEDMNIST_2D = {  # subset -> (npz, folder, the MedMNIST label names (its INFO), multi-label)
    "2D_Task/DermaMNIST": ("dermamnist_224.npz", "DermaMNIST", [
        "actinic keratoses and intraepithelial carcinoma", "basal cell carcinoma", "benign keratosis-like lesions",
        "dermatofibroma", "melanoma", "melanocytic nevi", "vascular lesions"], False),
    "2D_Task/OCTMNIST": ("octmnist_224.npz", "OCTMNIST", [
        "choroidal neovascularization", "diabetic macular edema", "drusen", "normal"], False),
    "2D_Task/OrganCMNIST": ("organcmnist_224.npz", "OrganCMNIST", medmnist.ORGAN, False),
    "2D_Task/OrganSMNIST": ("organsmnist_224.npz", "OrganSMNIST", medmnist.ORGAN, False),
    "2D_Task/PathMNIST": ("pathmnist_224.npz", "PathMNIST", [
        "adipose", "background", "debris", "lymphocytes", "mucus", "smooth muscle", "normal colon mucosa",
        "cancer-associated stroma", "colorectal adenocarcinoma epithelium"], False),
    "2D_Task/TissueMNIST": ("tissuemnist_224.npz", "TissueMNIST", [
        "Collecting Duct, Connecting Tubule", "Distal Convoluted Tubule", "Glomerular endothelial cells",
        "Interstitial endothelial cells", "Leukocytes", "Podocytes", "Proximal Tubule Segments",
        "Thick Ascending Limb"], False),
}  # fmt: skip
MEDMNIST_3D = {
    "3D_Task/NoduleMNIST": ("nodulemnist3d_64.npz", "NoduleMNIST"),
    "3D_Task/SynapseMNIST": ("synapsemnist3d_64.npz", "SynapseMNIST"),
}


def _medmnist_2d(entry):
    return lambda raw, named: medmnist.flag_2d(raw, *entry)


def _medmnist_3d(entry):
    return lambda raw, named: medmnist.flag_3d(raw, *entry)


RECIPES = {
    **{(key, "npz_unpack_2d"): _medmnist_2d(entry) for key, entry in MEDMNIST_2D.items()},
    **{(key, "npz_slices_3d"): _medmnist_3d(entry) for key, entry in MEDMNIST_3D.items()},
    ("2D_Task/VindrCXR", "annotation_crop"): vindr_cxr_test,
    ("2D_Task/VindrCXR", "annotation_crop_train"): vindr_cxr_train,
    ("2D_Task/VindrMammo", "annotation_crop"): vindr_mammo_test,
    ("2D_Task/VindrMammo", "annotation_crop_train"): vindr_mammo_train,
    ("2D_Task/ChestImagrome", "gold_crops"): chest_imagenome_gold,
    ("2D_Task/ChestImagrome", "silver_crops"): chest_imagenome_silver,
    ("2D_Task/ChestImagrome", "mimic_links"): _mimic_links("ChestImagrome"),
    ("2D_Task/ChexpertPlus", "png_link"): chexpert_plus_png,
    ("2D_Task/MIMIC-CXR-Report", "symlink_farm"): _mimic_links("MIMIC-CXR-Report"),
    ("2D_Task/MIMIC-CXR-T", "symlink_farm"): _mimic_links("MIMIC-CXR-T"),
    ("2D_Task/MIMIC-CXR-VQA", "symlink_farm"): _mimic_links("MIMIC-CXR-VQA"),
    ("2D_Task/RadImageNet-VQA", "parquet_records"): radimagenet_test,
    ("2D_Task/RadImageNet-VQA", "parquet_records_train"): radimagenet_train,
    ("3D_Task/MRNet", "volume_slices"): mrnet_test,
    ("3D_Task/MRNet", "volume_slices_train"): mrnet_train,
    ("3D_Task/CT_RATE", "volumes"): ct_rate_test,
    ("3D_Task/CT_RATE", "volumes_train"): ct_rate_train,
}

# (subset key, conversion name, source variant) -> recipe, for the routes a source variant selects
# (sources.yaml `variant`; config `source_variants: {vindr_mammo: physionet}`).
VARIANT_RECIPES = {
    ("2D_Task/VindrMammo", "annotation_crop", "physionet"): vindr_mammo_physionet_test,
    ("2D_Task/VindrMammo", "annotation_crop_train", "physionet"): vindr_mammo_physionet_train,
}
