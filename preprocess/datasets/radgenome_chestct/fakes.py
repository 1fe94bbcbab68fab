"""RadGenome-ChestCT (Hugging Face RadGenome/RadGenome-ChestCT): the demo's tiny copy of its download (`demo`) and
real-size items (`real_size`, `SIZE`, `REAL_SEED`); preprocess/demo/folders.py finds them."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from preprocess.demo import fields, real_volumes
from preprocess.demo.real_sizes import Size
from preprocess.demo.release_images import volumes
from preprocess.demo.volumes import ct_phantom, save_nifti, save_scaled_nifti

# The subsets whose images the demo's release ships, each with the oracle that makes them from the demo's raw
# files (preprocess/demo/release_images: the reference rule stated apart from the conversions).
RELEASE_IMAGES = {
    "3D_Task/RadGen_CT": volumes.radgenome,
}


def demo(base: Path) -> None:
    folder = base / "dataset" / "valid_preprocessed" / "valid_1004" / "valid_1004a"  # no underscore upstream
    save_nifti(folder / "valid_1004_a_1.nii.gz", ct_phantom(seed=2))
    train = base / "dataset" / "train_preprocessed"  # the train split, named as the valid one
    save_nifti(train / "train_16" / "train_16a" / "train_16_a_1.nii.gz", ct_phantom(shape=(48, 40, 70), seed=40))
    save_nifti(train / "train_16" / "train_16a" / "train_16_a_2.nii.gz", ct_phantom(seed=41))  # not used
    # fewer than 64 slices (the indices repeat), stored unsigned with a header intercept: HU via the header
    stored = (ct_phantom(seed=42) + 1024).astype(np.uint16)
    save_scaled_nifti(train / "train_3" / "train_3b" / "train_3_b_1.nii.gz", stored, 1.0, -1024.0)


# --- real size ----------------------------------------------------------------------------------------------

SIZE = Size(
    "int16 HU .nii.gz 512x512x300",
    "RadGenome-ChestCT: the CT-RATE volumes, CT-CLIP preprocessed; 3d-volumes.md 4",
)
REAL_SEED = 24  # added to the run's seed: each source its own, whichever others are written


def real_size(base: Path, n: int, seed: int) -> dict:
    for k in range(n):
        case = f"valid_{seed * 1000 + k + 1}"
        path = base / "dataset" / "valid_preprocessed" / case / f"{case}a" / f"{case}_a_1.nii.gz"
        save_nifti(path, fields.ct_slices(real_volumes.CT_SHAPE, seed + k), real_volumes.LPS_CT)
    return {}
