"""MedMNIST: the benchmark's unpacking of the 2D npz files and its slicing of the 3D ones.

2D: every split, `2D_Images/<Flag>/output_images/<split>/<class>/<split>_<i:06d>.png`, i the position in the
split, the class the script's name map gives (MedMNIST's own label names, written out below), pixels as
stored. ChestMNIST's 14 binary labels the script could not have unpacked (it rejects multi-label rows): an
image goes to `no finding/` without a positive label, else into the folder of each positive label.
3D: train and test (not val), `<Flag>/<split>_slides/sample_<i:05d>/slice_<k:02d>.png`, every slice along
axis 0 (64 evenly spaced, floored, when there are more), uint8 as stored, other types min-max per slice.
"""

from __future__ import annotations

import numpy as np

from preprocess.demo.release_images.outputs import Outputs, gray_or_rgb

BLOOD = ["basophil", "eosinophil", "erythroblast",
         "immature granulocytes(myelocytes, metamyelocytes and promyelocytes)", "lymphocyte", "monocyte",
         "neutrophil", "platelet"]  # fmt: skip
CHEST = ["atelectasis", "cardiomegaly", "effusion", "infiltration", "mass", "nodule", "pneumonia", "pneumothorax",
         "consolidation", "edema", "emphysema", "fibrosis", "pleural", "hernia"]  # fmt: skip
ORGAN = ["bladder", "femur-left", "femur-right", "heart", "kidney-left", "kidney-right", "liver", "lung-left",
         "lung-right", "pancreas", "spleen"]  # fmt: skip
# the demo's flags: npz file, folder under 2D_Images/, class names (None: multi-label, as ChestMNIST)
FLAGS_2D = {
    "bloodmnist": ("bloodmnist_224.npz", "BloodMNIST", BLOOD, False),
    "chestmnist": ("chestmnist_224.npz", "ChestMNIST", CHEST, True),
    "organamnist": ("organamnist_224.npz", "OrganAMNIST", ORGAN, False),
}


def _image(images: np.ndarray, index: int):
    return lambda: gray_or_rgb(images[index].astype(np.uint8))


def _flag_2d(raw, flag: str) -> Outputs:
    return flag_2d(raw, *FLAGS_2D[flag])


def flag_2d(raw, npz: str, folder: str, classes: list[str], multi: bool) -> Outputs:
    """Every image of every split of one 2D npz, in its class folder (each positive label's when multi)."""
    made = {}
    with np.load(raw("medmnist") / npz) as arrays:
        for split in ("train", "val", "test"):
            images, labels = arrays[f"{split}_images"], arrays[f"{split}_labels"]
            for index, row in enumerate(labels):
                if multi:
                    places = [classes[k] for k in np.flatnonzero(row)] or ["no finding"]
                else:
                    places = [classes[int(row[0])]]
                for place in places:
                    made[f"2D_Images/{folder}/output_images/{split}/{place}/{split}_{index:06d}.png"] = _image(
                        images, index
                    )
    return made


def bloodmnist(raw, named) -> Outputs:
    return _flag_2d(raw, "bloodmnist")


def chestmnist(raw, named) -> Outputs:
    return _flag_2d(raw, "chestmnist")


def organamnist(raw, named) -> Outputs:
    return _flag_2d(raw, "organamnist")


def _slice_3d(volume: np.ndarray, index: int) -> np.ndarray:
    plane = volume[index]
    if plane.dtype == np.uint8:
        return plane
    low, high = plane.min(), plane.max()
    if high > low:
        return ((plane - low) / (high - low) * 255.0).astype(np.uint8)
    return np.zeros(plane.shape, np.uint8)


def organmnist3d(raw, named) -> Outputs:
    return flag_3d(raw, "organmnist3d_64.npz", "Organ3dMNIST")


def flag_3d(raw, npz: str, folder: str) -> Outputs:
    """Every slice of every train and test volume of one 3D npz."""
    made = {}
    with np.load(raw("medmnist3d") / npz) as arrays:
        for split in ("train", "test"):
            volumes = arrays[f"{split}_images"]
            for sample, volume in enumerate(volumes):
                count = volume.shape[0]
                picks = range(count) if count <= 64 else np.linspace(0, count - 1, 64).astype(int)
                for k, index in enumerate(picks):
                    name = f"3D_Images/{folder}/{split}_slides/sample_{sample:05d}/slice_{k:02d}.png"
                    made[name] = lambda v=volume, i=int(index): gray_or_rgb(_slice_3d(v, i))
    return made
