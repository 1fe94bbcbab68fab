"""ROCO-QA (Hugging Face adishourya/ROCO-QA, and adishourya/ROCO-QA-Train for its Train rows): the demo's tiny copy
of its download (`demo`) and real-size items (`real_size`, `SIZE`, `REAL_SEED`); preprocess/demo/folders.py finds
them."""

from __future__ import annotations

from pathlib import Path

from preprocess.demo import archives, qa_parquets
from preprocess.demo.real_sizes import Size
from preprocess.demo.release_images import parquets

# The subsets whose images the demo's release ships, each with the oracle that makes them from the demo's raw
# files (preprocess/demo/release_images: the reference rule stated apart from the conversions).
RELEASE_IMAGES = {
    "2D_Task/ROCO-VQA": parquets.roco_qa,
}

# The five upstream files, in the benchmark's reading order, with a few rows each ("Vaild" sic). One counter runs
# over the five: the demo's Test rows are its images 6 to 8 (pattern 266 to 268).
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
        images = qa_parquets.demo_images(260 + seed, rows, 1, jpeg=range(rows))  # all JPEG
        qa_parquets.write(base / "data" / name, _columns([f"ROCO_{seed + i:05d}" for i in range(rows)], images))
        seed += rows


def _columns(ids: list[str], images: list[bytes]) -> dict:
    """ROCO-QA's columns: its image id before the image, one question for all."""
    return {"image_id": ids, "image": images, "question": ["What is shown?"] * len(ids), "answer": ["CT"] * len(ids)}


# --- real size ----------------------------------------------------------------------------------------------

SIZE = Size(
    "parquet rows of a grey JPEG 512x512, 100 rows per row group",
    "ROCO (Pelka et al. 2018): PMC radiology figures 160 to about 1,200 px wide (the MedIR/roco dataset "
    "viewer) [512 taken for all]",
)
REAL_SEED = 16  # added to the run's seed: each source its own, whichever others are written


def real_size(base: Path, n: int, seed: int) -> dict:
    for f, (name, _) in enumerate(ROCO_FILES):
        images = qa_parquets.real_images(range(n), seed + f * 1000, (512, 512), 1, "JPEG")
        columns = _columns([f"ROCO_{f * 100000 + k:05d}" for k in range(n)], images)
        qa_parquets.write(base / "data" / name, columns, rows_per_group=archives.ROW_GROUP)
    return {}
