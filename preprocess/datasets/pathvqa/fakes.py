"""PathVQA (Hugging Face flaviagiammarino/path-vqa): the demo's tiny copy of its download (`demo`) and real-size
items (`real_size`, `SIZE`, `REAL_SEED`); preprocess/demo/folders.py finds them."""

from __future__ import annotations

from pathlib import Path

from preprocess.demo import qa_parquets
from preprocess.demo.real_sizes import Size
from preprocess.demo.release_images import vqa

# The subsets whose images the demo's release ships, each with the oracle that makes them from the demo's raw
# files (preprocess/demo/release_images: the reference rule stated apart from the conversions).
RELEASE_IMAGES = {
    "2D_Task/PathVQA": vqa.pathvqa,
}

# the parquet files after their split (test, train)
FILE_SUFFIX = "-00000-of-00001-9f8e7d6c5b.parquet"


PATHVQA = {
    "test": (220, [0], [(0, "What is present?", "necrosis"), (0, "Is this tissue malignant?", "yes"),
                        (1, "Is this tissue malignant?", "yes"), (1, "What is present?", "fibrosis"),
                        (1, "Where is this from?", "liver"), (2, "Is this tissue malignant?", "no"),
                        (None, "What does this show?", "nothing")]),
    "train": (230, [], [(0, "What is shown?", "granuloma"), (0, "Is there inflammation?", "yes"),
                        (1, "Is there inflammation?", "yes"), (1, "What is shown?", "metastasis")]),
}  # fmt: skip


def demo(base: Path) -> None:
    qa_parquets.demo_splits(base, PATHVQA, FILE_SUFFIX, channels=3)


# --- real size ----------------------------------------------------------------------------------------------

SIZE = Size(
    "parquet rows of an RGB JPEG 1024x768, 100 rows per row group",
    "PathVQA (He et al. 2020): textbook and PEIR figures, a few hundred to about 1,500 px [assumed]",
)
REAL_SEED = 17  # added to the run's seed: each source its own, whichever others are written


def real_size(base: Path, n: int, seed: int) -> dict:
    qa_parquets.real_splits(base, FILE_SUFFIX, n, seed, (768, 1024), channels=3)
    return {"2D_Task/PathVQA/Path-VQA_test.json": qa_parquets.records(n, "jpg")}
