"""Demo and test fakes of the parquet and zip downloads: real column names, struct types, row groups, quirks."""

from __future__ import annotations

import io
import json
import stat
import zipfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from PIL import Image

from preprocess.demo.images import encode, pattern

IMAGE = pa.struct([("bytes", pa.binary()), ("path", pa.string())])


def _write(path: Path, table: pa.Table, rows_per_group: int = 2) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path, row_group_size=rows_per_group)


def _mask_png(mask: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(mask.astype(bool)).convert("1").save(buffer, format="PNG")
    return buffer.getvalue()


# Per fold, per row: tissue value (0..18 upstream) and the PanNuke_split.csv line of the row (None: no line).
# Tissue 7 is "Head and Neck"; fold3 row 0 is listed unpadded; fold2 row 2 is in no line of the CSV.
PANNUKE_ROWS = {
    1: [
        (3, "Breast/fold1_00000000.png,test"),
        (4, "Cervix/fold1_00000001.png,test"),
        (5, "Colon/fold1_00000002.png,train"),
    ],
    2: [(6, "Esophagus/fold2_00000000.png,test"), (7, "Head and Neck/fold2_00000001.png,test"), (0, None)],
    3: [
        (1, "Bile Duct/fold3_0.png,test"),
        (2, "Bladder/fold3_00000001.png,train"),
        (3, "Breast/fold3_00000002.png,test"),
    ],
}


def pannuke(base: Path) -> None:
    """The three fold files (image, instances, categories, tissue) and the benchmark's split CSV."""
    split_rows = ["image_path,split"]
    for fold, rows in PANNUKE_ROWS.items():
        images, instances, categories, tissues = [], [], [], []
        for row, (tissue, line) in enumerate(rows):
            images.append({"bytes": encode(pattern(fold * 10 + row, (32, 32)), "PNG"), "path": None})
            masks = []
            if row != 1:  # row 1 of each fold has no nucleus at all
                mask = np.zeros((32, 32), np.uint8)
                mask[4 + row : 9 + row, 5:8] = 1
                masks = [{"bytes": _mask_png(mask), "path": None}]
                tiny = np.zeros((32, 32), np.uint8)
                tiny[30, 30] = 1  # an edge nucleus of one pixel
                masks.append({"bytes": _mask_png(tiny), "path": None})
            instances.append(masks)
            categories.append([row % 5, 3][: len(masks)])
            tissues.append(tissue)
            if line is not None:
                split_rows.append(line)
        table = pa.table(
            {
                "image": pa.array(images, IMAGE),
                "instances": pa.array(instances, pa.list_(IMAGE)),
                "categories": pa.array(categories, pa.list_(pa.int64())),
                "tissue": pa.array(tissues, pa.int64()),
            }
        )
        _write(base / "data" / f"fold{fold}-00000-of-00001.parquet", table)
    (base / "PanNuke_split.csv").write_text("\n".join(split_rows) + "\n")


def _qa_table(images: list[bytes | None], extra: dict) -> pa.Table:
    column = pa.array([None if b is None else {"bytes": b, "path": None} for b in images], IMAGE)
    return pa.table({"image": column, **extra})


def _qa_rows(base: Path, name: str, images: list[bytes], rows: list[tuple[int | None, str, str]]) -> None:
    """A parquet of (image, question, answer) rows; a row's image is images[k] (None: a row without image)."""
    table = _qa_table(
        [None if k is None else images[k] for k, _, _ in rows],
        {"question": [q for _, q, _ in rows], "answer": [a for _, _, a in rows]},
    )
    _write(base / "data" / name, table)


# The demo's VQA tables: several questions per image, question texts shared by images (with the same answer
# too), no image id; the release's records (preprocess/demo/release) name the images by paths of their own.
# Each row: (image, question, answer). Image k of a table is pattern(seed + k), PNG unless listed as JPEG.
VQA_RAD = {
    "test": (200, [], [(0, "Is there a fracture?", "no"), (0, "What organ is this?", "brain"),
                       (1, "Is there a fracture?", "no"), (1, "What organ is this?", "chest"),
                       (2, "Is the lesion hyperdense?", "yes")]),
    "train": (210, [], [(0, "Is the heart enlarged?", "yes"), (0, "What plane is this?", "axial"),
                        (1, "Is the heart enlarged?", "yes"), (1, "What plane is this?", "coronal")]),
}  # fmt: skip
PATHVQA = {
    "test": (220, [0], [(0, "What is present?", "necrosis"), (0, "Is this tissue malignant?", "yes"),
                        (1, "Is this tissue malignant?", "yes"), (1, "What is present?", "fibrosis"),
                        (1, "Where is this from?", "liver"), (2, "Is this tissue malignant?", "no"),
                        (None, "What does this show?", "nothing")]),
    "train": (230, [], [(0, "What is shown?", "granuloma"), (0, "Is there inflammation?", "yes"),
                        (1, "Is there inflammation?", "yes"), (1, "What is shown?", "metastasis")]),
}  # fmt: skip
VQA_FILES = {"vqa_rad": "-00000-of-00001-0b1c2d3e4f.parquet", "pathvqa": "-00000-of-00001-9f8e7d6c5b.parquet"}


def _vqa_images(seed: int, jpeg: list[int], count: int, channels: int) -> list[bytes]:
    return [encode(pattern(seed + k, (32, 32), channels), "JPEG" if k in jpeg else "PNG") for k in range(count)]


def _vqa(base: Path, table: dict, suffix: str, channels: int) -> None:
    for split, (seed, jpeg, rows) in table.items():
        images = _vqa_images(seed, jpeg, 1 + max(k for k, _, _ in rows if k is not None), channels)
        _qa_rows(base, f"{split}{suffix}", images, rows)


def vqa_rad(base: Path) -> None:
    _vqa(base, VQA_RAD, VQA_FILES["vqa_rad"], channels=1)


def pathvqa(base: Path) -> None:
    _vqa(base, PATHVQA, VQA_FILES["pathvqa"], channels=3)


# RadImageNet-VQA's benchmark config: per image (modality, location, abnormal) and three questions, an open,
# a closed (yes/no, shared by every image) and a multiple-choice one (answer a letter of `choices`).
RADIMAGENET_IMAGES = [("CT", "abdomen", True), ("MRI", "brain", False), ("CT", "knee", True)]
RADIMAGENET_REGIONS = ["abdomen", "brain", "knee", "spine"]
RADIMAGENET_CAPTIONS = [
    "Axial CT image of the abdomen without abnormality.",
    "MRI of the brain showing a glioma.",
    "CT of the lung with a solid nodule.",
]


def radimagenet_vqa(base: Path) -> None:
    images = [encode(pattern(240 + k, (32, 32), 1), "JPEG" if k == 2 else "PNG") for k in range(3)]
    rows, questions = [], []
    for k, (modality, location, abnormal) in enumerate(RADIMAGENET_IMAGES):
        letter = "ABCD"[RADIMAGENET_REGIONS.index(location)]
        questions += [
            ("What is the imaging modality of this image?", None, modality, "open", "modality", modality),
            ("Is this image abnormal?", None, "yes" if abnormal else "no", "closed", "abnormality", None),
            ("Which anatomical region is shown?", RADIMAGENET_REGIONS, letter, "mcq", "anatomy", location),
        ]
        rows += [k] * 3
    metadata = [
        {"content_type": content, "correct_text": correct, "is_abnormal": RADIMAGENET_IMAGES[k][2],
         "location": RADIMAGENET_IMAGES[k][1], "modality": RADIMAGENET_IMAGES[k][0], "pathology": "normal",
         "question_id": f"{content}_{n % 3}"}
        for n, (k, (_, _, _, _, content, correct)) in enumerate(zip(rows, questions, strict=True))
    ]  # fmt: skip
    extra = {
        "question": [q[0] for q in questions],
        "choices": pa.array([q[1] for q in questions], pa.list_(pa.string())),
        "answer": [q[2] for q in questions],
        "question_type": [q[3] for q in questions],
        "metadata": pa.array(metadata),
    }
    _write(base / "benchmark" / "test-00000-of-00001.parquet", _qa_table([images[k] for k in rows], extra), 4)
    # the alignment config (train): one caption per image, the same prompt for all
    captions = [encode(pattern(250 + k, (32, 32), 1), "PNG") for k in range(3)]
    turn = pa.struct([("from", pa.string()), ("value", pa.string())])
    conversations = [
        [{"from": "human", "value": "<image>\nDescribe this medical image."}, {"from": "gpt", "value": text}]
        for text in RADIMAGENET_CAPTIONS
    ]
    alignment = _qa_table(
        captions,
        {
            "conversations": pa.array(conversations, pa.list_(turn)),
            "metadata": pa.array([{**m, "correct_text": None} for m in metadata[::3]]),
        },
    )
    _write(base / "alignment" / "train-00000-of-00001.parquet", alignment)


# MedPix ClinQA: two of the seven shards; image k is pattern(280 + k). Image 1 and 2 are asked the same
# question with other answers; image 0 and 1 share "What modality is this?" with other answers too.
MEDPIX_SHARDS = [
    [(0, "What abnormality is seen?", "pneumothorax"), (1, "What modality is this?", "CT")],
    [(1, "What abnormality is seen?", "appendicitis"), (2, "What modality is this?", "MRI"),
     (2, "What abnormality is seen?", "meningioma"), (0, "What modality is this?", "X-ray")],
]  # fmt: skip


def medpix(base: Path) -> None:
    unique = [encode(pattern(280 + i, (32, 32), 1), "PNG") for i in range(3)]
    for shard, rows in enumerate(MEDPIX_SHARDS):
        table = pa.table(
            {
                "image_id": pa.array([{"bytes": unique[k], "path": None} for k, _, _ in rows], IMAGE),  # sic
                "mode": ["CT"] * len(rows),
                "case_id": [f"MPX{1000 + shard * 10 + i}" for i in range(len(rows))],
                "question": [q for _, q, _ in rows],
                "answer": [a for _, _, a in rows],
            }
        )
        _write(base / "data" / f"train-0000{shard}-of-00007-1a2b3c.parquet", table)


# The five upstream files, in the benchmark's reading order, with a few rows each ("Vaild" sic).
ROCO_FILES = [
    ("Vaild-00000-of-00001-1ddc94eb806f44ae.parquet", 2),
    ("Train-00000-of-00001-91a106d1a22c7cc9.parquet", 3),
    ("Valid-00001-of-00002.parquet", 1),
    ("Test-00000-of-00001-91a106d1a22c7cc9.parquet", 3),
    ("Valid-00000-of-00002.parquet", 2),
]


def roco_qa(base: Path) -> None:
    seed = 0
    for name, rows in ROCO_FILES:
        images = [encode(pattern(260 + seed + i, (32, 32), 1), "JPEG") for i in range(rows)]
        table = pa.table(
            {
                "image_id": [f"ROCO_{seed + i:05d}" for i in range(rows)],
                "image": pa.array([{"bytes": b, "path": None} for b in images], IMAGE),
                "question": ["What is shown?"] * rows,
                "answer": ["CT"] * rows,
            }
        )
        _write(base / "data" / name, table)
        seed += rows
    # Test rows are images 7, 8 and 9 of the one counter over the five files.


def _zip_add(archive: zipfile.ZipFile, name: str, data: bytes, link: bool = False) -> None:
    info = zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0))
    info.external_attr = ((stat.S_IFLNK | 0o777) if link else (stat.S_IFREG | 0o644)) << 16
    archive.writestr(info, data)


def pmc_vqa(base: Path) -> None:
    base.mkdir(parents=True, exist_ok=True)
    figures = ["PMC8253873_Fig2_288.jpg", "PMC3298543_F1.jpg"]
    with zipfile.ZipFile(base / "images.zip", "w") as archive:
        for i, name in enumerate(figures):
            _zip_add(archive, f"figures/{name}", encode(pattern(300 + i, (32, 32)), "JPEG"))
        _zip_add(archive, "../evil.jpg", b"escape attempt")
        _zip_add(archive, "/abs.jpg", b"absolute")
        _zip_add(archive, "figures/link.jpg", b"/etc/passwd", link=True)
    rows = "".join(f"{name},What is shown?,CT,CT,MRI,US,X-ray,A\n" for name in [*figures, "PMC0000000_missing.jpg"])
    (base / "test.csv").write_text(
        "Figure_path,Question,Answer,Choice A,Choice B,Choice C,Choice D,Answer_label\n" + rows
    )


def omnimedvqa(base: Path) -> None:
    base.mkdir(parents=True, exist_ok=True)
    paths = ["Images/ACRIMA/Im001_ACRIMA.png", "Images/ACRIMA/Im002_ACRIMA.png"]
    records = [
        {
            "question_id": f"q{i}",
            "dataset": "ACRIMA",
            "question_type": "Disease Diagnosis",
            "question": "Is this glaucoma?",
            "gt_answer": "Yes",
            "image_path": p,
            "option_A": "Yes",
            "option_B": "No",
            "modality_type": "Fundus Photography",
        }
        for i, p in enumerate(paths)
    ]
    with zipfile.ZipFile(base / "OmniMedVQA.zip", "w") as archive:
        _zip_add(archive, "OmniMedVQA/QA_information/Open-access/ACRIMA.json", json.dumps(records).encode())
        for i, path in enumerate(paths):
            _zip_add(archive, f"OmniMedVQA/{path}", encode(pattern(320 + i, (32, 32)), "PNG"))


WRITERS = {
    "pannuke": pannuke,
    "vqa_rad": vqa_rad,
    "pathvqa": pathvqa,
    "radimagenet_vqa": radimagenet_vqa,
    "roco_qa": roco_qa,
    "medpix_clinqa": medpix,
    "pmc_vqa": pmc_vqa,
    "omnimedvqa": omnimedvqa,
}
