"""BraTS 2023 Pediatric Tumors (BraTS-PED): the demo's tiny copy of its download (`demo`) and real-size items
(`real_size`, `SIZE`, `REAL_SEED`); preprocess/demo/folders.py finds them."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from preprocess.demo import real_volumes
from preprocess.demo.real_sizes import Size
from preprocess.demo.release_images import volumes
from preprocess.demo.volumes import mr_phantom, save_nifti

# The subsets whose images the demo's release ships, each with the oracle that makes them from the demo's raw
# files (preprocess/demo/release_images: the reference rule stated apart from the conversions).
RELEASE_IMAGES = {
    "3D_Task/BraTS2023": volumes.brats_ped,
}


def demo(base: Path) -> None:
    training = "ASNR-MICCAI-BraTS2023-PED-Challenge-TrainingData"
    cases = [
        (f"{training}/{training}", "BraTS-PED-00002-000", "train"),
        ("ASNR-MICCAI-BraTS2023-PED-Challenge-ValidationData", "BraTS-PED-00101-000", "val"),
    ]
    for n, (folder, case, split) in enumerate(cases):
        for modality in ("t1n", "t1c", "t2w", "t2f"):
            save_nifti(base / folder / case / f"{case}-{modality}.nii.gz", mr_phantom(seed=n + len(modality)))
        if split == "train":
            save_nifti(base / folder / case / f"{case}-seg.nii.gz", np.zeros((40, 36, 30), np.uint8))


# --- real size ----------------------------------------------------------------------------------------------

SIZE = Size(
    "four int16 .nii.gz sequences 240x240x155 and a uint8 seg per case",
    "BraTS 2023 (Kazerooni et al. 2023): 240x240x155, 1 mm; 3d-volumes.md 2",
)
REAL_SEED = 25  # added to the run's seed: each source its own, whichever others are written


def real_size(base: Path, n: int, seed: int) -> dict:
    folder = "ASNR-MICCAI-BraTS2023-PED-Challenge-TrainingData"
    for k in range(n):
        case = f"BraTS-PED-{seed * 1000 + k + 2:05d}-000"
        for m, modality in enumerate(("t1n", "t1c", "t2w", "t2f")):
            save_nifti(
                base / folder / folder / case / f"{case}-{modality}.nii.gz",
                real_volumes._mr(real_volumes.BRATS, seed + k * 4 + m),
                real_volumes.BRATS_LPS,
            )
        save_nifti(
            base / folder / folder / case / f"{case}-seg.nii.gz",
            np.zeros(real_volumes.BRATS, np.uint8),
            real_volumes.BRATS_LPS,
        )
    return {}
