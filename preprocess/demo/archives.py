"""Demo and test fakes of the parquet and zip downloads: real column names, struct types, row groups, quirks."""

from __future__ import annotations

import hashlib
import io
import json
import stat
import struct
import zipfile
import zlib
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from PIL import Image

from preprocess.demo.images import encode, pattern

IMAGE = pa.struct([("bytes", pa.binary()), ("path", pa.string())])


def stored_png(array: np.ndarray) -> bytes:
    """A PNG (8-bit gray or RGB) whose deflate stream is stored, not compressed: the same bytes with any zlib or
    Pillow, so the content-hash names in the demo's literal task JSONs stay valid."""
    height, width = array.shape[:2]
    raw = b"".join(b"\x00" + array[y].tobytes() for y in range(height))
    blocks, position = b"", 0
    while True:
        piece = raw[position : position + 65535]
        position += len(piece)
        last = position >= len(raw)
        blocks += struct.pack("<BHH", int(last), len(piece), len(piece) ^ 0xFFFF) + piece
        if last:
            break
    stream = b"\x78\x01" + blocks + struct.pack(">I", zlib.adler32(raw))

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2 if array.ndim == 3 else 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", stream) + chunk(b"IEND", b"")


def _write(path: Path, table: pa.Table, rows_per_group: int = 2) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path, row_group_size=rows_per_group)


def _hash_name(data: bytes, extension: str) -> str:
    return hashlib.sha256(data).hexdigest()[:20] + extension


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


def vqa_rad(base: Path) -> None:
    unique = [stored_png(pattern(200 + i, (32, 32), 1)) for i in range(3)]
    rows = [unique[0], unique[0], unique[1], unique[2], unique[1]]  # many questions per image, no image id
    table = _qa_table(rows, {"question": [f"q{i}?" for i in range(5)], "answer": ["yes", "no", "yes", "no", "x"]})
    _write(base / "data" / "test-00000-of-00001-0b1c2d3e4f.parquet", table)


def pathvqa(base: Path) -> None:
    unique = [stored_png(pattern(220 + i, (32, 32))) for i in range(2)]
    rows = [unique[0], unique[1], unique[1], None]  # one row without an image
    table = _qa_table(rows, {"question": ["a?", "b?", "c?", "d?"], "answer": ["yes", "no", "no", "yes"]})
    _write(base / "data" / "test-00000-of-00001-9f8e7d6c5b.parquet", table)


def radimagenet_vqa(base: Path) -> None:
    unique = [stored_png(pattern(240 + i, (32, 32), 1)) for i in range(2)]
    rows = [unique[i // 9] for i in range(18)]  # nine questions on each image
    metadata = pa.array(
        [
            {
                "content_type": "modality",
                "correct_text": "CT",
                "is_abnormal": i % 2 == 0,
                "location": "abdomen",
                "modality": "CT",
                "pathology": "none",
                "question_id": f"q{i}",
            }
            for i in range(18)
        ]
    )
    extra = {
        "question": [f"q{i}" for i in range(18)],
        "choices": pa.array([["A", "B"] if i % 3 else None for i in range(18)], pa.list_(pa.string())),
        "answer": ["A"] * 18,
        "question_type": ["mcq"] * 18,
        "metadata": metadata,
    }
    _write(base / "benchmark" / "test-00000-of-00001.parquet", _qa_table(rows, extra), rows_per_group=5)


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


def medpix(base: Path) -> None:
    unique = [stored_png(pattern(280 + i, (32, 32), 1)) for i in range(3)]
    for shard in range(2):
        rows = unique[shard : shard + 2]
        table = pa.table(
            {
                "image_id": pa.array([{"bytes": b, "path": None} for b in rows], IMAGE),  # sic
                "mode": ["CT"] * 2,
                "case_id": [f"c{shard}{i}" for i in range(2)],
                "question": ["?"] * 2,
                "answer": ["!"] * 2,
            }
        )
        _write(base / "data" / f"train-0000{shard}-of-00007-1a2b3c.parquet", table)


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
