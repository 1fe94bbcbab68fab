"""Retinal Fundus Multi-Disease Image Dataset (RFMiD): the demo's tiny copy of its download (`demo`) and real-size
items (`real_size`, `SIZE`, `REAL_SEED`); preprocess/demo/folders.py finds them."""

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
    "2D_Task/REtinal": folders.rfmid,
}


def demo(base: Path) -> None:
    header = "ID,Disease_Risk,DR,ARMD,MH\n"
    for split, folder, seed in (("Test_Set", "Test", 60), ("Training_Set", "Training", 70)):
        for n in range(1, 4):  # ids restart per split: the names collide across splits upstream
            put(base / split / split / folder / f"{n}.png", encode(pattern(seed + n), "PNG"))
    put(
        base / "Test_Set" / "Test_Set" / "RFMiD_Testing_Labels.csv",
        header + "".join(f"{n},1,{n % 2},0,0\n" for n in range(1, 4)),
    )


# --- real size ----------------------------------------------------------------------------------------------

SIZE = Size(
    "RGB PNG 4288x2848",
    "RFMiD (Pachade et al. 2021, Data 6:14): 4288x2848 (Kowa VX-10a), 2144x1424, 2048x1536",
)
REAL_SEED = 7  # added to the run's seed: each source its own, whichever others are written


def real_size(base: Path, n: int, seed: int) -> dict:
    for k in range(1, n + 1):
        put(base / "Test_Set" / "Test_Set" / "Test" / f"{k}.png", encoded(fields.photo((2848, 4288), seed + k), "PNG"))
    rows = "".join(f"{k},1,{k % 2},0,0\n" for k in range(1, n + 1))
    put(base / "Test_Set" / "Test_Set" / "RFMiD_Testing_Labels.csv", "ID,Disease_Risk,DR,ARMD,MH\n" + rows)
    return {}
