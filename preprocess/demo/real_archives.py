"""Real-size fakes of the parquet and zip downloads (PanNuke, ROCO-QA, the VQA sets, PMC-VQA, OmniMedVQA);
demo/real.py writes them."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa

from preprocess.demo import archives, fields
from preprocess.demo.archives import IMAGE, _zip_add
from preprocess.demo.real_files import encoded, put

# --- parquet and zip ------------------------------------------------------------------------------------------

ROW_GROUP = 100  # rows per row group, as the Hugging Face uploads of image datasets have them


def pannuke(base: Path, n: int, seed: int) -> dict:
    split = ["image_path,split"]
    for fold in (1, 2, 3):
        images, instances, categories = [], [], []
        for k in range(n):
            images.append({"bytes": encoded(fields.photo((256, 256), seed + fold * 1000 + k), "PNG"), "path": None})
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
    put(base / "PanNuke_split.csv", "\n".join(split) + "\n")
    return {}


def roco_qa(base: Path, n: int, seed: int) -> dict:
    for f, (name, _) in enumerate(archives.ROCO_FILES):
        images = [encoded(fields.photo((512, 512), seed + f * 1000 + k, 1), "JPEG") for k in range(n)]
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
    images = [{"bytes": encoded(fields.photo(shape, seed + k, channels), fmt), "path": None} for k in range(n)]
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
        images = [{"bytes": encoded(fields.photo((1024, 1024), seed + k, 1), "PNG"), "path": None} for k in rows]
        table = pa.table({
            "image_id": pa.array(images, IMAGE), "mode": ["CT"] * len(rows),
            "case_id": [f"MPX{k}" for k in rows],
            "question": [f"What is shown in image {k}?" for k in rows], "answer": [f"finding {k}" for k in rows],
        })  # fmt: skip
        archives._write(base / "data" / f"train-0000{shard}-of-00007-1a2b3c.parquet", table, ROW_GROUP)
    return {"2D_Task/MedPIX/MedPix_test.json": _records(n, "png")}


def radimagenet_vqa(base: Path, n: int, seed: int) -> dict:
    """n images, three questions each (open, closed, multiple choice), as the benchmark config has them."""
    images = [encoded(fields.photo((224, 224), seed + k, 1), "PNG") for k in range(n)]
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
            _zip_add(archive, f"figures/{name}", encoded(fields.photo((600, 800), seed + k), "JPEG"))
    rows = "".join(f"{name},What is shown?,CT,CT,MRI,US,X-ray,A\n" for name in names)
    put(base / "test.csv", "Figure_path,Question,Answer,Choice A,Choice B,Choice C,Choice D,Answer_label\n" + rows)
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
            _zip_add(archive, f"OmniMedVQA/{path}", encoded(fields.photo((512, 512), seed + k), "PNG"))
    return {}
