"""MedPix ClinQA (Hugging Face adishourya/MEDPIX-ClinQA): the demo's tiny copy of its download (`demo`) and real-size
items (`real_size`, `SIZE`, `REAL_SEED`); preprocess/demo/folders.py finds them."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from preprocess.demo import archives, fields, real_archives
from preprocess.demo.files import encoded
from preprocess.demo.images import encode, pattern
from preprocess.demo.real_sizes import Size

# MedPix ClinQA: two of the seven shards; image k is pattern(280 + k). Image 1 and 2 are asked the same
# question with other answers; image 0 and 1 share "What modality is this?" with other answers too.
MEDPIX_SHARDS = [
    [(0, "What abnormality is seen?", "pneumothorax"), (1, "What modality is this?", "CT")],
    [(1, "What abnormality is seen?", "appendicitis"), (2, "What modality is this?", "MRI"),
     (2, "What abnormality is seen?", "meningioma"), (0, "What modality is this?", "X-ray")],
]  # fmt: skip


def demo(base: Path) -> None:
    unique = [encode(pattern(280 + i, (32, 32), 1), "PNG") for i in range(3)]
    for shard, rows in enumerate(MEDPIX_SHARDS):
        table = pa.table(
            {
                "image_id": pa.array([{"bytes": unique[k], "path": None} for k, _, _ in rows], archives.IMAGE),  # sic
                "mode": ["CT"] * len(rows),
                "case_id": [f"MPX{1000 + shard * 10 + i}" for i in range(len(rows))],
                "question": [q for _, q, _ in rows],
                "answer": [a for _, _, a in rows],
            }
        )
        archives._write(base / "data" / f"train-0000{shard}-of-00007-1a2b3c.parquet", table)


# --- real size ----------------------------------------------------------------------------------------------

SIZE = Size(
    "parquet shards of grey PNG 1024x1024 (image column image_id)",
    "MedPix case images of about 1,000 px [assumed]; 2d-images.md 8",
)
REAL_SEED = 19  # added to the run's seed: each source its own, whichever others are written


def real_size(base: Path, n: int, seed: int) -> dict:
    half = (n + 1) // 2
    for shard, rows in enumerate((range(half), range(half, n))):
        images = [{"bytes": encoded(fields.photo((1024, 1024), seed + k, 1), "PNG"), "path": None} for k in rows]
        table = pa.table({
            "image_id": pa.array(images, archives.IMAGE), "mode": ["CT"] * len(rows),
            "case_id": [f"MPX{k}" for k in rows],
            "question": [f"What is shown in image {k}?" for k in rows], "answer": [f"finding {k}" for k in rows],
        })  # fmt: skip
        archives._write(base / "data" / f"train-0000{shard}-of-00007-1a2b3c.parquet", table, real_archives.ROW_GROUP)
    return {"2D_Task/MedPIX/MedPix_test.json": real_archives._records(n, "png")}
