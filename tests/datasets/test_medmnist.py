"""MedMNIST: npz reading, PNG writing, class folders, 3D slices, and equality with `medmnist save`."""

from __future__ import annotations

import io
import multiprocessing
import os
import re
import shutil
import signal
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
import yaml
from PIL import Image

from preprocess.convert import medmnist
from preprocess.errors import OutputConflictError, PreprocessError, RawDataError
from preprocess.formats.npzio import NpzFile, structure_problems
from preprocess.formats.pngio import encode_png
from preprocess.pipeline import steps
from preprocess.rawdata.register import observed_files
from preprocess.registry.config import settings_from_dict
from preprocess.registry.loader import load_registry


def _decode(path_or_bytes) -> np.ndarray:
    source = io.BytesIO(path_or_bytes) if isinstance(path_or_bytes, bytes) else path_or_bytes
    with Image.open(source) as image:
        return np.array(image)


@pytest.mark.parametrize(
    ("shape", "dtype", "mode"),
    [
        ((28, 28), np.uint8, "L"),
        ((28, 28, 3), np.uint8, "RGB"),
        ((224, 160), np.uint8, "L"),
        ((7, 5), np.uint16, "I;16"),
        ((1, 1), np.uint8, "L"),
    ],
)
def test_png_round_trip(shape, dtype, mode):
    array = np.random.default_rng(3).integers(0, np.iinfo(dtype).max + 1, size=shape, dtype=dtype)
    data = encode_png(array)
    with Image.open(io.BytesIO(data)) as image:
        assert image.mode == mode
        assert np.array_equal(np.array(image), array)


_STRUCTURED_IMAGE = """
import sys
import numpy as np
from preprocess.formats.pngio import encode_png
rng = np.random.default_rng(7)
blocks = np.kron(rng.integers(0, 200, (28, 28)), np.ones((8, 8), np.int64))
image = (blocks + rng.integers(0, 4, blocks.shape)).astype(np.uint8)
sys.stdout.buffer.write(encode_png(image))
"""


def test_png_bytes_are_the_same_in_every_process():
    """Resumed runs compare bytes, so the same pixels must encode to the same bytes in any process, on any CPU."""
    cpus = sorted(os.sched_getaffinity(0))[:4]
    outputs = set()
    for cpu in cpus:
        command = [sys.executable, "-c", _STRUCTURED_IMAGE]
        done = subprocess.run(
            ["taskset", "-c", str(cpu), *command] if shutil.which("taskset") else command,
            capture_output=True,
            check=True,
        )
        outputs.add(done.stdout)
    assert len(outputs) == 1
    with Image.open(io.BytesIO(outputs.pop())) as image:
        assert image.size == (224, 224)


def test_png_rejects_what_it_cannot_write():
    with pytest.raises(ValueError, match=r"uint8 or uint16"):
        encode_png(np.zeros((4, 4), np.float32))
    with pytest.raises(ValueError, match=r"\(H, W\) or \(H, W, 3\)"):
        encode_png(np.zeros((4, 4, 2), np.uint8))


def _write_npz(
    path: Path, size: int, channels: int, counts=(3, 2, 5), labels: int = 1, classes: int = 8, dims=2, rows=None
):
    """MedMNIST's keys, dtypes and shapes; random pixels and labels, or the label `rows` given per split."""
    rng = np.random.default_rng(size + channels)
    arrays = {}
    for split, count in zip(("train", "val", "test"), counts, strict=True):
        shape = (count,) + (size,) * dims + ((3,) if channels == 3 else ())
        arrays[f"{split}_images"] = rng.integers(0, 256, size=shape, dtype=np.uint8)
        arrays[f"{split}_labels"] = rng.integers(0, classes if labels == 1 else 2, size=(count, labels), dtype=np.uint8)
        if rows and split in rows:
            arrays[f"{split}_labels"] = np.array(rows[split], np.uint8).reshape(count, labels)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(path, **arrays)
    return arrays


SPEC = {"dims": 2, "channels": 3, "labels": 1, "counts": {"train": 3, "val": 2, "test": 5}, "size": 28}


def test_npz_reader_matches_numpy(tmp_path):
    arrays = _write_npz(tmp_path / "a.npz", 28, 3)
    with NpzFile(tmp_path / "a.npz") as archive, np.load(tmp_path / "a.npz") as reference:
        assert archive.keys == sorted(reference.files)
        for key in reference.files:
            assert np.array_equal(archive.array(key), reference[key])
            assert archive.info(key).shape == arrays[key].shape
    assert structure_problems(tmp_path / "a.npz", SPEC) == []


def test_truncated_npz_names_the_file(tmp_path):
    _write_npz(tmp_path / "a.npz", 28, 3)
    data = (tmp_path / "a.npz").read_bytes()
    (tmp_path / "cut.npz").write_bytes(data[: len(data) * 2 // 3])
    with pytest.raises(RawDataError, match=r"cut.npz: not a readable .npz archive.*download it again"):
        NpzFile(tmp_path / "cut.npz")


def test_corrupt_member_is_caught_by_crc(tmp_path):
    _write_npz(tmp_path / "a.npz", 28, 1)
    data = bytearray((tmp_path / "a.npz").read_bytes())
    with zipfile.ZipFile(tmp_path / "a.npz") as archive:
        entry = archive.getinfo("test_images.npy")
    data[entry.header_offset + 30 + len("test_images.npy") + 200] ^= 0xFF
    (tmp_path / "bad.npz").write_bytes(bytes(data))
    with NpzFile(tmp_path / "bad.npz") as archive, pytest.raises(RawDataError, match=r"bad.npz\[test_images\]"):
        archive.array("test_images")


def test_structure_problems_name_key_and_expected_shape(tmp_path):
    arrays = _write_npz(tmp_path / "a.npz", 28, 3)
    del arrays["val_labels"]
    arrays["test_images"] = arrays["test_images"][:, :27]
    np.savez_compressed(tmp_path / "b.npz", **arrays)
    assert structure_problems(tmp_path / "b.npz", SPEC) == [
        "b.npz: no array 'val_labels' (it has: test_images, test_labels, train_images, train_labels, val_images)",
        "b.npz[test_images]: shape (5, 27, 28, 3), expected (5, 28, 28, 3)",
    ]


# --- the conversion, on a raw root of our own ---------------------------------------------------------


def _settings(
    tmp_path: Path, flags: dict, size: str = "28", source: str = "medmnist", counts=(3, 2, 5), rows=None, **extra
):
    """A raw root holding the given npz files, with an override that registers their counts and MD5s."""
    raw = tmp_path / "raw"
    registry = load_registry(variants={source: size})
    arrays = {}
    for flag, (channels, labels) in flags.items():
        spec = registry.source(source).file(flag)
        arrays[flag] = _write_npz(
            raw / "MedMNIST" / spec.paths[0],
            int(size),
            channels,
            counts=counts,
            labels=labels,
            classes=len(_labels(registry, flag)),
            dims=spec.npz["dims"],
            rows=rows,
        )
    files, _ = observed_files(registry.source(source), raw)
    overrides = tmp_path / "overrides.yaml"
    overrides.write_text(yaml.safe_dump({"sources": {source: {"files": files}}}))
    settings = settings_from_dict(
        {
            "raw_root": str(raw),
            "data_basedir": str(tmp_path / "DATA"),
            "subsets": "all",
            "registry_overrides": str(overrides),
            "source_variants": {source: size},
            **extra,
        }
    )
    return settings, arrays


def _labels(registry, flag):
    subset = next(s for s in registry.subsets if s.conversions[0].params.get("flag") == flag)
    return subset.conversions[0].params["labels"]


def _build(settings, subset, workers=1, results=None):
    return steps.Build(settings, results=results).convert(subset=subset, workers=workers)


# The class folder names of the benchmark's script (Image_Classification/MNIST/unzip_MNIST.py), written out.
REFERENCE_LABELS = {
    "pathmnist": ["adipose", "background", "debris", "lymphocytes", "mucus", "smooth muscle", "normal colon mucosa",
                  "cancer-associated stroma", "colorectal adenocarcinoma epithelium"],
    "chestmnist": ["atelectasis", "cardiomegaly", "effusion", "infiltration", "mass", "nodule", "pneumonia",
                   "pneumothorax", "consolidation", "edema", "emphysema", "fibrosis", "pleural", "hernia"],
    "dermamnist": ["actinic keratoses and intraepithelial carcinoma", "basal cell carcinoma",
                   "benign keratosis-like lesions", "dermatofibroma", "melanoma", "melanocytic nevi",
                   "vascular lesions"],
    "octmnist": ["choroidal neovascularization", "diabetic macular edema", "drusen", "normal"],
    "bloodmnist": ["basophil", "eosinophil", "erythroblast",
                   "immature granulocytes(myelocytes, metamyelocytes and promyelocytes)", "lymphocyte", "monocyte",
                   "neutrophil", "platelet"],
    "tissuemnist": ["Collecting Duct, Connecting Tubule", "Distal Convoluted Tubule", "Glomerular endothelial cells",
                    "Interstitial endothelial cells", "Leukocytes", "Podocytes", "Proximal Tubule Segments",
                    "Thick Ascending Limb"],
    **{flag: ["bladder", "femur-left", "femur-right", "heart", "kidney-left", "kidney-right", "liver", "lung-left",
              "lung-right", "pancreas", "spleen"] for flag in ("organamnist", "organcmnist", "organsmnist")},
    "organmnist3d": ["liver", "kidney-right", "kidney-left", "femur-right", "femur-left", "bladder", "heart",
                     "lung-right", "lung-left", "spleen", "pancreas"],
    "nodulemnist3d": ["benign", "malignant"],
    "synapsemnist3d": ["inhibitory synapse", "excitatory synapse"],
}  # fmt: skip


@pytest.mark.registry_wide
def test_every_label_list_is_the_reference_name_map_letter_for_letter():
    registry = load_registry()
    found = {}
    for subset in registry.subsets:
        for conversion in subset.conversions:
            if conversion.kind in ("npz_unpack_2d", "npz_slices_3d"):
                found[conversion.params["flag"]] = conversion.params["labels"]
    assert found == REFERENCE_LABELS


def _reference_png(array: np.ndarray) -> np.ndarray:
    """What the reference script's save does: astype(uint8), PIL mode L (2D) or RGB (3 channels)."""
    return np.array(Image.fromarray(array.astype(np.uint8), mode="RGB" if array.ndim == 3 else "L"))


def test_2d_reference_names_and_pixels_in_every_split(tmp_path):
    rows = {"train": [4, 0, 7], "val": [3, 3], "test": [0, 6, 2, 0, 1]}
    settings, _ = _settings(tmp_path, {"bloodmnist": (3, 1)}, rows=rows, splits="all")  # train and val too
    _build(settings, "BloodMNIST")
    root = tmp_path / "DATA" / "2D_Images" / "BloodMNIST" / "output_images"
    expected = {
        "train/lymphocyte/train_000000.png": ("train", 0),
        "train/basophil/train_000001.png": ("train", 1),
        "train/platelet/train_000002.png": ("train", 2),
        "val/immature granulocytes(myelocytes, metamyelocytes and promyelocytes)/val_000000.png": ("val", 0),
        "val/immature granulocytes(myelocytes, metamyelocytes and promyelocytes)/val_000001.png": ("val", 1),
        "test/basophil/test_000000.png": ("test", 0),
        "test/neutrophil/test_000001.png": ("test", 1),
        "test/erythroblast/test_000002.png": ("test", 2),
        "test/basophil/test_000003.png": ("test", 3),
        "test/eosinophil/test_000004.png": ("test", 4),
    }
    assert {p.relative_to(root).as_posix() for p in root.rglob("*.png")} == set(expected)
    with np.load(tmp_path / "raw" / "MedMNIST" / "bloodmnist.npz") as npz:
        for name, (split, index) in expected.items():
            with Image.open(root / name) as image:
                assert image.mode == "RGB"
                assert np.array_equal(np.array(image), _reference_png(npz[f"{split}_images"][index]))


def test_2d_gray_images_are_mode_l(tmp_path):
    settings, _ = _settings(tmp_path, {"organamnist": (1, 1)}, rows={"test": [10, 9, 0, 1, 2]})
    _build(settings, "OrganAMNIST")
    root = tmp_path / "DATA" / "2D_Images" / "OrganAMNIST" / "output_images" / "test"
    with np.load(tmp_path / "raw" / "MedMNIST" / "organamnist.npz") as npz:
        for index, name in enumerate(["spleen", "pancreas", "bladder", "femur-left", "femur-right"]):
            with Image.open(root / name / f"test_{index:06d}.png") as image:
                assert image.mode == "L"
                assert np.array_equal(np.array(image), _reference_png(npz["test_images"][index]))


def test_chestmnist_rule_every_image_exactly_where_it_belongs(tmp_path):
    test_rows = [[0] * 14, [1, 0, 1] + [0] * 11, [0] * 13 + [1], [0] * 14, [0, 1, 0, 0, 1] + [0] * 9]
    settings, _ = _settings(tmp_path, {"chestmnist": (1, 14)}, rows={"test": test_rows})
    _build(settings, "ChestMNIST")
    root = tmp_path / "DATA" / "2D_Images" / "ChestMNIST" / "output_images" / "test"
    places = {
        0: ["no finding/test_000000.png"],
        1: ["atelectasis/test_000001.png", "effusion/test_000001.png"],
        2: ["hernia/test_000002.png"],
        3: ["no finding/test_000003.png"],
        4: ["cardiomegaly/test_000004.png", "mass/test_000004.png"],
    }
    assert {p.relative_to(root).as_posix() for p in root.rglob("*.png")} == {n for ns in places.values() for n in ns}
    with np.load(tmp_path / "raw" / "MedMNIST" / "chestmnist.npz") as npz:
        for index, names in places.items():
            assert len({(root / name).stat().st_ino for name in names}) == 1  # hard links: one file
            assert np.array_equal(_decode(root / names[0]), _reference_png(npz["test_images"][index]))
    manifest = (root.parent / "labels_test.csv").read_text().splitlines()
    assert manifest[0] == "split,index,path,labels"
    assert manifest[2] == 'test,1,"atelectasis/test_000001.png",1_0_1_0_0_0_0_0_0_0_0_0_0_0'
    assert len(manifest) - 1 == 7


def test_rerun_is_byte_identical_and_touches_nothing(tmp_path):
    settings, _ = _settings(tmp_path, {"organamnist": (1, 1)})
    results = tmp_path / "results"
    _build(settings, "OrganAMNIST", results=results)
    root = tmp_path / "DATA" / "2D_Images" / "OrganAMNIST"
    manifest = results / "convert" / "2D_Task" / "OrganAMNIST" / "npz_unpack_2d.0-of-1.tsv"

    def state():
        return {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in root.rglob("*") if p.is_file()}

    before, manifest_before = state(), manifest.read_bytes()
    _build(settings, "OrganAMNIST", results=results)
    after = state()
    assert {p: v[0] for p, v in after.items()} == {p: v[0] for p, v in before.items()}
    assert {p: v[1] for p, v in after.items() if p.suffix == ".png"} == {
        p: v[1] for p, v in before.items() if p.suffix == ".png"
    }
    assert manifest.read_bytes() == manifest_before
    assert (root / "output_images" / "labels_test.csv").read_text().count("\n") == 6  # header + 5, not appended


def test_two_workers_write_the_same_files(tmp_path):
    one, _ = _settings(tmp_path / "a", {"bloodmnist": (3, 1)})
    two, _ = _settings(tmp_path / "b", {"bloodmnist": (3, 1)})
    assert _build(one, "BloodMNIST", workers=1) == _build(two, "BloodMNIST", workers=2)


def test_three_workers_share_a_large_split_and_write_what_one_writes(tmp_path):
    one, arrays = _settings(tmp_path / "a", {"bloodmnist": (3, 1)}, counts=(1, 1, 700), splits="all")
    three, _ = _settings(tmp_path / "b", {"bloodmnist": (3, 1)}, counts=(1, 1, 700), splits="all")
    rows = _build(one, "BloodMNIST", workers=1)
    assert _build(three, "BloodMNIST", workers=3) == rows
    assert len([r for r in rows if r[1] == "file"]) == 702  # 700 test images, one train, one val
    images, labels = arrays["bloodmnist"]["test_images"], arrays["bloodmnist"]["test_labels"]
    names = _labels(one.registry(), "bloodmnist")
    base = tmp_path / "b" / "DATA" / "2D_Images" / "BloodMNIST" / "output_images" / "test"
    for index in (0, 349, 699):
        label = int(labels[index][0])
        assert np.array_equal(_decode(base / names[label] / f"test_{index:06d}.png"), images[index])
    assert multiprocessing.active_children() == []


def test_a_failing_worker_stops_the_job_with_the_file_named(tmp_path):
    settings, arrays = _settings(tmp_path, {"bloodmnist": (3, 1)}, counts=(1, 1, 700))
    label = int(arrays["bloodmnist"]["test_labels"][500][0])
    folder = tmp_path / "DATA" / "2D_Images" / "BloodMNIST" / "output_images" / "test"
    clash = folder / _labels(settings.registry(), "bloodmnist")[label]
    clash.parent.mkdir(parents=True)
    clash.write_bytes(b"a user's file")  # a file where the class folder belongs: refused, in whichever worker meets it
    with pytest.raises(OutputConflictError, match=re.escape(f"{clash} is a regular file where a folder")):
        _build(settings, "BloodMNIST", workers=3)
    assert clash.read_bytes() == b"a user's file"
    assert multiprocessing.active_children() == []


def test_a_killed_helper_stops_the_job_instead_of_hanging(tmp_path, monkeypatch):
    settings, _ = _settings(tmp_path, {"bloodmnist": (3, 1)}, counts=(1, 1, 700))
    job = os.getpid()
    produce = medmnist._produce_2d

    def killed_in_a_helper(ctx, indices):
        if os.getpid() != job:  # as the out-of-memory killer would
            os.kill(os.getpid(), signal.SIGKILL)
        return produce(ctx, indices)

    monkeypatch.setattr(medmnist, "_produce_2d", killed_in_a_helper)
    archive = tmp_path / "raw" / "MedMNIST" / "bloodmnist.npz"
    expected = f"{archive}: a helper process stopped without its results (exit code -9)"
    with pytest.raises(PreprocessError, match=re.escape(expected)):
        _build(settings, "BloodMNIST", workers=2)
    assert multiprocessing.active_children() == []


def test_3d_reference_series_names_splits_and_label_csvs(tmp_path):
    rows = {"train": [3, 0, 10], "val": [7, 1], "test": [5, 5, 2, 0, 9]}
    settings, _ = _settings(
        tmp_path, {"organmnist3d": (1, 1)}, size="28", source="medmnist3d", rows=rows, splits="all"
    )  # train slides and every labels CSV are the train split
    _build(settings, "Organ3dMNIST")
    base = tmp_path / "DATA" / "3D_Images" / "Organ3dMNIST"
    assert sorted(os.listdir(base)) == ["test_labels.csv", "test_slides", "train_labels.csv", "train_slides",
                                        "val_labels.csv"]  # fmt: skip
    assert sorted(os.listdir(base / "test_slides")) == [f"sample_0000{i}" for i in range(5)]
    assert sorted(os.listdir(base / "train_slides")) == ["sample_00000", "sample_00001", "sample_00002"]
    assert sorted(os.listdir(base / "test_slides" / "sample_00004")) == [f"slice_{k:02d}.png" for k in range(28)]
    with np.load(tmp_path / "raw" / "MedMNIST" / "organmnist3d.npz") as npz:
        for split, index, k in (("test", 0, 0), ("test", 4, 27), ("train", 2, 13)):
            path = base / f"{split}_slides" / f"sample_{index:05d}" / f"slice_{k:02d}.png"
            with Image.open(path) as image:
                assert image.mode == "L"
                assert np.array_equal(np.array(image), npz[f"{split}_images"][index][k])  # uint8: unchanged
    assert (base / "test_labels.csv").read_text() == "sample_index,label_index\n0,5\n1,5\n2,2\n3,0\n4,9\n"
    assert (base / "val_labels.csv").read_text() == "sample_index,label_index\n0,7\n1,1\n"
    assert (base / "train_labels.csv").read_text() == "sample_index,label_index\n0,3\n1,0\n2,10\n"


@pytest.mark.parametrize("dtype", [np.float32, np.uint16])
def test_3d_other_dtypes_are_min_max_scaled_per_slice(tmp_path, dtype):
    settings, arrays = _settings(tmp_path, {"synapsemnist3d": (1, 1)}, size="28", source="medmnist3d")
    rng = np.random.default_rng(5)
    volumes = (rng.random((5, 28, 28, 28)) * 900 + 100).astype(dtype)
    volumes[1, 3] = 42  # a constant slice
    path = tmp_path / "raw" / "MedMNIST" / "synapsemnist3d.npz"
    np.savez_compressed(path, **{**arrays["synapsemnist3d"], "test_images": volumes})
    settings = settings_from_dict({**_values(settings), "verify_checksums": {"medmnist3d": False}})
    _build(settings, "SynapseMNIST")
    folder = tmp_path / "DATA" / "3D_Images" / "SynapseMNIST" / "test_slides"
    for index, k in ((0, 0), (1, 3), (4, 27)):
        plane = volumes[index][k]
        low, high = plane.min(), plane.max()
        expected = np.zeros((28, 28), np.uint8) if high == low else ((plane - low) / (high - low) * 255.0)
        with Image.open(folder / f"sample_{index:05d}" / f"slice_{k:02d}.png") as image:
            assert image.mode == "L"
            assert np.array_equal(np.array(image), expected.astype(np.uint8))
    assert not _decode(folder / "sample_00001" / "slice_03.png").any()


@pytest.mark.parametrize("fault", ["truncated", "wrong md5", "missing key", "wrong shape"])
def test_bad_archive_stops_the_subset_naming_file_and_expectation(tmp_path, fault):
    settings, arrays = _settings(tmp_path, {"bloodmnist": (3, 1)})
    path = tmp_path / "raw" / "MedMNIST" / "bloodmnist.npz"
    if fault == "truncated":
        path.write_bytes(path.read_bytes()[:500])
        message = r"medmnist: checksum differs: bloodmnist.npz md5 \w+, expected \w+"
    elif fault == "wrong md5":
        np.savez_compressed(path, **{k: v.copy() for k, v in arrays["bloodmnist"].items()}, extra=np.zeros(1))
        message = r"medmnist: checksum differs: bloodmnist.npz md5"
    else:
        changed = dict(arrays["bloodmnist"])
        if fault == "missing key":
            del changed["val_images"]
        else:
            changed["test_images"] = changed["test_images"][:, :20]
        np.savez_compressed(path, **changed)
        settings = settings_from_dict({**_values(settings), "verify_checksums": {"medmnist": False}})
        message = {
            "missing key": r"bloodmnist.npz: no array 'val_images'",
            "wrong shape": r"bloodmnist.npz\[test_images\]: shape \(5, 20, 28, 3\), expected \(5, 28, 28, 3\)",
        }[fault]
    with pytest.raises(RawDataError, match=message):
        _build(settings, "BloodMNIST")
    assert not (tmp_path / "DATA" / "2D_Images" / "BloodMNIST").exists()  # nothing written


def _values(settings) -> dict:
    return {
        "raw_root": str(settings.raw_root),
        "data_basedir": str(settings.data_basedir),
        "subsets": "all",
        "registry_overrides": str(settings.registry_overrides),
        "source_variants": settings.source_variants,
    }


# --- equality with the reference tool ---------------------------------------------------------------------


REFERENCE_CASES = [
    ("bloodmnist", "BloodMNIST", 3, "28"),
    ("bloodmnist", "BloodMNIST", 3, "64"),
    ("organamnist", "OrganAMNIST", 1, "28"),
    ("organamnist", "OrganAMNIST", 1, "64"),
]
# `python -m medmnist save --flag=... --folder=... --postfix=png --root=... [--size=...]` for each case in one
# process: the command's own function (medmnist/__main__.py `save`), as its command line calls it, without
# PyTorch's start-up of about 3 s per case.
MEDMNIST_SAVE = """
import sys
from medmnist.__main__ import save

for flag, folder, root, size in zip(*[iter(sys.argv[1:])] * 4):
    save(flag, folder, postfix="png", root=root, size=None if size == "28" else int(size))
"""


@pytest.fixture(scope="module")
def saved_by_medmnist(tmp_path_factory):
    """Each case's raw npz (random arrays) in a folder of its own, and the PNGs `medmnist save` wrote from it."""
    cases, arguments = {}, []
    for flag, _subset, channels, size in REFERENCE_CASES:
        folder = tmp_path_factory.mktemp(f"{flag}-{size}")
        cases[flag, size] = (folder, *_settings(folder, {flag: (channels, 1)}, size=size))
        arguments += [flag, str(folder / "ref"), str(folder / "raw" / "MedMNIST"), size]
    subprocess.run([sys.executable, "-c", MEDMNIST_SAVE, *arguments], check=True, capture_output=True)
    return cases


@pytest.mark.parametrize(("flag", "subset", "channels", "size"), REFERENCE_CASES)
def test_pixels_equal_medmnist_save(saved_by_medmnist, flag, subset, channels, size):
    folder, settings, arrays = saved_by_medmnist[flag, size]
    _build(settings, subset)
    reference = folder / "ref" / (flag if size == "28" else f"{flag}_{size}")
    ours = folder / "DATA" / "2D_Images" / subset / "output_images" / "test"
    names = _labels(settings.registry(), flag)
    rows = arrays[flag]["test_labels"]
    for index, row in enumerate(rows):
        theirs_name, ours_name = f"test{index}_{int(row[0])}.png", f"{names[int(row[0])]}/test_{index:06d}.png"
        with Image.open(reference / theirs_name) as theirs, Image.open(ours / ours_name) as mine:
            assert theirs.mode == mine.mode == ("RGB" if channels == 3 else "L")
            assert np.array_equal(np.array(theirs), np.array(mine))
