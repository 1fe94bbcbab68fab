"""MedPix ClinQA (Hugging Face adishourya/MEDPIX-ClinQA): the demo's tiny copy of its download (`demo`) and real-size
items (`real_size`, `SIZE`, `REAL_SEED`); preprocess/demo/folders.py finds them."""

from __future__ import annotations

from pathlib import Path

from preprocess.demo import archives, qa_parquets
from preprocess.demo.real_sizes import Size
from preprocess.demo.release_images import vqa

# The subsets whose images the demo's release ships, each with the oracle that makes them from the demo's raw
# files (preprocess/demo/release_images: the reference rule stated apart from the conversions).
RELEASE_IMAGES = {
    "2D_Task/MedPIX": vqa.medpix,
}

# MedPix ClinQA: two of the seven shards; image k is pattern(280 + k). Image 1 and 2 are asked the same
# question with other answers; image 0 and 1 share "What modality is this?" with other answers too.
MEDPIX_SHARDS = [
    [(0, "What abnormality is seen?", "pneumothorax"), (1, "What modality is this?", "CT")],
    [(1, "What abnormality is seen?", "appendicitis"), (2, "What modality is this?", "MRI"),
     (2, "What abnormality is seen?", "meningioma"), (0, "What modality is this?", "X-ray")],
]  # fmt: skip


def demo(base: Path) -> None:
    unique = qa_parquets.demo_images(280, 3, 1)
    for shard, rows in enumerate(MEDPIX_SHARDS):
        columns = _columns(
            [unique[k] for k, _, _ in rows],
            [f"MPX{1000 + shard * 10 + i}" for i in range(len(rows))],
            [q for _, q, _ in rows],
            [a for _, _, a in rows],
        )
        qa_parquets.write(base / "data" / f"train-0000{shard}-of-00007-1a2b3c.parquet", columns, image="image_id")


def _columns(images: list[bytes], cases: list[str], questions: list[str], answers: list[str]) -> dict:
    """MedPix ClinQA's columns: its images under image_id (sic), the mode CT for all, a case id a row."""
    return {
        "image_id": images,
        "mode": ["CT"] * len(images),
        "case_id": cases,
        "question": questions,
        "answer": answers,
    }


# --- real size ----------------------------------------------------------------------------------------------

SIZE = Size(
    "parquet shards of grey PNG 1024x1024 (image column image_id)",
    "MedPix case images of about 1,000 px [assumed]; 2d-images.md 8",
)
REAL_SEED = 19  # added to the run's seed: each source its own, whichever others are written


def real_size(base: Path, n: int, seed: int) -> dict:
    half = (n + 1) // 2
    for shard, rows in enumerate((range(half), range(half, n))):
        columns = _columns(
            qa_parquets.real_images(rows, seed, (1024, 1024), 1, "PNG"),
            [f"MPX{k}" for k in rows],
            [qa_parquets.question(k) for k in rows],
            [qa_parquets.answer(k) for k in rows],
        )
        path = base / "data" / f"train-0000{shard}-of-00007-1a2b3c.parquet"
        qa_parquets.write(path, columns, image="image_id", rows_per_group=archives.ROW_GROUP)
    return {"2D_Task/MedPIX/MedPix_test.json": qa_parquets.records(n, "png")}
