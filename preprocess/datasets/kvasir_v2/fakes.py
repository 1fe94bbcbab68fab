"""Kvasir v2: the demo's tiny copy of its download (`demo`) and real-size items (`real_size`, `SIZE`, `REAL_SEED`);
preprocess/demo/folders.py finds them."""

from __future__ import annotations

from pathlib import Path

from preprocess.demo import fields
from preprocess.demo.files import encoded, item_id, put
from preprocess.demo.images import encode, pattern
from preprocess.demo.real_sizes import Size
from preprocess.demo.release_images import folders

# The subsets whose images the demo's release ships, each with the oracle that makes them from the demo's raw
# files (preprocess/demo/release_images: the reference rule stated apart from the conversions).
RELEASE_IMAGES = {
    "2D_Task/Kvasir": folders.kvasir,
}

KVASIR_CLASSES = [
    "dyed-lifted-polyps",
    "dyed-resection-margins",
    "esophagitis",
    "normal-cecum",
    "normal-pylorus",
    "normal-z-line",
    "polyps",
    "ulcerative-colitis",
]


def demo(base: Path) -> None:
    for n, label in enumerate(KVASIR_CLASSES):
        name = f"{n:02d}a3b9e0-{label[:4]}-4c1d.jpg"
        put(base / "kvasir-dataset-v2" / label / name, encode(pattern(40 + n), "JPEG"))


# --- real size ----------------------------------------------------------------------------------------------

SIZE = Size(
    "RGB JPEG 720x576, quality 95",
    "Kvasir v2 (Pogorelov et al. 2017): 720x576 up to 1920x1072",
)
REAL_SEED = 6  # added to the run's seed: each source its own, whichever others are written


def real_size(base: Path, n: int, seed: int) -> dict:
    classes = sorted(KVASIR_CLASSES, key=lambda c: c not in ("polyps", "normal-cecum"))  # the checked ones first
    for k in range(n):
        label = classes[k % len(classes)]
        name = f"{item_id('kvasir', seed, k)[:8]}-{label[:4]}.jpg"
        put(base / "kvasir-dataset-v2" / label / name, encoded(fields.photo((576, 720), seed + k), "JPEG"))
    return {}
