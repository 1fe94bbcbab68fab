"""M3D-Cap (ct_quizze): the demo's tiny copy of its download (`demo`) and real-size items (`real_size`, `SIZE`,
`REAL_SEED`); preprocess/demo/folders.py finds them."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from preprocess.demo import fields
from preprocess.demo.files import encoded, put
from preprocess.demo.images import encode, pattern
from preprocess.demo.real_sizes import Size
from preprocess.demo.release_images import folders

# The subsets whose images the demo's release ships, each with the oracle that makes them from the demo's raw
# files (preprocess/demo/release_images: the reference rule stated apart from the conversions).
RELEASE_IMAGES = {
    "3D_Task/M3D": folders.m3d,
}


def demo(base: Path) -> None:
    folder = base / "M3D_Cap" / "ct_quizze" / "005375" / "Axial_C__delayed"
    folder.mkdir(parents=True, exist_ok=True)
    for k in (0, 1, 2, 10):
        (folder / f"{k}.png").write_bytes(encode(pattern(k, (32, 32), 1), "PNG"))
    (folder.parent / "text.txt").write_text("A demo caption.\n")


# --- real size ----------------------------------------------------------------------------------------------

SIZE = Size(
    "series of 40 windowed 8-bit PNG slices of 512x512 (an item is a slice), each with its text.txt",
    "M3D-Cap (Bai et al. 2024): Radiopaedia series as 8-bit PNG slices; 3d-volumes.md 10 [size assumed]",
)
REAL_SEED = 10  # added to the run's seed: each source its own, whichever others are written


def real_size(base: Path, n: int, seed: int) -> dict:
    """n series of 40 windowed 8-bit PNG slices of 512x512 and their caption."""
    for k in range(n):
        folder = base / "M3D_Cap" / "ct_quizze" / f"{5000 + k:06d}" / "Axial_C__delayed"
        volume = fields.ct_slices((512, 512, 40), seed + k)
        window = np.clip((volume.astype(np.float32) + 160) / 400 * 255, 0, 255).astype(np.uint8)
        for z in range(40):
            put(folder / f"{z}.png", encoded(window[:, :, z], "PNG"))
        put(folder.parent / "text.txt", "A caption.\n")
    return {}
