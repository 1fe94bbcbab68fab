"""HaN-Seg: the demo's tiny copy of its download (`demo`) and real-size items (`real_size`, `SIZE`, `REAL_SEED`);
preprocess/demo/folders.py finds them."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from preprocess.demo import fields, real_volumes
from preprocess.demo.files import put
from preprocess.demo.real_sizes import Size
from preprocess.demo.release_images import volumes
from preprocess.demo.volumes import ct_phantom, mr_phantom, save_nrrd

# The subsets whose images the demo's release ships, each with the oracle that makes them from the demo's raw
# files (preprocess/demo/release_images: the reference rule stated apart from the conversions).
RELEASE_IMAGES = {
    "3D_Task/HaN-Seg": volumes.hanseg,
}


def demo(base: Path) -> None:
    for n, case in enumerate(("case_01", "case_02")):
        folder = base / "set_1" / case
        save_nrrd(folder / f"{case}_IMG_CT.nrrd", ct_phantom(seed=n))
        save_nrrd(folder / f"{case}_IMG_MR_T1.nrrd", (mr_phantom(seed=n) * 3).astype(np.int16), spacing=(1.0, 1.0, 1.2))
        save_nrrd(folder / f"{case}_OAR_Brainstem.seg.nrrd", (ct_phantom(seed=n) > 500).astype(np.uint8))
    (base / "set_1" / "OAR_data.csv").write_text("case;Brainstem\ncase_01;1\ncase_02;1\n")


# --- real size ----------------------------------------------------------------------------------------------

SIZE = Size(
    "gzip NRRD: CT int16 1024x1024x180 at 0.558x0.558x2 mm, MR T1 int16 512x512x86 at 0.703x0.703x3 mm",
    "HaN-Seg (Podobnik et al. 2023, Med Phys; measured on the release by third-party READMEs): CT 1024x1024 "
    "in-plane in all 42 cases (case_01 1024x1024x202 at 0.558x0.558x2.0 mm), 11,194 slices in all of which "
    "3,613 MR (about 180 CT and 86 MR a case), MR 512x512 (case_01 512x512x83 at 0.703x0.703x3.0 mm); "
    "3d-volumes.md 6",
)
REAL_SEED = 27  # added to the run's seed: each source its own, whichever others are written


def real_size(base: Path, n: int, seed: int) -> dict:
    rows = []
    for k in range(n):
        case = f"case_{k + 1:02d}"
        folder = base / "set_1" / case
        ct = fields.ct_slices((1024, 1024, 180), seed + k)
        save_nrrd(folder / f"{case}_IMG_CT.nrrd", ct, spacing=(0.558, 0.558, 2.0))
        save_nrrd(
            folder / f"{case}_IMG_MR_T1.nrrd", real_volumes._mr((512, 512, 86), seed + k), spacing=(0.703, 0.703, 3.0)
        )
        rows.append(f"{case};1")
    put(base / "set_1" / "OAR_data.csv", "case;Brainstem\n" + "\n".join(rows) + "\n")
    return {}
