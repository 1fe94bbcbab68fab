"""The cut of a conversion into jobs follows the cores (issue 42), so it must not show in what is built: a
subset built as many shards is byte for byte the one built as a single job (SHA-256 of every file of
DATA_BASEDIR, links by their target)."""

from __future__ import annotations

from pathlib import Path

import pytest

from digests import tree_digests
from preprocess.demo import write_demo
from preprocess.pipeline import steps
from preprocess.registry import splits
from preprocess.registry.config import settings_from_dict

# One subset of each cut kind the demo builds: files, npz rows, boxes of a CSV, volumes (train split too).
SUBSETS = ["2D_Task/APTOS", "2D_Task/BloodMNIST", "2D_Task/VindrCXR", "3D_Task/CT_RATE"]


def _build(folder: Path, shards: int) -> dict[str, str]:
    demo = write_demo(folder / "demo")
    values = {
        "raw_root": str(demo / "raw"),
        "data_basedir": str(demo / "DATA_BASEDIR"),
        "registry_overrides": str(demo / "registry-overrides.yaml"),
        "subsets": SUBSETS,
        "splits": "all",
    }
    settings = settings_from_dict(values)
    build = steps.Build(settings, settings.registry(), folder / "results")
    cut = 0
    for key in SUBSETS:
        subset = build.registry.subset(key)
        for conversion in splits.conversions(settings, subset):
            for shard in range(shards):
                build.convert(subset=key, conversion=conversion.name, shard=shard, shards=shards)
            cut += 1
    assert cut >= len(SUBSETS) + 1  # CT-RATE's train conversion besides
    return tree_digests(demo / "DATA_BASEDIR")


@pytest.mark.parametrize("many", [3])
def test_many_shards_build_the_same_bytes_as_one(tmp_path, many):
    one = _build(tmp_path / "one", 1)
    cut = _build(tmp_path / "many", many)
    images = [name for name in one if name.endswith(".png")]
    assert len(images) > 50  # the four subsets' images, test and train
    assert sorted(cut) == sorted(one)
    assert [name for name in one if cut[name] != one[name]] == []
