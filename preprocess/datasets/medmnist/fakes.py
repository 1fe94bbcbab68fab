"""MedMNIST v2 / MedMNIST+ (2D): the demo's tiny copy of its download (`demo`) and real-size items (`real_size`,
`SIZE`, `REAL_SEED`); preprocess/demo/folders.py finds them."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from preprocess.demo import fields, real_npz
from preprocess.demo.files import npz
from preprocess.demo.images import pattern
from preprocess.demo.real_sizes import Size
from preprocess.demo.release_images import medmnist
from preprocess.registry.loader import load_registry

# The subsets whose images the demo's release ships, each with the oracle that makes them from the demo's raw
# files (preprocess/demo/release_images: the reference rule stated apart from the conversions).
RELEASE_IMAGES = {
    "2D_Task/BloodMNIST": medmnist.bloodmnist,
    "2D_Task/ChestMNIST": medmnist.chestmnist,
    "2D_Task/OrganAMNIST": medmnist.organamnist,
}

# The subsets the demo leaves unbuilt on purpose, with the reason a build gives: it writes no raw files for them
# and ships no task files, so that its status, plan and report show not-built rows.
DEMO_LEFT_OUT = {
    "2D_Task/DermaMNIST": "raw incomplete",
    "2D_Task/OCTMNIST": "raw incomplete",
    "2D_Task/OrganCMNIST": "raw incomplete",
    "2D_Task/OrganSMNIST": "raw incomplete",
    "2D_Task/PathMNIST": "raw incomplete",
    "2D_Task/TissueMNIST": "raw incomplete",
}

# ChestMNIST test labels, written out: none, atelectasis + effusion, cardiomegaly, hernia.
CHEST_TEST_LABELS = [[0] * 14, [1, 0, 1] + [0] * 11, [0, 1] + [0] * 12, [0] * 13 + [1]]


def _medmnist_2d(base: Path, flag: str, size: int, channels: int, labels: list[str], multi: bool, seed: int):
    """An npz with MedMNIST's keys, dtypes and shapes; 3 train, 2 val and 4 test images.

    Single-label rows are 0, 1, 2, ... in each split; ChestMNIST's test rows are CHEST_TEST_LABELS.
    """
    rng = np.random.default_rng(seed)
    arrays = {}
    for split, count in (("train", 3), ("val", 2), ("test", 4)):
        images = np.stack([pattern(seed + i, (size, size), channels) for i in range(count)]).astype(np.uint8)
        if multi and split == "test":
            rows = np.array(CHEST_TEST_LABELS, np.uint8)
        elif multi:
            rows = rng.integers(0, 2, size=(count, len(labels)), dtype=np.uint8)
        else:
            rows = (np.arange(count) % len(labels)).reshape(-1, 1).astype(np.uint8)
        arrays[f"{split}_images"], arrays[f"{split}_labels"] = images, rows
    npz(base / f"{flag}_{size}.npz", arrays)


def demo(base: Path) -> None:
    from preprocess.registry.loader import load_registry

    registry = load_registry()
    for number, (key, flag, channels, multi) in enumerate(
        (
            ("2D_Task/BloodMNIST", "bloodmnist", 3, False),
            ("2D_Task/ChestMNIST", "chestmnist", 1, True),
            ("2D_Task/OrganAMNIST", "organamnist", 1, False),
        )
    ):
        labels = next(c for c in registry.subset(key).conversions).params["labels"]
        _medmnist_2d(base, flag, 224, channels, labels, multi, seed=number * 10)


# --- real size ----------------------------------------------------------------------------------------------

SIZE = Size(
    "npz at 28, 64, 128 and 224 px (a file a flag and size, deflated): every flag, RGB or grey and its labels "
    "as upstream; --full-counts: DermaMNIST with its full split counts 7,007/1,003/2,005",
    "MedMNIST+ (Yang et al. 2023; Zenodo 10519652): sizes 28/64/128/224; medmnist/info.py counts",
)
REAL_SEED = 13  # added to the run's seed: each source its own, whichever others are written


FULL_COUNTS = ("dermamnist",)  # --full-counts: these flags at their full split counts (sources.yaml npz counts)


def _medmnist_split(count: int, size: int, channels: int, seed: int, labels: int, multi: bool):
    """count images made from a bank of 16 fields with per-image noise and shift (fast for thousands)."""
    rng = np.random.default_rng(seed)
    bank = np.stack([fields.photo((size, size), seed + b, channels) for b in range(16)]).astype(np.int16)
    images = np.empty((count, size, size) + ((channels,) if channels > 1 else ()), np.uint8)
    for k in range(count):
        noise = rng.integers(-6, 7, images.shape[1:], dtype=np.int16)
        images[k] = np.clip(np.roll(bank[k % 16], k % size, axis=1) + noise, 0, 255)
    if multi:  # ChestX-ray14's prevalence: about 0.7 positive labels an image, half the images none
        rows = (rng.random((count, labels)) < 0.05).astype(np.uint8)
    else:
        rows = (np.arange(count) % labels).reshape(-1, 1).astype(np.uint8)
    return images, rows


def real_size(base: Path, n: int | dict, seed: int, full_counts: bool = False) -> dict:
    """Every flag (sources.yaml: its channels, and its labels: ChestMNIST's 14 columns are multi-label) at every
    size: n test images, 4 train, 2 val; with `full_counts`, DermaMNIST at its full split counts instead."""
    specs = {spec.id: spec.npz for spec in load_registry().source("medmnist").files}
    for variant, choice in real_npz.variants("medmnist")[1].items():
        size, suffix = choice["size"], choice["suffix"]
        for flag, spec in specs.items():
            counts = {"train": 4, "val": 2, "test": real_npz.items_at(n, variant)}
            if full_counts and flag in FULL_COUNTS:
                counts = spec["counts"]
            arrays = {}
            for split, count in counts.items():
                arrays[f"{split}_images"], arrays[f"{split}_labels"] = _medmnist_split(
                    count, size, spec["channels"], seed, spec["labels"], spec["labels"] > 1
                )
            npz(base / f"{flag}{suffix}.npz", arrays)
    return {}
