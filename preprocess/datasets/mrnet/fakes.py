"""MRNet v1.0: the demo's tiny copy of its download (`demo`) and real-size items (`real_size`, `SIZE`, `REAL_SEED`);
preprocess/demo/folders.py finds them."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from preprocess.demo import fields
from preprocess.demo.files import put
from preprocess.demo.images import pattern
from preprocess.demo.real_sizes import Size


def demo(base: Path) -> None:
    root = base / "MRNet-v1.0"
    for plane, (case, slices) in {"axial": ("1130", 24), "coronal": ("1130", 8), "sagittal": ("1131", 16)}.items():
        volume = np.stack([pattern(k, (32, 32), 1) for k in range(slices)]).astype(np.uint8)
        (root / "valid" / plane).mkdir(parents=True, exist_ok=True)
        np.save(root / "valid" / plane / f"{case}.npy", volume)
    for task in ("abnormal", "acl", "meniscus"):  # headerless, ids zero-padded to 4 digits
        (root / f"valid-{task}.csv").write_text("1130,1\n1131,0\n")
    for plane in ("axial", "coronal", "sagittal"):  # the train split: case 0000 of 12 slices
        (root / "train" / plane).mkdir(parents=True, exist_ok=True)
        np.save(root / "train" / plane / "0000.npy", np.stack([pattern(50 + k, (32, 32), 1) for k in range(12)]))


# --- real size ----------------------------------------------------------------------------------------------

SIZE = Size(
    "uint8 .npy (30, 256, 256) per plane",
    "MRNet (Bien et al. 2018): 256x256 slices, 17-61 per series; 3d-volumes.md 8",
)
REAL_SEED = 30  # added to the run's seed: each source its own, whichever others are written


def real_size(base: Path, n: int, seed: int) -> dict:
    root = base / "MRNet-v1.0"
    cases = [f"{1130 + k:04d}" for k in range(n)]
    for p, plane in enumerate(("axial", "coronal", "sagittal")):
        for k, case in enumerate(cases):
            volume = np.clip(fields.mr_slices((256, 256, 30), seed + k * 3 + p, 200) + 10, 0, 255).astype(np.uint8)
            (root / "valid" / plane).mkdir(parents=True, exist_ok=True)
            np.save(root / "valid" / plane / f"{case}.npy", np.ascontiguousarray(volume.transpose(2, 0, 1)))
    for task in ("abnormal", "acl", "meniscus"):
        put(root / f"valid-{task}.csv", "".join(f"{case},{k % 2}\n" for k, case in enumerate(cases)))
    return {}
