"""APTOS 2019 Blindness Detection: the demo's tiny copy of its download (`demo`) and real-size items (`real_size`,
`SIZE`, `REAL_SEED`); preprocess/demo/folders.py finds them."""

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
    "2D_Task/APTOS": folders.aptos,
}


def demo(base: Path) -> None:
    ids = ["000c1434d8d7", "0024cdab0c1e", "6cd606dc52e9", "82bb8a01935f"]
    put(base / "train.csv", "id_code,diagnosis\n" + "".join(f"{i},{n % 5}\n" for n, i in enumerate(ids)))
    for n, image_id in enumerate(ids):
        put(base / "train_images" / f"{image_id}.png", encode(pattern(n, (40, 48)), "PNG"))


# --- real size ----------------------------------------------------------------------------------------------

SIZE = Size(
    "RGB PNG 2416x1736",
    "Kaggle APTOS 2019 train_images: widths 474-4288, 2416x1736 one of the most common camera sizes",
)
REAL_SEED = 4  # added to the run's seed: each source its own, whichever others are written


def real_size(base: Path, n: int, seed: int) -> dict:
    ids = [item_id("aptos", seed, k)[:12] for k in range(n)]
    put(base / "train.csv", "id_code,diagnosis\n" + "".join(f"{i},{k % 5}\n" for k, i in enumerate(ids)))
    for k, image_id in enumerate(ids):
        put(base / "train_images" / f"{image_id}.png", encoded(fields.photo((1736, 2416), seed + k), "PNG"))
    return {}
