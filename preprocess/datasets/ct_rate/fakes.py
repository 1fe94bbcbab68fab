"""CT-RATE (Hugging Face ibrahimhamamci/CT-RATE): the demo's tiny copy of its download (`demo`) and real-size items
(`real_size`, `SIZE`, `REAL_SEED`); preprocess/demo/folders.py finds them."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from preprocess.demo import fields, real_volumes
from preprocess.demo.files import put
from preprocess.demo.real_sizes import Size
from preprocess.demo.volumes import ct_phantom, save_nifti, save_scaled_nifti


def demo(base: Path) -> None:
    scans = [("valid_1", "valid_1_a"), ("valid_2", "valid_2_a"), ("valid_2", "valid_2_b")]
    for n, (case, sub) in enumerate(scans):
        folder = base / "dataset" / "valid_fixed" / case / sub
        hu = ct_phantom(shape=(64, 48, 36), seed=n, body_axes=(0.6, 0.7))  # air beside the body: the DRR is cropped
        if sub == "valid_2_b":  # stored unsigned with a header intercept: the reference reads HU through it
            save_scaled_nifti(folder / f"{sub}_1.nii.gz", (hu + 1024).astype(np.uint16), 1.0, -1024.0)
        else:
            save_nifti(folder / f"{sub}_1.nii.gz", hu)
        save_nifti(folder / f"{sub}_2.nii.gz", ct_phantom(seed=n + 5))  # a second reconstruction: not used
    for n, (case, sub) in enumerate([("train_1", "train_1_a"), ("train_2", "train_2_a")]):  # the train split
        folder = base / "dataset" / "train_fixed" / case / sub
        save_nifti(folder / f"{sub}_1.nii.gz", ct_phantom(shape=(48, 40, 70), seed=20 + n, body_axes=(0.6, 0.7)))
        save_nifti(folder / f"{sub}_2.nii.gz", ct_phantom(seed=30 + n))  # a second reconstruction: not used
    metadata = base / "dataset" / "metadata" / "validation_metadata.csv"
    metadata.parent.mkdir(parents=True, exist_ok=True)
    metadata.write_text(
        "VolumeName,XYSpacing,ZSpacing,RescaleIntercept,RescaleSlope\n"
        + "".join(f'{sub}_1.nii.gz,"[0.8, 0.8]",2.0,-1024,1\n' for _, sub in scans)
    )


# --- real size ----------------------------------------------------------------------------------------------

SIZE = Size(
    "int16 HU .nii.gz 512x512x300 (gzip level 1, nibabel's)",
    "CT-RATE (Hamamci et al. 2024): in-plane 512-1024, 100-600 slices; 3d-volumes.md 3",
)
REAL_SEED = 23  # added to the run's seed: each source its own, whichever others are written


def real_size(base: Path, n: int, seed: int) -> dict:
    names = []
    for k in range(n):
        sub = f"valid_{seed * 1000 + k + 1}_a"
        names.append(f"{sub}_1.nii.gz")
        save_nifti(
            base / "dataset" / "valid_fixed" / sub[:-2] / sub / names[-1],
            fields.ct_slices(real_volumes.CT_SHAPE, seed + k),
            real_volumes.LPS_CT,
        )
    rows = "".join(f'{name},"[0.7, 0.7]",1.5,-1024,1\n' for name in names)
    put(
        base / "dataset" / "metadata" / "validation_metadata.csv",
        "VolumeName,XYSpacing,ZSpacing,RescaleIntercept,RescaleSlope\n" + rows,
    )
    return {}
