"""Real-size fakes of the npz sources, at every size they are published in: MedMNIST+ 2D (28, 64, 128 and 224 px),
MedMNIST 3D (28 and 64) and MedSegBench (128, 256 and 512), one file per flag and size under the upstream's name
(sources.yaml `variant` choices), so that a config's `source_variants` builds the size it chooses from the same
folder; and a config per variant (`write_variant_configs`).

Arrays as upstream (raw-formats/2d-images.md 1-2, 3d-volumes.md 9): uint8 images (N, S, S) grey or (N, S, S, 3)
RGB under `{split}_images`; MedMNIST labels (N, 1), or (N, 14) for ChestMNIST, under `{split}_labels`; MedSegBench
0/1 masks (N, S, S) under `{split}_label`, and per category `{split}_images_C1`, `{split}_label_C1`. Members are
deflated (`np.savez_compressed`): `np.load` of an upstream 224 px MedMNIST file inflates with zlib
(/work/shared/notes/performance-facts.md), and the reader here handles both deflated and stored members.

`n` of a writer is the test split's items, one number for every size or a mapping {variant: items} (a small
image costs little, so the cost benchmark writes more of them to see their per-item time above the noise).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import yaml

from preprocess.demo import fields
from preprocess.formats import textparse
from preprocess.rawdata.register import observed_files
from preprocess.registry.loader import DATASETS_DIR, load_registry

FULL_COUNTS = ("dermamnist",)  # --full-counts: these flags at their full split counts (sources.yaml npz counts)
MEDSEGBENCH = {"polypgen": (3, 6), "isic2018": (3, 0), "uwaterlooskincancer": (3, 2), "ultrasoundnerve": (1, 0),
               "usforkidney": (1, 0)}  # fmt: skip


def variants(source_id: str) -> tuple[str | None, dict[str, dict]]:
    """A source's default variant and its choices in its dataset folder's sources.yaml, {variant: its fields
    (size, suffix)}; (None, {}) without variants."""
    spec = textparse.read_yaml(DATASETS_DIR / source_id / "sources.yaml")["sources"][source_id].get("variant") or {}
    choices = {str(name): dict(values) for name, values in spec.get("choices", {}).items()}
    return (str(spec["default"]) if spec else None), choices


def items_at(n: int | dict, variant: str) -> int:
    return n[variant] if isinstance(n, dict) else n


def _npz(path: Path, arrays: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as handle:
        np.savez_compressed(handle, **arrays)


def medsegbench(base: Path, n: int | dict, seed: int) -> dict:
    """Every flag at every size: n test images, 2 train and 1 val (the kind reads the test split)."""
    for variant, choice in variants("medsegbench")[1].items():
        size = choice["size"]
        margin = round(40 * size / 512)  # the mask a little larger than the box, at every size alike
        for number, (flag, (channels, categories)) in enumerate(MEDSEGBENCH.items()):
            arrays = {}
            for split, count in (("train", 2), ("val", 1), ("test", items_at(n, variant))):
                photos = [fields.photo((size, size), seed + number * 1000 + k, channels) for k in range(count)]
                images = np.stack(photos)
                labels = np.zeros((count, size, size), np.uint8)
                for k in range(count):
                    x0, y0, x1, y1 = (round(v) for v in fields.box(seed + k, size, size))
                    labels[k, y0 : y1 + margin, x0 : x1 + margin] = 1
                arrays[f"{split}_images"], arrays[f"{split}_label"] = images, labels
                for category in range(1, categories + 1):
                    share = slice(category - 1, None, categories)
                    arrays[f"{split}_images_C{category}"], arrays[f"{split}_label_C{category}"] = (
                        images[share],
                        labels[share],
                    )
            _npz(base / f"{flag}_{size}.npz", arrays)
    return {}


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


def medmnist(base: Path, n: int | dict, seed: int, full_counts: bool = False) -> dict:
    """Every flag (sources.yaml: its channels, and its labels: ChestMNIST's 14 columns are multi-label) at every
    size: n test images, 4 train, 2 val; with `full_counts`, DermaMNIST at its full split counts instead."""
    npz = {spec.id: spec.npz for spec in load_registry().source("medmnist").files}
    for variant, choice in variants("medmnist")[1].items():
        size, suffix = choice["size"], choice["suffix"]
        for flag, spec in npz.items():
            counts = {"train": 4, "val": 2, "test": items_at(n, variant)}
            if full_counts and flag in FULL_COUNTS:
                counts = spec["counts"]
            arrays = {}
            for split, count in counts.items():
                arrays[f"{split}_images"], arrays[f"{split}_labels"] = _medmnist_split(
                    count, size, spec["channels"], seed, spec["labels"], spec["labels"] > 1
                )
            _npz(base / f"{flag}{suffix}.npz", arrays)
    return {}


def medmnist3d(base: Path, n: int | dict, seed: int) -> dict:
    for variant, choice in variants("medmnist3d")[1].items():
        size, arrays = choice["size"], {}
        for split, count in (("train", 2), ("val", 1), ("test", items_at(n, variant))):
            volumes = [np.clip(fields.mr_slices((size,) * 3, seed + k, 200) + 20, 0, 255) for k in range(count)]
            arrays[f"{split}_images"] = np.stack(volumes).astype(np.uint8)
            arrays[f"{split}_labels"] = (np.arange(count) % 11).reshape(-1, 1).astype(np.uint8)
        _npz(base / f"organmnist3d{choice['suffix']}.npz", arrays)
    return {}


def variant_folder(directory: Path, chosen: dict) -> Path:
    """Where the config of one choice of variants lives: DIR/variants/medmnist-28/ (DIR itself: the defaults)."""
    if not chosen:
        return Path(directory)
    return Path(directory) / "variants" / "+".join(f"{source}-{variant}" for source, variant in sorted(chosen.items()))


def write_variant_configs(directory: Path, sources) -> list[dict]:
    """For each source of `sources` with variants, each choice but its default: DIR/variants/SOURCE-VARIANT/
    config.yaml (DIR/config.yaml with `source_variants` set) and the registry overrides it reads, the
    source's files observed at that variant (names, MD5s, npz split counts). Returns the choices written."""
    directory = Path(directory)
    base = textparse.read_yaml(directory / "config.yaml")
    overrides = textparse.read_yaml(directory / "registry-overrides.yaml")
    written = []
    for source_id in sources:
        default, choices = variants(source_id)
        for variant in choices:
            if variant == default:
                continue
            chosen = {source_id: variant}
            registry = load_registry(variants=chosen)
            files = observed_files(registry.source(source_id), Path(base["raw_root"]))[0]
            folder = variant_folder(directory, chosen)
            folder.mkdir(parents=True, exist_ok=True)
            mine = {**overrides, "sources": {**overrides["sources"], source_id: {"files": files}}}
            (folder / "registry-overrides.yaml").write_text(
                f"# Real-size fakes at {source_id} variant {variant}: their own counts and MD5s.\n"
                + yaml.safe_dump(mine, sort_keys=True),
                encoding="utf-8",
            )
            config = {**base, "registry_overrides": str(folder / "registry-overrides.yaml"), "source_variants": chosen}
            (folder / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
            written.append(chosen)
    return written
