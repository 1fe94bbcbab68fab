"""CirrMRI600+: the demo's tiny copy of its download (`demo`) and real-size items (`real_size`, `SIZE`, `REAL_SEED`);
preprocess/demo/folders.py finds them."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from preprocess.demo import fields
from preprocess.demo.files import put
from preprocess.demo.real_sizes import Size
from preprocess.demo.release_images import volumes
from preprocess.demo.volumes import mr_phantom, save_nifti

# The subsets whose images the demo's release ships, each with the oracle that makes them from the demo's raw
# files (preprocess/demo/release_images: the reference rule stated apart from the conversions).
RELEASE_IMAGES = {
    "3D_Task/ChirrMRI600": volumes.chirrmri600,
    "3D_Task/CirrMRI600_Cross": volumes.cirrmri600_cross,
}

CIRRMRI_SPLITS = {"12": "train", "7": "test", "healthy_3": "test"}


def demo(base: Path) -> None:
    anisotropic = np.diag([1.4, 1.4, 5.0, 1])
    for sequence in ("T1", "T2"):
        root = base / "CirrMRI600+" / f"Cirrhosis_{sequence}_3D"  # extracted one level deeper
        for case, split_folder in (("12", "train"), ("7", "test"), ("99", "valid")):  # 99: not in the split CSV
            save_nifti(root / f"{split_folder}_images" / f"{case}.nii.gz", mr_phantom(seed=int(case)), anisotropic)
            save_nifti(root / f"{split_folder}_masks" / f"{case}.nii.gz", (mr_phantom(seed=1) > 0).astype(np.uint8))
        healthy = base / "CirrMRI600+" / "Healthy_subjects" / f"{sequence}_W_Healthy"
        save_nifti(healthy / f"{sequence}_images" / "3.nii.gz", mr_phantom(seed=3, empty=0), anisotropic)
        save_nifti(healthy / f"{sequence}_masks" / "3.nii.gz", (mr_phantom(seed=3) > 0).astype(np.uint8))
        rows = "".join(f"{folder},{split}\n" for folder, split in CIRRMRI_SPLITS.items())
        csv = base / f"Cirrhosis_{sequence}_slide_folders.csv"
        csv.write_text("\ufefffolder_name,split\n" + rows, encoding="utf-8")


# --- real size ----------------------------------------------------------------------------------------------

SIZE = Size(
    "float32 .nii.gz 320x260x64 (T1 and T2) and uint8 masks, plus one healthy case per sequence",
    "CirrMRI600+ (Jha et al. 2024, arXiv 2410.16296; Sci Data 2025): 628 scans (310 T1, 318 T2) of nearly "
    "40,000 slices, about 64 a volume [in-plane matrix assumed]; 3d-volumes.md 5",
)
REAL_SEED = 29  # added to the run's seed: each source its own, whichever others are written


def real_size(base: Path, n: int, seed: int) -> dict:
    shape, affine = (320, 260, 64), np.diag([1.4, 1.4, 5.0, 1])
    for sequence in ("T1", "T2"):
        root = base / "CirrMRI600+" / f"Cirrhosis_{sequence}_3D"
        rows = []
        for k in range(n):
            case = str(seed * 1000 + k + 1)
            save_nifti(root / "test_images" / f"{case}.nii.gz", fields.mr_slices(shape, seed + k), affine)
            save_nifti(root / "test_masks" / f"{case}.nii.gz", np.zeros(shape, np.uint8), affine)
            rows.append(f"{case},test\n")
        healthy = base / "CirrMRI600+" / "Healthy_subjects" / f"{sequence}_W_Healthy"
        save_nifti(healthy / f"{sequence}_images" / "3.nii.gz", fields.mr_slices(shape, seed + n), affine)
        save_nifti(healthy / f"{sequence}_masks" / "3.nii.gz", np.zeros(shape, np.uint8), affine)
        rows.append("healthy_3,test\n")
        put(base / f"Cirrhosis_{sequence}_slide_folders.csv", "\ufefffolder_name,split\n" + "".join(rows))
    return {}
