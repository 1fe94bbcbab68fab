"""BraTS 2023 Meningioma (BraTS-MEN): the demo's tiny copy of its download (`demo`) and real-size items (`real_size`,
`SIZE`, `REAL_SEED`); preprocess/demo/folders.py finds them."""

from __future__ import annotations

from pathlib import Path

from preprocess.demo import real_volumes
from preprocess.demo.real_sizes import Size
from preprocess.demo.release_images import volumes
from preprocess.demo.volumes import mr_phantom, save_nifti

# The subsets whose images the demo's release ships, each with the oracle that makes them from the demo's raw
# files (preprocess/demo/release_images: the reference rule stated apart from the conversions).
RELEASE_IMAGES = {
    "3D_Task/BraTS_MEN": volumes.brats_men,
}


def demo(base: Path) -> None:
    root = base / "ASNR-MICCAI-BraTS2023-MEN-Challenge-TrainingData" / "BraTS-MEN-Train"
    for case in ("BraTS-MEN-00004-000", "BraTS-MEN-00008-001"):
        for modality in ("t1n", "t2w"):
            save_nifti(root / case / f"{case}-{modality}.nii.gz", mr_phantom(shape=(40, 36, 20), empty=2))


# --- real size ----------------------------------------------------------------------------------------------

SIZE = Size(
    "four int16 .nii.gz sequences 240x240x155 per case",
    "BraTS 2023 MEN (LaBella et al. 2023): 240x240x155; 3d-volumes.md 1",
)
REAL_SEED = 26  # added to the run's seed: each source its own, whichever others are written


def real_size(base: Path, n: int, seed: int) -> dict:
    root = base / "ASNR-MICCAI-BraTS2023-MEN-Challenge-TrainingData" / "BraTS-MEN-Train"
    for k in range(n):
        case = f"BraTS-MEN-{seed * 1000 + k + 4:05d}-000"
        for m, modality in enumerate(("t1n", "t1c", "t2w", "t2f")):
            save_nifti(
                root / case / f"{case}-{modality}.nii.gz",
                real_volumes._mr(real_volumes.BRATS, seed + k * 4 + m),
                real_volumes.BRATS_LPS,
            )
    return {}
