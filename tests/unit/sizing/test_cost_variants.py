"""A cost for what the user builds (issue 42, item 2): MedMNIST's and MedSegBench's image size (config
`source_variants`) chooses the costs.yaml entry that prices a conversion, and the real-size fakes hold every size
under the upstream's names, so that each can be measured.

The expected values are the upstream's, written out here (raw-formats/2d-images.md 1-2: `{flag}{size_flag}.npz`
with no suffix at 28 px and `_64`, `_128`, `_224` otherwise; MedSegBench `{flag}_{size}.npz` at 128, 256 and 512;
uint8 images (N, S, S) or (N, S, S, 3); keys `{split}_images` and `{split}_labels`, MedSegBench `{split}_label`),
and the most bytes a PNG of S x S pixels can take, not read from the code under test.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile

import numpy as np
import pytest
import yaml

from conftest import REPO
from preprocess.errors import RegistryError
from preprocess.registry.loader import load_registry
from preprocess.sizing.costs import Cost, cost_of


def _cost(seconds: float) -> Cost:
    return Cost(seconds=seconds, files=1.0, bytes=seconds * 1e6)


# Made-up figures, one a key, so that which entry priced a conversion shows in its seconds.
COSTS = {
    "npz_unpack_2d/bloodmnist@28": _cost(0.028),
    "npz_unpack_2d/bloodmnist@224": _cost(0.224),
    "npz_unpack_2d@28": _cost(0.0028),
    "npz_unpack_2d@224": _cost(0.0224),
    "mask_bbox_crop/polypgen@128": _cost(0.128),
    "mask_bbox_crop/polypgen@512": _cost(0.512),
    "annotation_crop/vindr_mammo": _cost(0.1),
    "annotation_crop/vindr_mammo_physionet": _cost(0.2),
}


def _priced(variants: dict, subset_key: str, name: str | None = None) -> float:
    registry = load_registry(variants=variants, extras=False)
    subset = next(s for s in registry.subsets if s.key == subset_key)
    conversion = next(c for c in subset.conversions if name is None or c.name == name)
    return cost_of(registry, subset, conversion, COSTS).seconds


def test_the_cost_lookup_takes_the_entry_of_the_chosen_size():
    assert _priced({"medmnist": "28"}, "2D_Task/BloodMNIST") == 0.028
    assert _priced({"medmnist": "224"}, "2D_Task/BloodMNIST") == 0.224
    assert _priced({}, "2D_Task/BloodMNIST") == 0.224  # the default size, 224 (sources.yaml)
    # a flag without its own entry: the kind's entry of the same size, never another size's
    assert _priced({"medmnist": "28"}, "2D_Task/PathMNIST") == 0.0028
    assert _priced({"medmnist": "224"}, "2D_Task/PathMNIST") == 0.0224
    assert _priced({"medsegbench": "128"}, "2D_Task/Gastrointestinal", "polypgen") == 0.128
    assert _priced({}, "2D_Task/Gastrointestinal", "polypgen") == 0.512
    # VinDr-Mammo's copy chooses its recipe, which names its own entry
    assert _priced({"vindr_mammo": "physionet"}, "2D_Task/VindrMammo") == 0.2
    assert _priced({}, "2D_Task/VindrMammo") == 0.1


def test_a_size_without_a_cost_is_named_with_what_to_run():
    with pytest.raises(RegistryError) as caught:
        _priced({"medmnist": "64"}, "2D_Task/BloodMNIST")
    message = str(caught.value)
    assert "'npz_unpack_2d/bloodmnist@64'" in message and "'npz_unpack_2d@64'" in message
    assert "benchmarks/item_costs.py" in message


SIZES = {"medmnist": ["28", "64", "128", "224"], "medmnist3d": ["28", "64"], "medsegbench": ["128", "256", "512"]}


@pytest.mark.parametrize("source_id", sorted(SIZES))
def test_every_size_of_every_conversion_has_its_own_measured_cost(source_id):
    """The shipped costs.yaml prices each conversion of these sources at each size by an entry of that size,
    measured on real-size fakes of that size (its basis names the size), not by another size's."""
    from preprocess.sizing.costs import cost_key, fallback_key, load_costs

    costs = load_costs()
    for size in SIZES[source_id]:
        registry = load_registry(variants={source_id: size}, extras=False)
        for subset in registry.subsets:
            for conversion in (twin for entry in subset.conversions for twin in entry.twins()):
                if (conversion.params.get("source") or subset.source_ids[0]) != source_id:
                    continue
                key = cost_key(registry, subset, conversion)
                assert key.endswith(f"@{size}"), key
                entry = key if key in costs else fallback_key(key)
                assert f" at size {size} " in costs[entry].basis, (key, costs[entry].basis)


def _png_most(side: int, channels: int) -> int:
    """The most bytes a PNG of side x side 8-bit pixels takes: signature 8, IHDR 25, one IDAT 12 and IEND 12,
    a zlib stream of 6 bytes around stored deflate blocks of 5 bytes per 65,535, one filter byte a row."""
    raw = side * (side * channels + 1)
    return 8 + 25 + 12 + 12 + 6 + raw + 5 * (raw // 65535 + 1)


@pytest.mark.parametrize("size", ["28", "64", "128", "224"])
def test_plan_prices_medmnist_at_the_size_the_config_chooses(tmp_path, size):
    """With nothing downloaded, `plan` gives BloodMNIST's 3,421 RGB test images (one PNG each) at most the bytes
    a PNG of that size can take: the 224 px figure priced a 28 px build at 39 times its largest possible size."""
    raw, data = tmp_path / "raw", tmp_path / "DATA_BASEDIR"
    raw.mkdir()
    data.mkdir()
    config = tmp_path / "config.yaml"
    values = {"raw_root": str(raw), "data_basedir": str(data), "subsets": ["2D_Task/BloodMNIST"]}
    config.write_text(yaml.safe_dump({**values, "source_variants": {"medmnist": size}}))
    done = subprocess.run(
        [sys.executable, "-m", "preprocess", "plan", "--config", str(config), "--json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**{k: v for k, v in os.environ.items() if k != "MEDHEB_EXTRA_REGISTRY"}, "PYTHONPATH": str(REPO)},
    )
    assert done.returncode == 0, done.stderr
    (row,) = [e for e in json.loads(done.stdout) if e["stage"] == "convert"]  # the raw check's row besides
    assert row["items"] == 3421 and row["files"] == 3421
    assert 0 < row["bytes"] <= 3421 * _png_most(int(size), 3)


@pytest.fixture(scope="module")
def fakes(tmp_path_factory):
    from preprocess.cli import main

    folder = tmp_path_factory.mktemp("sizes") / "fakes"
    code = main(["demo", str(folder), "--real-sizes", "--items", "2", "--sources", "medmnist", "medsegbench"])
    assert code == 0
    return folder


MEDMNIST_NAMES = {"28": "bloodmnist.npz", "64": "bloodmnist_64.npz", "128": "bloodmnist_128.npz",
                  "224": "bloodmnist_224.npz"}  # fmt: skip


@pytest.mark.parametrize("size", sorted(MEDMNIST_NAMES, key=int))
def test_medmnist_fakes_are_written_at_every_size_under_the_upstream_names(fakes, size):
    path = fakes / "raw" / "MedMNIST" / MEDMNIST_NAMES[size]
    side = int(size)
    with zipfile.ZipFile(path) as archive:  # deflated, as the upstream's
        assert {info.compress_type for info in archive.infolist()} == {zipfile.ZIP_DEFLATED}
    with np.load(path) as arrays:
        expected = {f"{split}_{what}" for split in ("train", "val", "test") for what in ("images", "labels")}
        assert set(arrays.files) == expected
        assert arrays["test_images"].shape == (2, side, side, 3) and arrays["test_images"].dtype == np.uint8
        assert arrays["test_labels"].shape == (2, 1)
    with np.load(fakes / "raw" / "MedMNIST" / MEDMNIST_NAMES[size].replace("blood", "organa")) as arrays:
        assert arrays["test_images"].shape == (2, side, side)  # grey


@pytest.mark.parametrize("size", [128, 256, 512])
def test_medsegbench_fakes_are_written_at_every_size(fakes, size):
    with np.load(fakes / "raw" / "MedSegBench" / f"polypgen_{size}.npz") as arrays:
        assert arrays["test_images"].shape == (2, size, size, 3) and arrays["test_images"].dtype == np.uint8
        assert arrays["test_label"].shape == (2, size, size)
        assert set(np.unique(arrays["test_label"])) == {0, 1}
    with np.load(fakes / "raw" / "MedSegBench" / f"ultrasoundnerve_{size}.npz") as arrays:
        assert arrays["test_images"].shape == (2, size, size)


def test_a_config_per_size_checks_and_builds_that_size(fakes, tmp_path, capsys):
    from PIL import Image

    from preprocess.cli import main

    config = fakes / "variants" / "medmnist-28" / "config.yaml"
    assert yaml.safe_load(config.read_text())["source_variants"] == {"medmnist": "28"}
    check = ["check", "--config", str(config), "--results", str(tmp_path / "results"), "--quiet", "--strict"]
    assert main([*check, "--source", "medmnist"]) == 0
    assert main(["convert", "2D_Task/BloodMNIST", "--config", str(config), "--results", str(tmp_path / "results")]) == 0
    pngs = sorted((fakes / "DATA_BASEDIR" / "2D_Images" / "BloodMNIST" / "output_images" / "test").rglob("*.png"))
    assert len(pngs) == 2
    assert {Image.open(path).size for path in pngs} == {(28, 28)}
