"""ROCO-QA (Hugging Face adishourya/ROCO-QA, and adishourya/ROCO-QA-Train for its Train rows): the demo's tiny copy
of its download (`demo`) and real-size items (`real_size`, `SIZE`, `REAL_SEED`); preprocess/demo/folders.py finds
them."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from preprocess.demo import archives, fields, real_archives
from preprocess.demo.files import encoded
from preprocess.demo.images import encode, pattern
from preprocess.demo.real_sizes import Size

# The five upstream files, in the benchmark's reading order, with a few rows each ("Vaild" sic).
ROCO_FILES = [
    ("Vaild-00000-of-00001-1ddc94eb806f44ae.parquet", 2),
    ("Train-00000-of-00001-91a106d1a22c7cc9.parquet", 3),
    ("Valid-00001-of-00002.parquet", 1),
    ("Test-00000-of-00001-91a106d1a22c7cc9.parquet", 3),
    ("Valid-00000-of-00002.parquet", 2),
]


def demo(base: Path) -> None:
    seed = 0
    for name, rows in ROCO_FILES:
        images = [encode(pattern(260 + seed + i, (32, 32), 1), "JPEG") for i in range(rows)]
        table = pa.table(
            {
                "image_id": [f"ROCO_{seed + i:05d}" for i in range(rows)],
                "image": pa.array([{"bytes": b, "path": None} for b in images], archives.IMAGE),
                "question": ["What is shown?"] * rows,
                "answer": ["CT"] * rows,
            }
        )
        archives._write(base / "data" / name, table)
        seed += rows


# --- real size ----------------------------------------------------------------------------------------------

SIZE = Size(
    "parquet rows of a grey JPEG 512x512, 100 rows per row group",
    "ROCO (Pelka et al. 2018): PMC radiology figures 160 to about 1,200 px wide (the MedIR/roco dataset "
    "viewer) [512 taken for all]",
)
REAL_SEED = 16  # added to the run's seed: each source its own, whichever others are written


def real_size(base: Path, n: int, seed: int) -> dict:
    for f, (name, _) in enumerate(ROCO_FILES):
        images = [encoded(fields.photo((512, 512), seed + f * 1000 + k, 1), "JPEG") for k in range(n)]
        table = pa.table({
            "image_id": [f"ROCO_{f * 100000 + k:05d}" for k in range(n)],
            "image": pa.array([{"bytes": b, "path": None} for b in images], archives.IMAGE),
            "question": ["What is shown?"] * n, "answer": ["CT"] * n,
        })  # fmt: skip
        archives._write(base / "data" / name, table, real_archives.ROW_GROUP)
    return {}
