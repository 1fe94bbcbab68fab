"""LC25000 lung and colon histopathology: the demo's tiny copy of its download (`demo`) and real-size items
(`real_size`, `SIZE`, `REAL_SEED`); preprocess/demo/folders.py finds them."""

from __future__ import annotations

from pathlib import Path

from preprocess.demo import fields
from preprocess.demo.files import encoded, put
from preprocess.demo.images import encode, pattern
from preprocess.demo.real_sizes import Size
from preprocess.demo.release_images import folders

# The subsets whose images the demo's release ships, each with the oracle that makes them from the demo's raw
# files (preprocess/demo/release_images: the reference rule stated apart from the conversions).
RELEASE_IMAGES = {
    "2D_Task/lc25000": folders.lc25000,
}


def demo(base: Path) -> None:
    sets = {"colon_image_sets": ["colon_aca", "colon_n"], "lung_image_sets": ["lung_aca", "lung_n", "lung_scc"]}
    for group, labels in sets.items():
        for n, label in enumerate(labels):
            name = f"{label.replace('_', '')}{n + 1}.jpeg"
            put(base / "lung_colon_image_set" / group / label / name, encode(pattern(50 + n), "JPEG"))


# --- real size ----------------------------------------------------------------------------------------------

SIZE = Size(
    "RGB JPEG 768x768",
    "LC25000 (Borkowski et al. 2019, arXiv:1912.12142): 768x768 JPEG",
)
REAL_SEED = 9  # added to the run's seed: each source its own, whichever others are written


def real_size(base: Path, n: int, seed: int) -> dict:
    sets = [("colon_image_sets", "colon_aca"), ("lung_image_sets", "lung_n")]
    for k in range(max(n, 2)):
        group, label = sets[k % 2]
        name = f"{label.replace('_', '')}{k + 1}.jpeg"
        folder = base / "lung_colon_image_set" / group / label
        put(folder / name, encoded(fields.photo((768, 768), seed + k), "JPEG"))
    return {}
