"""MMDental: the demo's tiny copy of its download (`demo`) and real-size items (`real_size`, `SIZE`, `REAL_SEED`);
preprocess/demo/folders.py finds them."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from preprocess.demo import fields
from preprocess.demo.files import put
from preprocess.demo.real_sizes import Size
from preprocess.demo.release_images import volumes
from preprocess.demo.volumes import ct_phantom, save_nifti

# The subsets whose images the demo's release ships, each with the oracle that makes them from the demo's raw
# files (preprocess/demo/release_images: the reference rule stated apart from the conversions).
RELEASE_IMAGES = {
    "3D_Task/MMDental": volumes.mmdental,
}


def demo(base: Path) -> None:
    """CBCTs stored LPS (so the closest canonical flips two axes), uneven sides, voxels 0.3 mm."""
    for n, case in enumerate(("A001", "A002")):
        cbct = (ct_phantom(shape=(44, 38, 30), seed=4 + n) + 1000).astype(np.int16)
        save_nifti(base / case / f"{case}.nii.gz", cbct, np.diag([-0.3, -0.3, 0.3, 1.0]))
    (base / "records.csv").write_text(
        "case_id,visit,record\nA001,1,Caries &amp; filling\nA002,1,Impacted lower third molar\n"
    )


# --- real size ----------------------------------------------------------------------------------------------

SIZE = Size(
    "int16 CBCT .nii.gz 400x400x300 at 0.3 mm",
    "MMDental: 660 CBCTs [extent assumed from typical 0.3 mm, 12 cm CBCT fields]; 3d-volumes.md 11",
)
REAL_SEED = 31  # added to the run's seed: each source its own, whichever others are written


def real_size(base: Path, n: int, seed: int) -> dict:
    rows = []
    for k in range(n):
        case = f"A{k + 1:03d}"
        cbct = (fields.ct_slices((400, 400, 300), seed + k) + 1000).astype(np.int16)
        save_nifti(base / case / f"{case}.nii.gz", cbct, np.diag([-0.3, -0.3, 0.3, 1.0]))
        rows.append(f"{case},1,Caries &amp; filling\n")
    put(base / "records.csv", "case_id,visit,record\n" + "".join(rows))
    return {}
