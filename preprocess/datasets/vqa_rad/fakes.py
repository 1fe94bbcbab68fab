"""VQA-RAD (Hugging Face flaviagiammarino/vqa-rad): the demo's tiny copy of its download (`demo`) and real-size items
(`real_size`, `SIZE`, `REAL_SEED`); preprocess/demo/folders.py finds them."""

from __future__ import annotations

from pathlib import Path

from preprocess.demo import qa_parquets
from preprocess.demo.real_sizes import Size
from preprocess.demo.release_images import vqa

# The subsets whose images the demo's release ships, each with the oracle that makes them from the demo's raw
# files (preprocess/demo/release_images: the reference rule stated apart from the conversions).
RELEASE_IMAGES = {
    "2D_Task/VQA-RAD": vqa.vqa_rad,
}

# the parquet files after their split (test, train)
FILE_SUFFIX = "-00000-of-00001-0b1c2d3e4f.parquet"


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


def demo(base: Path) -> None:
    qa_parquets.demo_splits(base, VQA_RAD, FILE_SUFFIX, channels=1)


# --- real size ----------------------------------------------------------------------------------------------

SIZE = Size(
    "parquet rows of a grey JPEG 1024x1024",
    "VQA-RAD (Lau et al. 2018, Sci Data 5:180251): MedPix radiographs, CT and MR, about 500-2,000 px",
)
REAL_SEED = 18  # added to the run's seed: each source its own, whichever others are written


def real_size(base: Path, n: int, seed: int) -> dict:
    qa_parquets.real_splits(base, FILE_SUFFIX, n, seed, (1024, 1024), channels=1)
    return {"2D_Task/VQA-RAD/VQA_test.json": qa_parquets.records(n, "jpg")}
