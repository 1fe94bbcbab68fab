"""SynthRAD2023 Task 1: the demo's tiny copy of its download (`demo`) and real-size items (`real_size`, `SIZE`,
`REAL_SEED`); preprocess/demo/folders.py finds them."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from preprocess.demo import fields
from preprocess.demo.real_sizes import Size
from preprocess.demo.release_images import volumes
from preprocess.demo.volumes import ct_phantom, mr_phantom, save_nifti

# The subsets whose images the demo's release ships, each with the oracle that makes them from the demo's raw
# files (preprocess/demo/release_images: the reference rule stated apart from the conversions).
RELEASE_IMAGES = {
    "3D_Task/SynthRAD": volumes.synthrad,
}


def demo(base: Path) -> None:
    for n, case in enumerate(("1BA001", "1BC002", "1PA004", "1PC005")):
        region = "brain" if case[1] == "B" else "pelvis"
        affine = np.diag([1.0, 1.0, 1.0 if region == "brain" else 2.5, 1])
        folder = base / "Task1" / region / case
        save_nifti(folder / "ct.nii.gz", ct_phantom(seed=n), affine)
        save_nifti(folder / "mr.nii.gz", mr_phantom(seed=n), affine)
        save_nifti(folder / "mask.nii.gz", np.ones((40, 36, 30), np.uint8), affine)
    overview = base / "Task1" / "brain" / "overview"
    overview.mkdir(parents=True, exist_ok=True)
    (overview / "1_brain_train.xlsx").write_bytes(b"PK\x03\x04 not a volume")


# --- real size ----------------------------------------------------------------------------------------------

SIZE = Size(
    "brain: CT int16 and MR float32 .nii.gz 260x220x180 at 1 mm, pelvis 448x294x119 at 1x1x2.5 mm, and a "
    "uint8 mask; items alternate brain and pelvis",
    "SynthRAD2023 (Thummerer et al. 2023, Med Phys) and its preprocessing repository: brain resampled to "
    "1x1x1 mm [extent assumed], pelvis to 1x1x2.5 mm, all 180 pelvis cases 390-586 x 248-410 x 84-153 "
    "(medians 448x294x119; SynthRAD2023/preprocessing, catacc-dev/Organizing-SynthRAD-dataset); "
    "3d-volumes.md 7",
)
REAL_SEED = 28  # added to the run's seed: each source its own, whichever others are written


PELVIS = np.diag([1.0, 1.0, 2.5, 1.0])


def real_size(base: Path, n: int, seed: int) -> dict:
    """Items alternate brain and pelvis (at least one of each)."""
    for k in range(max(n, 2)):
        if k % 2 == 0:
            folder, shape, affine = base / "Task1" / "brain" / f"1BA{k + 1:03d}", (260, 220, 180), np.eye(4)
        else:
            folder, shape, affine = base / "Task1" / "pelvis" / f"1PA{k + 1:03d}", (448, 294, 119), PELVIS
        save_nifti(folder / "ct.nii.gz", fields.ct_slices(shape, seed + k), affine)
        save_nifti(folder / "mr.nii.gz", fields.mr_slices(shape, seed + k), affine)
        save_nifti(folder / "mask.nii.gz", np.ones(shape, np.uint8), affine)
    return {}
