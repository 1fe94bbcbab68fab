"""Brain Tumor MRI Dataset (Kaggle): the demo's tiny copy of its download (`demo`) and real-size items (`real_size`,
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
    "2D_Task/Brain-Tumor-MRI": folders.brain_tumor_mri,
}


def demo(base: Path) -> None:
    names = {
        "glioma": ["Te-gl_0010.jpg", "Te-glTr_0007.jpg"],
        "meningioma": ["Te-me_0018.jpg"],
        "notumor": ["Te-no_0011.jpg"],
        "pituitary": ["Te-pi_0012.jpg"],
    }
    for n, (label, files) in enumerate(sorted(names.items())):
        for k, name in enumerate(files):
            put(base / "Testing" / label / name, encode(pattern(20 + n + k, channels=1), "JPEG"))
        put(base / "Training" / label / f"Tr-{label[:2]}_0001.jpg", encode(pattern(30 + n, channels=1), "JPEG"))


# --- real size ----------------------------------------------------------------------------------------------

SIZE = Size(
    "grey JPEG 512x512",
    "Brain Tumor MRI (Kaggle, Nickparvar 2021): its figshare classes 512x512; its no-tumour class from Br35H, "
    "173x189 to 1427x1200, median 346x320 (openmedlab/Awesome-Medical-Dataset) [512 taken for all]",
)
REAL_SEED = 8  # added to the run's seed: each source its own, whichever others are written


def real_size(base: Path, n: int, seed: int) -> dict:
    labels = ("glioma", "meningioma", "notumor", "pituitary")  # each of the four is a checked file group
    for k in range(max(n, len(labels))):
        label = labels[k % len(labels)]
        name = f"Te-{label[:2]}_{k:04d}.jpg"
        put(base / "Testing" / label / name, encoded(fields.photo((512, 512), seed + k, 1), "JPEG"))
    for label in ("glioma", "meningioma"):
        put(base / "Training" / label / f"Tr-{label[:2]}_0001.jpg", encoded(fields.photo((512, 512), seed, 1), "JPEG"))
    return {}
