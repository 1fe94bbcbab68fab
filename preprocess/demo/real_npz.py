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

from preprocess.formats import textparse
from preprocess.rawdata.register import observed_files
from preprocess.registry.loader import DATASETS_DIR, load_registry


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
