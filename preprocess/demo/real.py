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
import hashlib
import io
import json
import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa
import yaml
from PIL import Image

from preprocess.checks.register import observed_files
from preprocess.demo import archives, fields
from preprocess.demo.annotations import GOLD_HEADER, MAMMO_HEADER, _dicom
from preprocess.demo.archives import IMAGE, _zip_add
from preprocess.demo.real_npz import medmnist, medmnist3d, medsegbench, write_variant_configs
from preprocess.demo.real_sizes import SIZES
from preprocess.demo.volumes import save_nifti, save_nrrd
from preprocess.formats import textparse
from preprocess.registry import layout
from preprocess.registry.loader import load_registry


def _id(*parts) -> str:
    return hashlib.md5("/".join(map(str, parts)).encode()).hexdigest()


def _encode(array: np.ndarray, fmt: str) -> bytes:
    buffer = io.BytesIO()
    if fmt == "JPEG":
        Image.fromarray(array).save(buffer, format="JPEG", quality=95)
    else:
        Image.fromarray(array).save(buffer, format="PNG")
    return buffer.getvalue()


def _put(path: Path, data: bytes | str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        path.write_text(data, encoding="utf-8")
    else:
        path.write_bytes(data)


# --- DICOM and box tables -----------------------------------------------------------------------------------


def _xray_dicom(path: Path, k: int, shape: tuple[int, int]) -> None:
    """Even items 12 bits uncompressed, odd ones 14 bits JPEG 2000 lossless (both occur upstream)."""
    from pydicom.uid import JPEG2000Lossless

    bits = 12 if k % 2 == 0 else 14
    _dicom(path, fields.xray(shape, k, bits), compress=None if k % 2 == 0 else JPEG2000Lossless, bits=bits)


def vindr_cxr(base: Path, n: int, seed: int) -> dict:
    shape = (2880, 2400)
    ids = [_id("vindr_cxr", seed, k) for k in range(n)]
    rows, labels = [], []
    for k, image_id in enumerate(ids):
        _xray_dicom(base / "test" / f"{image_id}.dicom", seed + k, shape)
        for part, name in enumerate(("Nodule/Mass", "Cardiomegaly", "Aortic enlargement")):
            x0, y0, x1, y1 = fields.box(seed + k, *shape, part)
            rows.append(f"{image_id},{name},{x0},{y0},{x1},{y1}")
        labels.append(f"{image_id},1,0")
    _put(
        base / "annotations" / "annotations_test.csv",
        "image_id,class_name,x_min,y_min,x_max,y_max\n" + "\n".join(rows) + "\n",
    )
    _put(base / "annotations" / "annotations_train.csv", "image_id,rad_id,class_name,x_min,y_min,x_max,y_max\n")
    _put(
        base / "annotations" / "image_labels_test.csv",
        "image_id,Nodule/Mass,Other disease\n" + "\n".join(labels) + "\n",
    )
    _put(base / "annotations" / "image_labels_train.csv", "image_id,rad_id,Calcification,Other diseases\n")
    return {}


def vindr_mammo(base: Path, n: int, seed: int) -> dict:
    """Both copies in the one raw folder, as a user with both has it: the Mammo-CLIP PNGs and table (the
    default variant) and the PhysioNet DICOMs and finding_annotations.csv (source_variants: physionet)."""
    png, dicom = (1520, 912), (3518, 2800)
    patient, study = _id("patient", seed), _id("study", seed)
    derived, physionet = [], []
    for k in range(n):
        image_id = _id("vindr_mammo", seed, k)
        gray = (fields.xray(png, seed + k, 16) >> 8).astype(np.uint8)
        _put(base / "images_png" / patient / f"{image_id}.png", _encode(gray, "PNG"))
        _xray_dicom(base / "images" / study / f"{image_id}.dicom", seed + k, dicom)
        x0, y0, x1, y1 = fields.box(seed + k, *dicom)
        sy, sx = png[0] / dicom[0], png[1] / dicom[1]
        common = f"{study},s1,{image_id},L,CC,{dicom[0]},{dicom[1]},BI-RADS 4,DENSITY C,\"['Mass']\",BI-RADS 4"
        derived.append(
            f"{common},{x0},{y0},{x1},{y1},test,{patient},0,{x0 * sx:.1f},{y0 * sy:.1f},{x1 * sx:.1f},{y1 * sy:.1f}"
        )
        physionet.append(f"{common},{x0},{y0},{x1},{y1},test")
    _put(base / "vindr_detection_v1_folds.csv", MAMMO_HEADER + "\n" + "\n".join(derived) + "\n")
    header = MAMMO_HEADER.split(",patient_id")[0]
    _put(base / "finding_annotations.csv", header + "\n" + "\n".join(physionet) + "\n")
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
            (f"p{str(patient)[:2]}", f"p{patient}", f"s{50000000 + seed * 1000 + k // 2}", _id("mimic", seed, k))
        )
    return images


def mimic_cxr_jpg(base: Path, n: int, seed: int) -> dict:
    for group in range(10, 20):
        (base / "files" / f"p{group}").mkdir(parents=True, exist_ok=True)
    images = _mimic_images(n, seed)
    for k, (group, patient, study, dicom) in enumerate(images):
        gray = (fields.xray(MIMIC_SHAPE, seed + k, 16) >> 8).astype(np.uint8)
        _put(base / "files" / group / patient / study / f"{dicom}.jpg", _encode(gray, "JPEG"))
    rows = "".join(f"{d},{s[1:]},{p[1:]},test\n" for _, p, s, d in images)
    _put(
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
    _put(
        base / "gold_dataset" / "gold_bbox_coordinate_annotations_1000images.csv",
        GOLD_HEADER + "\n" + "\n".join(gold) + "\n",
    )
    _put(base / "gold_dataset" / "gold_all_sentences_500pts_1000studies.txt", "\n".join(sentences) + "\n")
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
    ids = [_id("aptos", seed, k)[:12] for k in range(n)]
    _put(base / "train.csv", "id_code,diagnosis\n" + "".join(f"{i},{k % 5}\n" for k, i in enumerate(ids)))
    for k, image_id in enumerate(ids):
        _put(base / "train_images" / f"{image_id}.png", _encode(fields.photo((1736, 2416), seed + k), "PNG"))
    return {}


def isic2019(base: Path, n: int, seed: int) -> dict:
    for k in range(n):
        name = f"ISIC_{seed * 10000 + k:07d}.jpg"
        _put(base / "ISIC_2019_Test_Input" / name, _encode(fields.photo((1024, 1024), seed + k), "JPEG"))
    return {}


def kvasir(base: Path, n: int, seed: int) -> dict:
    from preprocess.demo.sources import KVASIR_CLASSES

    classes = sorted(KVASIR_CLASSES, key=lambda c: c not in ("polyps", "normal-cecum"))  # the checked ones first
    for k in range(n):
        label = classes[k % len(classes)]
        name = f"{_id('kvasir', seed, k)[:8]}-{label[:4]}.jpg"
        _put(base / "kvasir-dataset-v2" / label / name, _encode(fields.photo((576, 720), seed + k), "JPEG"))
    return {}


def rfmid(base: Path, n: int, seed: int) -> dict:
    for k in range(1, n + 1):
        _put(base / "Test_Set" / "Test_Set" / "Test" / f"{k}.png", _encode(fields.photo((2848, 4288), seed + k), "PNG"))
    rows = "".join(f"{k},1,{k % 2},0,0\n" for k in range(1, n + 1))
    _put(base / "Test_Set" / "Test_Set" / "RFMiD_Testing_Labels.csv", "ID,Disease_Risk,DR,ARMD,MH\n" + rows)
    return {}


def brain_tumor_mri(base: Path, n: int, seed: int) -> dict:
    labels = ("glioma", "meningioma", "notumor", "pituitary")  # each of the four is a checked file group
    for k in range(max(n, len(labels))):
        label = labels[k % len(labels)]
        name = f"Te-{label[:2]}_{k:04d}.jpg"
        _put(base / "Testing" / label / name, _encode(fields.photo((512, 512), seed + k, 1), "JPEG"))
    for label in ("glioma", "meningioma"):
        _put(base / "Training" / label / f"Tr-{label[:2]}_0001.jpg", _encode(fields.photo((512, 512), seed, 1), "JPEG"))
    return {}


def lc25000(base: Path, n: int, seed: int) -> dict:
    sets = [("colon_image_sets", "colon_aca"), ("lung_image_sets", "lung_n")]
    for k in range(max(n, 2)):
        group, label = sets[k % 2]
        name = f"{label.replace('_', '')}{k + 1}.jpeg"
        folder = base / "lung_colon_image_set" / group / label
        _put(folder / name, _encode(fields.photo((768, 768), seed + k), "JPEG"))
    return {}


def m3d_cap(base: Path, n: int, seed: int) -> dict:
    """n series of 40 windowed 8-bit PNG slices of 512x512 and their caption."""
    for k in range(n):
        folder = base / "M3D_Cap" / "ct_quizze" / f"{5000 + k:06d}" / "Axial_C__delayed"
        volume = fields.ct_slices((512, 512, 40), seed + k)
        window = np.clip((volume.astype(np.float32) + 160) / 400 * 255, 0, 255).astype(np.uint8)
        for z in range(40):
            _put(folder / f"{z}.png", _encode(window[:, :, z], "PNG"))
        _put(folder.parent / "text.txt", "A caption.\n")
    return {}


# --- masks and arrays -----------------------------------------------------------------------------------------


def kvasir_seg(base: Path, n: int, seed: int) -> dict:
    height, width = 576, 720
    boxes, split = {}, []
    for k in range(n):
        image_id = _id("kvasir_seg", seed, k)[:25]
        x0, y0, x1, y1 = (round(v) for v in fields.box(seed + k, height, width))
        mask = np.zeros((height, width), np.uint8)
        mask[y0:y1, x0:x1] = 255
        _put(base / "images" / f"{image_id}.jpg", _encode(fields.photo((height, width), seed + k), "JPEG"))
        _put(base / "masks" / f"{image_id}.jpg", _encode(mask, "JPEG"))
        boxes[image_id] = {"height": height, "width": width,
                           "bbox": [{"label": "polyp", "xmin": x0, "ymin": y0, "xmax": x1, "ymax": y1}]}  # fmt: skip
        split.append(f"test,{image_id}.png")
    _put(base / "kavsir_bboxes.json", json.dumps(boxes))
    _put(base / "split.csv", "split,original_image_path\n" + "\n".join(split) + "\n")
    return {}


# --- parquet and zip ------------------------------------------------------------------------------------------

ROW_GROUP = 100  # rows per row group, as the Hugging Face uploads of image datasets have them


def pannuke(base: Path, n: int, seed: int) -> dict:
    split = ["image_path,split"]
    for fold in (1, 2, 3):
        images, instances, categories = [], [], []
        for k in range(n):
            images.append({"bytes": _encode(fields.photo((256, 256), seed + fold * 1000 + k), "PNG"), "path": None})
            masks = []
            for part in range(24):
                x0, y0, _, _ = (round(v) for v in fields.box(seed + fold * 1000 + k, 256, 256, part))
                mask = np.zeros((256, 256), np.uint8)
                mask[y0 : y0 + 12, x0 : x0 + 12] = 1
                masks.append({"bytes": archives._mask_png(mask), "path": None})
            instances.append(masks)
            categories.append([part % 5 for part in range(24)])
            split.append(f"Breast/fold{fold}_{k:08d}.png,{'test' if k % 2 == 0 else 'train'}")
        table = pa.table({
            "image": pa.array(images, IMAGE), "instances": pa.array(instances, pa.list_(IMAGE)),
            "categories": pa.array(categories, pa.list_(pa.int64())), "tissue": pa.array([3] * n, pa.int64()),
        })  # fmt: skip
        archives._write(base / "data" / f"fold{fold}-00000-of-00001.parquet", table, ROW_GROUP)
    _put(base / "PanNuke_split.csv", "\n".join(split) + "\n")
    return {}


def roco_qa(base: Path, n: int, seed: int) -> dict:
    for f, (name, _) in enumerate(archives.ROCO_FILES):
        images = [_encode(fields.photo((512, 512), seed + f * 1000 + k, 1), "JPEG") for k in range(n)]
        table = pa.table({
            "image_id": [f"ROCO_{f * 100000 + k:05d}" for k in range(n)],
            "image": pa.array([{"bytes": b, "path": None} for b in images], IMAGE),
            "question": ["What is shown?"] * n, "answer": ["CT"] * n,
        })  # fmt: skip
        archives._write(base / "data" / name, table, ROW_GROUP)
    return {}


def _records(n: int, ext: str, question=lambda k: f"What is shown in image {k}?", answer=lambda k: f"finding {k}"):
    return [
        {"qry_inst": "<|image_1|> Answer the question about the image.", "qry_text": question(k),
         "qry_img_path": f"real/{k:05d}.{ext}", "tgt_text": [answer(k), "none of these"]}
        for k in range(n)
    ]  # fmt: skip


def _vqa(base: Path, name: str, n: int, seed: int, shape, channels: int, fmt: str, column: str = "image") -> None:
    images = [{"bytes": _encode(fields.photo(shape, seed + k, channels), fmt), "path": None} for k in range(n)]
    table = pa.table({
        column: pa.array(images, IMAGE),
        "question": [f"What is shown in image {k}?" for k in range(n)],
        "answer": [f"finding {k}" for k in range(n)],
    })  # fmt: skip
    archives._write(base / "data" / name, table, ROW_GROUP)


def pathvqa(base: Path, n: int, seed: int) -> dict:
    _vqa(base, "test" + archives.VQA_FILES["pathvqa"], n, seed, (768, 1024), 3, "JPEG")
    _vqa(base, "train" + archives.VQA_FILES["pathvqa"], 2, seed + 500, (768, 1024), 3, "JPEG")
    return {"2D_Task/PathVQA/Path-VQA_test.json": _records(n, "jpg")}


def vqa_rad(base: Path, n: int, seed: int) -> dict:
    _vqa(base, "test" + archives.VQA_FILES["vqa_rad"], n, seed, (1024, 1024), 1, "JPEG")
    _vqa(base, "train" + archives.VQA_FILES["vqa_rad"], 2, seed + 500, (1024, 1024), 1, "JPEG")
    return {"2D_Task/VQA-RAD/VQA_test.json": _records(n, "jpg")}


def medpix(base: Path, n: int, seed: int) -> dict:
    half = (n + 1) // 2
    for shard, rows in enumerate((range(half), range(half, n))):
        images = [{"bytes": _encode(fields.photo((1024, 1024), seed + k, 1), "PNG"), "path": None} for k in rows]
        table = pa.table({
            "image_id": pa.array(images, IMAGE), "mode": ["CT"] * len(rows),
            "case_id": [f"MPX{k}" for k in rows],
            "question": [f"What is shown in image {k}?" for k in rows], "answer": [f"finding {k}" for k in rows],
        })  # fmt: skip
        archives._write(base / "data" / f"train-0000{shard}-of-00007-1a2b3c.parquet", table, ROW_GROUP)
    return {"2D_Task/MedPIX/MedPix_test.json": _records(n, "png")}


def radimagenet_vqa(base: Path, n: int, seed: int) -> dict:
    """n images, three questions each (open, closed, multiple choice), as the benchmark config has them."""
    images = [_encode(fields.photo((224, 224), seed + k, 1), "PNG") for k in range(n)]
    rows, records = [], []
    for k in range(n):
        for kind, question, choices, answer in (
            ("open", f"Which finding is in image {k}?", None, f"finding {k}"),
            ("closed", f"Is image {k} abnormal?", None, "yes"),
            ("mcq", f"Which region is in image {k}?", ["abdomen", "brain", "knee", "spine"], "B"),
        ):
            rows.append((k, question, choices, answer, kind))
            target = ["brain", "abdomen", "knee", "spine"] if choices else [answer]
            records.append({"qry_inst": "<|image_1|> Answer the question about the image.", "qry_text": question,
                            "qry_img_path": f"real/{k:05d}.png", "tgt_text": target})  # fmt: skip
    metadata = [{"content_type": kind, "correct_text": "brain" if choices else answer, "is_abnormal": True,
                 "location": "brain", "modality": "MRI", "pathology": "normal", "question_id": f"{kind}_{k}"}
                for k, _, choices, answer, kind in rows]  # fmt: skip
    table = archives._qa_table(
        [images[k] for k, *_ in rows],
        {"question": [r[1] for r in rows], "choices": pa.array([r[2] for r in rows], pa.list_(pa.string())),
         "answer": [r[3] for r in rows], "question_type": [r[4] for r in rows], "metadata": pa.array(metadata)},
    )  # fmt: skip
    archives._write(base / "benchmark" / "test-00000-of-00001.parquet", table, ROW_GROUP)
    return {"2D_Task/RadImageNet-VQA/RadLmageNet_test.json": records}


def pmc_vqa(base: Path, n: int, seed: int) -> dict:
    import zipfile

    names = [f"PMC{seed * 100000 + k}_Fig{k % 5 + 1}.jpg" for k in range(n)]
    base.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(base / "images.zip", "w") as archive:
        for k, name in enumerate(names):
            _zip_add(archive, f"figures/{name}", _encode(fields.photo((600, 800), seed + k), "JPEG"))
    rows = "".join(f"{name},What is shown?,CT,CT,MRI,US,X-ray,A\n" for name in names)
    _put(base / "test.csv", "Figure_path,Question,Answer,Choice A,Choice B,Choice C,Choice D,Answer_label\n" + rows)
    return {}


def omnimedvqa(base: Path, n: int, seed: int) -> dict:
    import zipfile

    paths = [f"Images/ACRIMA/Im{k:04d}_ACRIMA.png" for k in range(n)]
    records = [{"question_id": f"q{k}", "dataset": "ACRIMA", "question_type": "Disease Diagnosis",
                "question": "Is this glaucoma?", "gt_answer": "Yes", "image_path": p, "option_A": "Yes",
                "option_B": "No", "modality_type": "Fundus Photography"} for k, p in enumerate(paths)]  # fmt: skip
    base.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(base / "OmniMedVQA.zip", "w", zipfile.ZIP_DEFLATED) as archive:
        _zip_add(archive, "OmniMedVQA/QA_information/Open-access/ACRIMA.json", json.dumps(records).encode())
        for k, path in enumerate(paths):
            _zip_add(archive, f"OmniMedVQA/{path}", _encode(fields.photo((512, 512), seed + k), "PNG"))
    return {}


# --- volumes --------------------------------------------------------------------------------------------------

CT_SHAPE = (512, 512, 300)
LPS_CT = np.diag([-0.7, -0.7, 1.5, 1.0])


def ct_rate(base: Path, n: int, seed: int) -> dict:
    names = []
    for k in range(n):
        sub = f"valid_{seed * 1000 + k + 1}_a"
        names.append(f"{sub}_1.nii.gz")
        save_nifti(
            base / "dataset" / "valid_fixed" / sub[:-2] / sub / names[-1], fields.ct_slices(CT_SHAPE, seed + k), LPS_CT
        )
    rows = "".join(f'{name},"[0.7, 0.7]",1.5,-1024,1\n' for name in names)
    _put(
        base / "dataset" / "metadata" / "validation_metadata.csv",
        "VolumeName,XYSpacing,ZSpacing,RescaleIntercept,RescaleSlope\n" + rows,
    )
    return {}


def radgenome(base: Path, n: int, seed: int) -> dict:
    for k in range(n):
        case = f"valid_{seed * 1000 + k + 1}"
        path = base / "dataset" / "valid_preprocessed" / case / f"{case}a" / f"{case}_a_1.nii.gz"
        save_nifti(path, fields.ct_slices(CT_SHAPE, seed + k), LPS_CT)
    return {}


BRATS = (240, 240, 155)
BRATS_LPS = np.diag([-1.0, -1.0, 1.0, 1.0])


def _mr(shape, seed: int, dtype=np.int16) -> np.ndarray:
    return fields.mr_slices(shape, seed).astype(dtype)


def brats_ped(base: Path, n: int, seed: int) -> dict:
    folder = "ASNR-MICCAI-BraTS2023-PED-Challenge-TrainingData"
    for k in range(n):
        case = f"BraTS-PED-{seed * 1000 + k + 2:05d}-000"
        for m, modality in enumerate(("t1n", "t1c", "t2w", "t2f")):
            save_nifti(
                base / folder / folder / case / f"{case}-{modality}.nii.gz", _mr(BRATS, seed + k * 4 + m), BRATS_LPS
            )
        save_nifti(base / folder / folder / case / f"{case}-seg.nii.gz", np.zeros(BRATS, np.uint8), BRATS_LPS)
    return {}


def brats_men(base: Path, n: int, seed: int) -> dict:
    root = base / "ASNR-MICCAI-BraTS2023-MEN-Challenge-TrainingData" / "BraTS-MEN-Train"
    for k in range(n):
        case = f"BraTS-MEN-{seed * 1000 + k + 4:05d}-000"
        for m, modality in enumerate(("t1n", "t1c", "t2w", "t2f")):
            save_nifti(root / case / f"{case}-{modality}.nii.gz", _mr(BRATS, seed + k * 4 + m), BRATS_LPS)
    return {}


def hanseg(base: Path, n: int, seed: int) -> dict:
    rows = []
    for k in range(n):
        case = f"case_{k + 1:02d}"
        folder = base / "set_1" / case
        ct = fields.ct_slices((1024, 1024, 180), seed + k)
        save_nrrd(folder / f"{case}_IMG_CT.nrrd", ct, spacing=(0.558, 0.558, 2.0))
        save_nrrd(folder / f"{case}_IMG_MR_T1.nrrd", _mr((512, 512, 86), seed + k), spacing=(0.703, 0.703, 3.0))
        rows.append(f"{case};1")
    _put(base / "set_1" / "OAR_data.csv", "case;Brainstem\n" + "\n".join(rows) + "\n")
    return {}


PELVIS = np.diag([1.0, 1.0, 2.5, 1.0])


def synthrad(base: Path, n: int, seed: int) -> dict:
    """Items alternate brain and pelvis (at least one of each)."""
    for k in range(max(n, 2)):
        if k % 2 == 0:
            folder, shape, affine = base / "Task1" / "brain" / f"1BA{k + 1:03d}", (260, 220, 180), np.eye(4)
        else:
            folder, shape, affine = base / "Task1" / "pelvis" / f"1PA{k + 1:03d}", (448, 294, 119), PELVIS
        save_nifti(folder / "ct.nii.gz", fields.ct_slices(shape, seed + k), affine)
        save_nifti(folder / "mr.nii.gz", fields.mr_slices(shape, seed + k), affine)
        save_nifti(folder / "mask.nii.gz", np.ones(shape, np.uint8), affine)
    return {}


def cirrmri600(base: Path, n: int, seed: int) -> dict:
    shape, affine = (320, 260, 64), np.diag([1.4, 1.4, 5.0, 1])
    for sequence in ("T1", "T2"):
        root = base / "CirrMRI600+" / f"Cirrhosis_{sequence}_3D"
        rows = []
        for k in range(n):
            case = str(seed * 1000 + k + 1)
            save_nifti(root / "test_images" / f"{case}.nii.gz", fields.mr_slices(shape, seed + k), affine)
            save_nifti(root / "test_masks" / f"{case}.nii.gz", np.zeros(shape, np.uint8), affine)
            rows.append(f"{case},test\n")
        healthy = base / "CirrMRI600+" / "Healthy_subjects" / f"{sequence}_W_Healthy"
        save_nifti(healthy / f"{sequence}_images" / "3.nii.gz", fields.mr_slices(shape, seed + n), affine)
        save_nifti(healthy / f"{sequence}_masks" / "3.nii.gz", np.zeros(shape, np.uint8), affine)
        rows.append("healthy_3,test\n")
        _put(base / f"Cirrhosis_{sequence}_slide_folders.csv", "\ufefffolder_name,split\n" + "".join(rows))
    return {}


def mrnet(base: Path, n: int, seed: int) -> dict:
    root = base / "MRNet-v1.0"
    cases = [f"{1130 + k:04d}" for k in range(n)]
    for p, plane in enumerate(("axial", "coronal", "sagittal")):
        for k, case in enumerate(cases):
            volume = np.clip(fields.mr_slices((256, 256, 30), seed + k * 3 + p, 200) + 10, 0, 255).astype(np.uint8)
            (root / "valid" / plane).mkdir(parents=True, exist_ok=True)
            np.save(root / "valid" / plane / f"{case}.npy", np.ascontiguousarray(volume.transpose(2, 0, 1)))
    for task in ("abnormal", "acl", "meniscus"):
        _put(root / f"valid-{task}.csv", "".join(f"{case},{k % 2}\n" for k, case in enumerate(cases)))
    return {}


def mmdental(base: Path, n: int, seed: int) -> dict:
    rows = []
    for k in range(n):
        case = f"A{k + 1:03d}"
        cbct = (fields.ct_slices((400, 400, 300), seed + k) + 1000).astype(np.int16)
        save_nifti(base / case / f"{case}.nii.gz", cbct, np.diag([-0.3, -0.3, 0.3, 1.0]))
        rows.append(f"{case},1,Caries &amp; filling\n")
    _put(base / "records.csv", "case_id,visit,record\n" + "".join(rows))
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
                _put(data_basedir / task_file, "".join(json.dumps(record) + "\n" for record in records))
            else:
                _put(data_basedir / task_file, json.dumps(records, indent=1))
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
