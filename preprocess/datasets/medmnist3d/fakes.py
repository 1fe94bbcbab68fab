"""MedMNIST v2 / MedMNIST+ (3D): the demo's tiny copy of its download (`demo`) and real-size items (`real_size`,
`SIZE`, `REAL_SEED`); preprocess/demo/folders.py finds them."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from preprocess.demo import fields, real_npz
from preprocess.demo.files import npz
from preprocess.demo.images import pattern
from preprocess.demo.real_sizes import Size
from preprocess.demo.release_images import medmnist

# The subsets whose images the demo's release ships, each with the oracle that makes them from the demo's raw
# files (preprocess/demo/release_images: the reference rule stated apart from the conversions).
RELEASE_IMAGES = {
    "3D_Task/Organ3dMNIST": medmnist.organmnist3d,
}

# The subsets the demo leaves unbuilt on purpose, with the reason a build gives: it writes no raw files for them
# and ships no task files, so that its status, plan and report show not-built rows.
DEMO_LEFT_OUT = {
    "3D_Task/NoduleMNIST": "raw incomplete",
    "3D_Task/SynapseMNIST": "raw incomplete",
}


def demo(base: Path) -> None:
    """organmnist3d_64.npz with 2 train, 1 val and 3 test volumes of 64^3 (labels 0, 1, 2, ... per split)."""
    arrays = {}
    for split, count in (("train", 2), ("val", 1), ("test", 3)):
        volumes = np.stack([np.stack([pattern(i * 64 + k, (64, 64), 1) for k in range(64)]) for i in range(count)])
        arrays[f"{split}_images"] = volumes.astype(np.uint8)
        arrays[f"{split}_labels"] = (np.arange(count) % 11).reshape(-1, 1).astype(np.uint8)
    npz(base / "organmnist3d_64.npz", arrays)


# --- real size ----------------------------------------------------------------------------------------------

SIZE = Size(
    "organmnist3d.npz and organmnist3d_64.npz: uint8 (N, 28, 28, 28) and (N, 64, 64, 64)",
    "MedMNIST v2 3D (Yang et al. 2023); 3d-volumes.md 9",
)
REAL_SEED = 14  # added to the run's seed: each source its own, whichever others are written


def real_size(base: Path, n: int | dict, seed: int) -> dict:
    for variant, choice in real_npz.variants("medmnist3d")[1].items():
        size, arrays = choice["size"], {}
        for split, count in (("train", 2), ("val", 1), ("test", real_npz.items_at(n, variant))):
            volumes = [np.clip(fields.mr_slices((size,) * 3, seed + k, 200) + 20, 0, 255) for k in range(count)]
            arrays[f"{split}_images"] = np.stack(volumes).astype(np.uint8)
            arrays[f"{split}_labels"] = (np.arange(count) % 11).reshape(-1, 1).astype(np.uint8)
        npz(base / f"organmnist3d{choice['suffix']}.npz", arrays)
    return {}
