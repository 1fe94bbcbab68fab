"""Real-size fakes: the demo's trees, names and side files, with N items per source at the upstream's real
dimensions, dtypes, bit depths, compression and file organisation (benchmarks/item_costs.py measures the
conversions on them; docs/benchmarks.md lists each size and where it comes from).

The demo is written first (every source present, the literal release tree); then each source of SIZES has its
raw folder written again with N real-size items through the demo's own helpers (DICOM, NIfTI, NRRD, npz,
parquet and zip writers), and the subsets whose outputs the release's records name get task JSONs naming
those items. Pixel content comes from preprocess/demo/fields.py (smooth fields plus noise, seeded), so
compressed sizes are realistic. Big: a few GB at --items 20; made at run time, never committed.
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import numpy as np
import yaml

from preprocess.demo import fields
from preprocess.demo.annotations import GOLD_HEADER, MAMMO_HEADER, _dicom
from preprocess.demo.real_archives import (
    medpix,
    omnimedvqa,
    pannuke,
    pathvqa,
    pmc_vqa,
    radimagenet_vqa,
    roco_qa,
    vqa_rad,
)
from preprocess.demo.real_files import encoded, item_id, put
from preprocess.demo.real_npz import medmnist, medmnist3d, medsegbench, write_variant_configs
from preprocess.demo.real_sizes import SIZES
from preprocess.demo.real_volumes import (
    brats_men,
    brats_ped,
    cirrmri600,
    ct_rate,
    hanseg,
    mmdental,
    mrnet,
    radgenome,
    synthrad,
)
from preprocess.formats import textparse
from preprocess.rawdata.register import observed_files
from preprocess.registry import layout
from preprocess.registry.loader import load_registry

# --- DICOM and box tables -----------------------------------------------------------------------------------


def _xray_dicom(path: Path, k: int, shape: tuple[int, int]) -> None:
    """Even items 12 bits uncompressed, odd ones 14 bits JPEG 2000 lossless (both occur upstream)."""
    from pydicom.uid import JPEG2000Lossless

    bits = 12 if k % 2 == 0 else 14
    _dicom(path, fields.xray(shape, k, bits), compress=None if k % 2 == 0 else JPEG2000Lossless, bits=bits)


def vindr_cxr(base: Path, n: int, seed: int) -> dict:
    shape = (2880, 2400)
    ids = [item_id("vindr_cxr", seed, k) for k in range(n)]
    rows, labels = [], []
    for k, image_id in enumerate(ids):
        _xray_dicom(base / "test" / f"{image_id}.dicom", seed + k, shape)
        for part, name in enumerate(("Nodule/Mass", "Cardiomegaly", "Aortic enlargement")):
            x0, y0, x1, y1 = fields.box(seed + k, *shape, part)
            rows.append(f"{image_id},{name},{x0},{y0},{x1},{y1}")
        labels.append(f"{image_id},1,0")
    put(
        base / "annotations" / "annotations_test.csv",
        "image_id,class_name,x_min,y_min,x_max,y_max\n" + "\n".join(rows) + "\n",
    )
    put(base / "annotations" / "annotations_train.csv", "image_id,rad_id,class_name,x_min,y_min,x_max,y_max\n")
    put(
        base / "annotations" / "image_labels_test.csv",
        "image_id,Nodule/Mass,Other disease\n" + "\n".join(labels) + "\n",
    )
    put(base / "annotations" / "image_labels_train.csv", "image_id,rad_id,Calcification,Other diseases\n")
    return {}


def vindr_mammo(base: Path, n: int, seed: int) -> dict:
    """Both copies in the one raw folder, as a user with both has it: the Mammo-CLIP PNGs and table (the
    default variant) and the PhysioNet DICOMs and finding_annotations.csv (source_variants: physionet)."""
    png, dicom = (1520, 912), (3518, 2800)
    patient, study = item_id("patient", seed), item_id("study", seed)
    derived, physionet = [], []
    for k in range(n):
        image_id = item_id("vindr_mammo", seed, k)
        gray = (fields.xray(png, seed + k, 16) >> 8).astype(np.uint8)
        put(base / "images_png" / patient / f"{image_id}.png", encoded(gray, "PNG"))
        _xray_dicom(base / "images" / study / f"{image_id}.dicom", seed + k, dicom)
        x0, y0, x1, y1 = fields.box(seed + k, *dicom)
        sy, sx = png[0] / dicom[0], png[1] / dicom[1]
        common = f"{study},s1,{image_id},L,CC,{dicom[0]},{dicom[1]},BI-RADS 4,DENSITY C,\"['Mass']\",BI-RADS 4"
        derived.append(
            f"{common},{x0},{y0},{x1},{y1},test,{patient},0,{x0 * sx:.1f},{y0 * sy:.1f},{x1 * sx:.1f},{y1 * sy:.1f}"
        )
        physionet.append(f"{common},{x0},{y0},{x1},{y1},test")
    put(base / "vindr_detection_v1_folds.csv", MAMMO_HEADER + "\n" + "\n".join(derived) + "\n")
    header = MAMMO_HEADER.split(",patient_id")[0]
    put(base / "finding_annotations.csv", header + "\n" + "\n".join(physionet) + "\n")
    return {}


MIMIC_SHAPE = (3056, 2544)
REGIONS = [
    "right lung", "left lung", "cardiac silhouette", "trachea", "right hilar structures", "left hilar structures",
    "mediastinum", "spine", "right clavicle", "left clavicle",
]  # fmt: skip


def _mimic_images(n: int, seed: int) -> list[tuple[str, str, str, str]]:
    """(group, patient, study, dicom) of n MIMIC-CXR-JPG images, two per study."""
    images = []
    for k in range(n):
        patient = 10000000 + seed * 1000 + k // 2
        images.append(
            (f"p{str(patient)[:2]}", f"p{patient}", f"s{50000000 + seed * 1000 + k // 2}", item_id("mimic", seed, k))
        )
    return images


def mimic_cxr_jpg(base: Path, n: int, seed: int) -> dict:
    for group in range(10, 20):
        (base / "files" / f"p{group}").mkdir(parents=True, exist_ok=True)
    images = _mimic_images(n, seed)
    for k, (group, patient, study, dicom) in enumerate(images):
        gray = (fields.xray(MIMIC_SHAPE, seed + k, 16) >> 8).astype(np.uint8)
        put(base / "files" / group / patient / study / f"{dicom}.jpg", encoded(gray, "JPEG"))
    rows = "".join(f"{d},{s[1:]},{p[1:]},test\n" for _, p, s, d in images)
    put(
        base / "mimic-cxr-2.0.0-split.csv.gz",
        gzip.compress(f"dicom_id,study_id,subject_id,split\n{rows}".encode(), mtime=0),
    )
    return {}


def chest_imagenome(base: Path, n: int, seed: int) -> dict:
    """Gold boxes and silver scene graphs on the images mimic_cxr_jpg writes (same n and seed)."""
    import zipfile

    height, width = MIMIC_SHAPE
    gold, sentences = [], ["patient_id\tstudy_id\timage_id\tsentence"]
    (base / "silver_dataset").mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(base / "silver_dataset" / "scene_graph.zip", "w", zipfile.ZIP_DEFLATED) as archive:
        for k, (_, patient, study, dicom) in enumerate(_mimic_images(n, seed)):
            objects = []
            for part, region in enumerate(REGIONS):
                x0, y0, x1, y1 = fields.box(seed + k, height, width, part)
                gold.append(
                    f"{dicom}.dcm,0,0,0,0,224,224,{region},{k * 10 + part},{x0},{x1},{y0},{y1},{width},{height},1,,"
                )
                objects.append({"object_id": f"{dicom}_{region}", "bbox_name": region, "name": region,
                                "original_x1": x0, "original_y1": y0, "original_x2": x1, "original_y2": y1,
                                "original_width": width, "original_height": height})  # fmt: skip
            sentences.append(f"{patient[1:]}\t{study[1:]}\t{dicom}.dcm\tLungs are clear.")
            graph = {"image_id": dicom, "viewpoint": "PA", "patient_id": int(patient[1:]), "study_id": int(study[1:]),
                     "objects": objects, "attributes": [], "relationships": []}  # fmt: skip
            member = zipfile.ZipInfo(f"scene_graph/{dicom}_SceneGraph.json", date_time=(2021, 7, 1, 0, 0, 0))
            archive.writestr(member, json.dumps(graph, indent=2), zipfile.ZIP_DEFLATED)
    put(
        base / "gold_dataset" / "gold_bbox_coordinate_annotations_1000images.csv",
        GOLD_HEADER + "\n" + "\n".join(gold) + "\n",
    )
    put(base / "gold_dataset" / "gold_all_sentences_500pts_1000studies.txt", "\n".join(sentences) + "\n")
    return {"Train_Data/2D_Task/ChestImagrome/Chest_imagenome_train.jsonl": _silver_records(n, seed)}


def _silver_records(n: int, seed: int) -> list[dict]:
    """Train_Data records naming every silver crop (class ids number the sorted region names)."""
    records = []
    for _, patient, study, dicom in _mimic_images(n, seed):
        for class_id, region in enumerate(sorted(REGIONS)):
            records.append({
                "messages": [{"role": "user", "content": f"<image>Locate the region. {region}"}],
                "images": [f"./2D_Images/ChestImagrome/files/{patient[:3]}/{patient}/{study}/{dicom}.jpg"],
                "positive_messages": [[{"role": "user", "content": "<image>Match the target"}]],
                "positive_images": [f"./2D_Images/ChestImagrome/silver_sample_crop/{dicom}_{class_id}_0.png"],
            })  # fmt: skip
    return records


# --- image folders --------------------------------------------------------------------------------------------


def aptos(base: Path, n: int, seed: int) -> dict:
    ids = [item_id("aptos", seed, k)[:12] for k in range(n)]
    put(base / "train.csv", "id_code,diagnosis\n" + "".join(f"{i},{k % 5}\n" for k, i in enumerate(ids)))
    for k, image_id in enumerate(ids):
        put(base / "train_images" / f"{image_id}.png", encoded(fields.photo((1736, 2416), seed + k), "PNG"))
    return {}


def isic2019(base: Path, n: int, seed: int) -> dict:
    for k in range(n):
        name = f"ISIC_{seed * 10000 + k:07d}.jpg"
        put(base / "ISIC_2019_Test_Input" / name, encoded(fields.photo((1024, 1024), seed + k), "JPEG"))
    return {}


def kvasir(base: Path, n: int, seed: int) -> dict:
    from preprocess.demo.sources import KVASIR_CLASSES

    classes = sorted(KVASIR_CLASSES, key=lambda c: c not in ("polyps", "normal-cecum"))  # the checked ones first
    for k in range(n):
        label = classes[k % len(classes)]
        name = f"{item_id('kvasir', seed, k)[:8]}-{label[:4]}.jpg"
        put(base / "kvasir-dataset-v2" / label / name, encoded(fields.photo((576, 720), seed + k), "JPEG"))
    return {}


def rfmid(base: Path, n: int, seed: int) -> dict:
    for k in range(1, n + 1):
        put(base / "Test_Set" / "Test_Set" / "Test" / f"{k}.png", encoded(fields.photo((2848, 4288), seed + k), "PNG"))
    rows = "".join(f"{k},1,{k % 2},0,0\n" for k in range(1, n + 1))
    put(base / "Test_Set" / "Test_Set" / "RFMiD_Testing_Labels.csv", "ID,Disease_Risk,DR,ARMD,MH\n" + rows)
    return {}


def brain_tumor_mri(base: Path, n: int, seed: int) -> dict:
    labels = ("glioma", "meningioma", "notumor", "pituitary")  # each of the four is a checked file group
    for k in range(max(n, len(labels))):
        label = labels[k % len(labels)]
        name = f"Te-{label[:2]}_{k:04d}.jpg"
        put(base / "Testing" / label / name, encoded(fields.photo((512, 512), seed + k, 1), "JPEG"))
    for label in ("glioma", "meningioma"):
        put(base / "Training" / label / f"Tr-{label[:2]}_0001.jpg", encoded(fields.photo((512, 512), seed, 1), "JPEG"))
    return {}


def lc25000(base: Path, n: int, seed: int) -> dict:
    sets = [("colon_image_sets", "colon_aca"), ("lung_image_sets", "lung_n")]
    for k in range(max(n, 2)):
        group, label = sets[k % 2]
        name = f"{label.replace('_', '')}{k + 1}.jpeg"
        folder = base / "lung_colon_image_set" / group / label
        put(folder / name, encoded(fields.photo((768, 768), seed + k), "JPEG"))
    return {}


def m3d_cap(base: Path, n: int, seed: int) -> dict:
    """n series of 40 windowed 8-bit PNG slices of 512x512 and their caption."""
    for k in range(n):
        folder = base / "M3D_Cap" / "ct_quizze" / f"{5000 + k:06d}" / "Axial_C__delayed"
        volume = fields.ct_slices((512, 512, 40), seed + k)
        window = np.clip((volume.astype(np.float32) + 160) / 400 * 255, 0, 255).astype(np.uint8)
        for z in range(40):
            put(folder / f"{z}.png", encoded(window[:, :, z], "PNG"))
        put(folder.parent / "text.txt", "A caption.\n")
    return {}


# --- masks and arrays -----------------------------------------------------------------------------------------


def kvasir_seg(base: Path, n: int, seed: int) -> dict:
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


WRITERS = {
    "vindr_cxr": vindr_cxr, "vindr_mammo": vindr_mammo, "mimic_cxr_jpg": mimic_cxr_jpg,
    "chest_imagenome": chest_imagenome, "aptos2019": aptos, "isic2019": isic2019, "kvasir_v2": kvasir,
    "rfmid": rfmid, "brain_tumor_mri": brain_tumor_mri, "lc25000": lc25000, "m3d_cap": m3d_cap,
    "kvasir_seg": kvasir_seg, "medsegbench": medsegbench, "medmnist": medmnist,
    "medmnist3d": medmnist3d, "pannuke": pannuke, "roco_qa": roco_qa, "pathvqa": pathvqa, "vqa_rad": vqa_rad,
    "medpix_clinqa": medpix, "radimagenet_vqa": radimagenet_vqa, "pmc_vqa": pmc_vqa, "omnimedvqa": omnimedvqa,
    "ct_rate": ct_rate, "radgenome_chestct": radgenome, "brats_ped": brats_ped, "brats_men": brats_men,
    "hanseg": hanseg, "synthrad2023": synthrad, "cirrmri600": cirrmri600, "mrnet": mrnet, "mmdental": mmdental,
}  # fmt: skip
assert set(WRITERS) == set(SIZES), "every real-size writer has its size and source in SIZES, and no other"


def write_real(
    directory: Path, items: int, sources=None, seed: int = 0, full_counts: bool = False, counts: dict | None = None
) -> Path:
    """Write the demo into DIRECTORY, then `items` real-size items of each source (all of WRITERS, or
    `sources`; `counts` gives some sources another number, or for a source with sizes {variant: number}) over
    the demo's copy; the overrides and the record-driven task JSONs follow the new items. A source with
    variants is written at each, and DIRECTORY/variants/SOURCE-VARIANT/config.yaml builds the other choices."""
    from preprocess.demo import _write

    directory = Path(directory).resolve()
    if directory.exists() and any(directory.iterdir()):
        raise FileExistsError(f"{directory} is not empty; real-size fakes are written into a new folder")
    chosen = list(WRITERS) if sources is None else list(sources)
    unknown = sorted(set(chosen) - set(WRITERS))
    if unknown:
        raise ValueError(f"no real-size writer for {', '.join(unknown)}; choose among {', '.join(WRITERS)}")
    directory.mkdir(parents=True, exist_ok=True)
    _write(directory)
    registry = load_registry()
    raw_root, data_basedir = directory / "raw", directory / "DATA_BASEDIR"
    overrides = textparse.read_yaml(directory / "registry-overrides.yaml")
    for source_id in chosen:  # before any is written: MedMNIST 2D and 3D share one folder
        shutil.rmtree(layout.raw_dir(raw_root, registry.source(source_id)), ignore_errors=True)
    for source_id in chosen:
        source = registry.source(source_id)
        base = layout.raw_dir(raw_root, source)
        extra = {"full_counts": full_counts} if source_id == "medmnist" else {}
        # a seed of its own per source, whichever others are written; MIMIC-CXR-JPG and Chest ImaGenome share one
        seed_of = seed if source_id in ("mimic_cxr_jpg", "chest_imagenome") else seed + list(WRITERS).index(source_id)
        count = (counts or {}).get("mimic_cxr_jpg" if source_id == "chest_imagenome" else source_id, items)
        for task_file, records in WRITERS[source_id](base, count, seed_of, **extra).items():
            if task_file.endswith(".jsonl"):  # Train_Data: one record a line
                put(data_basedir / task_file, "".join(json.dumps(record) + "\n" for record in records))
            else:
                put(data_basedir / task_file, json.dumps(records, indent=1))
        overrides["sources"][source_id] = {"files": observed_files(source, raw_root)[0]}
    (directory / "registry-overrides.yaml").write_text(
        "# Real-size fakes: their own counts and MD5s.\n" + yaml.safe_dump(overrides, sort_keys=True), encoding="utf-8"
    )
    (directory / "config.yaml").write_text(
        yaml.safe_dump(
            {
                "raw_root": str(raw_root),
                "data_basedir": str(data_basedir),
                "registry_overrides": str(directory / "registry-overrides.yaml"),
                "subsets": "all",
            },
        ),
        encoding="utf-8",
    )
    write_variant_configs(directory, chosen)
    return directory
