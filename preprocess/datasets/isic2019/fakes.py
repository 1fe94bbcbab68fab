"""ISIC 2019 Challenge (test input): the demo's tiny copy of its download (`demo`) and real-size items (`real_size`,
`SIZE`, `REAL_SEED`); preprocess/demo/folders.py finds them."""

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
    "2D_Task/ISIC-2019": folders.isic2019,
}


def demo(base: Path) -> None:
    names = [f"ISIC_00{34321 + n}.jpg" for n in range(3)]
    for n, name in enumerate(names):
        put(base / "ISIC_2019_Test_Input" / name, encode(pattern(10 + n), "JPEG"))
    put(base / "ISIC_2019_Test_Input" / "LICENSE.txt", "CC BY-NC 4.0\n")
    for n in range(3):  # ISIC_2019_Training_Input.zip, for the train split
        put(base / "ISIC_2019_Training_Input" / f"ISIC_000000{n}.jpg", encode(pattern(15 + n), "JPEG"))


# --- real size ----------------------------------------------------------------------------------------------

SIZE = Size(
    "RGB JPEG 1024x1024, quality 95",
    "ISIC 2019 (BCN20000, Combalia et al. 2019): 1024x1024 dermoscopy JPEGs",
)
REAL_SEED = 5  # added to the run's seed: each source its own, whichever others are written


def real_size(base: Path, n: int, seed: int) -> dict:
    for k in range(n):
        name = f"ISIC_{seed * 10000 + k:07d}.jpg"
        put(base / "ISIC_2019_Test_Input" / name, encoded(fields.photo((1024, 1024), seed + k), "JPEG"))
    return {}
