"""The train split (config `splits`): by default only what the test task files need; with `all` also the
train and val outputs the benchmark's scripts write, named and drawn as they do. The reference rules and
names are written out here; the raw data is the demo's (same trees, names and dtypes as the real downloads)."""

from __future__ import annotations

import io
import json
import os

import nibabel as nib
import numpy as np
import pyarrow.parquet as pq
import pytest
from PIL import Image
from test_drr import reference_rule as reference_drr

from conftest import demo_settings, demo_values
from preprocess import steps, validate
from preprocess.cli import main
from preprocess.errors import ConfigError, RawDataError
from preprocess.rawcheck import check_all

BLOOD_LABELS = ["basophil", "eosinophil", "erythroblast",
                "immature granulocytes(myelocytes, metamyelocytes and promyelocytes)", "lymphocyte", "monocyte",
                "neutrophil", "platelet"]  # fmt: skip


def _convert(settings, subset, conversion=None):
    return steps.Build(settings).convert(subset=subset, conversion=conversion)


def _png(path) -> np.ndarray:
    with Image.open(path) as image:
        return np.array(image)


def _tree(root) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


def _reference_ct_slices(path) -> list[np.ndarray]:
    """CT-RATE's slicing script: dataobj as float32, 64 indices np.linspace(...).astype(int) along axis 2,
    (v - (-1350)) / 1500 * 255 clipped to 0..255, truncated to uint8."""
    data = np.asarray(nib.load(str(path)).dataobj).astype(np.float32)
    picks = np.linspace(0, data.shape[2] - 1, 64).astype(int)
    return [np.clip((data[:, :, i] + 1350.0) / 1500.0 * 255.0, 0, 255).astype(np.uint8) for i in picks]


def test_default_builds_only_the_test_split_and_all_adds_train_and_val_of_medmnist(demo):
    root = demo / "DATA_BASEDIR" / "2D_Images" / "BloodMNIST" / "output_images"
    _convert(demo_settings(demo), "BloodMNIST")
    assert sorted(os.listdir(root)) == ["labels_test.csv", "test"]
    _convert(demo_settings(demo, splits="all"), "BloodMNIST")
    assert sorted(os.listdir(root)) == ["labels_test.csv", "labels_train.csv", "labels_val.csv", "test", "train", "val"]
    with np.load(next((demo / "raw" / "MedMNIST").glob("bloodmnist*.npz"))) as npz:
        for split in ("train", "val"):
            images, labels = npz[f"{split}_images"], npz[f"{split}_labels"]
            expected = {f"{BLOOD_LABELS[int(labels[i][0])]}/{split}_{i:06d}.png": i for i in range(len(images))}
            assert _tree(root / split) == sorted(expected)
            for name, i in expected.items():
                want = np.array(Image.fromarray(images[i].astype(np.uint8), mode="RGB"))
                assert np.array_equal(_png(root / split / name), want), name


def test_ct_rate_train_slices_and_drr_from_train_fixed(demo):
    base = demo / "DATA_BASEDIR" / "3D_Images" / "CT_RATE"
    raw = demo / "raw" / "CT-RATE" / "dataset" / "train_fixed"
    _convert(demo_settings(demo), "CT_RATE")
    assert sorted(os.listdir(base)) == ["valid_fixed_drr", "valid_fixed_sliced"]
    _convert(demo_settings(demo, splits="all"), "CT_RATE", "volumes_train")
    assert sorted(os.listdir(base / "train_fixed_sliced")) == ["train_1_a", "train_2_a"]  # first reconstructions
    for case, sub in (("train_1", "train_1_a"), ("train_2", "train_2_a")):
        source = raw / case / sub / f"{sub}_1.nii.gz"
        assert nib.load(str(source)).shape[2] == 70  # more than 64 slices: no index repeats
        series = base / "train_fixed_sliced" / sub
        assert sorted(os.listdir(series)) == [f"slice_{k:03d}.png" for k in range(64)]
        for k, want in enumerate(_reference_ct_slices(source)):
            assert np.array_equal(_png(series / f"slice_{k:03d}.png"), want), (sub, k)
        assert os.listdir(base / "train_fixed_drr" / sub) == ["drr_ap.png"]
        assert np.array_equal(_png(base / "train_fixed_drr" / sub / "drr_ap.png"), reference_drr(source))


def test_raw_check_asks_for_train_files_only_with_all(demo):
    test_check = check_all(demo_settings(demo).registry(), demo_settings(demo), ["ct_rate"], None)["ct_rate"]
    assert [f.id for f in test_check.files] == ["volumes", "metadata"]
    settings = demo_settings(demo, splits={"3D_Task/CT_RATE": "all"})
    assert [f.id for f in check_all(settings.registry(), settings, ["ct_rate"], None)["ct_rate"].files] == [
        "volumes",
        "train_volumes",
        "metadata",
    ]
    for path in (demo / "raw" / "CT-RATE" / "dataset" / "train_fixed").rglob("*_1.nii.gz"):
        path.unlink()
    _convert(demo_settings(demo), "CT_RATE")  # the test split does not need them
    with pytest.raises(RawDataError, match=r"dataset/train_fixed/train_\*/train_\*_\*/train_\*_\*_1.nii.gz"):
        _convert(settings, "CT_RATE")


def test_a_train_conversion_named_without_all_says_what_to_set(demo):
    with pytest.raises(Exception, match=r"volumes_train builds the train split: set splits: all"):
        _convert(demo_settings(demo), "CT_RATE", "volumes_train")


def test_splits_mapping_names_known_subsets_only(demo):
    with pytest.raises(ConfigError, match=r"splits names unknown subset '3D_Task/CT_RAT'.*3D_Task/CT_RATE"):
        steps.Build(demo_settings(demo, splits={"3D_Task/CT_RAT": "all"}))


def test_mrnet_train_series_from_the_train_folder(demo):
    base = demo / "DATA_BASEDIR" / "3D_Images" / "MRNet"
    _convert(demo_settings(demo), "MRNet")
    assert sorted(os.listdir(base)) == ["valid_images"]
    _convert(demo_settings(demo, splits="all"), "MRNet")
    raw = demo / "raw" / "MRNet" / "MRNet-v1.0" / "train"
    picks = np.linspace(0, 11, 10).astype(int)  # 12 slices: 10 evenly spaced, uint8 unchanged
    for plane in ("axial", "coronal", "sagittal"):
        volume = np.load(raw / plane / "0000.npy")
        folder = base / "train_images" / plane / "0000"
        assert sorted(os.listdir(folder)) == [f"slice_{k:02d}_orig_{i:03d}.png" for k, i in enumerate(picks)]
        for k, i in enumerate(picks):
            assert np.array_equal(_png(folder / f"slice_{k:02d}_orig_{i:03d}.png"), volume[i])


def test_kvasir_and_polypgen_train_and_val_names_and_crops(demo):
    root = demo / "DATA_BASEDIR" / "2D_Images" / "Gastrointestinal" / "images"
    _convert(demo_settings(demo), "Gastrointestinal")
    assert all(name.startswith("test_") for name in os.listdir(root))
    _convert(demo_settings(demo, splits="all"), "Gastrointestinal")
    extra = sorted(name for name in os.listdir(root) if not name.startswith("test_"))
    assert extra == [
        "train_00000.png", "train_00000_polyp.png", "train_00001.png", "train_00001_polyp.png",
        "train_cju0qkwl35piu0993l0dewei2.png", "train_cju0qkwl35piu0993l0dewei2_polyp.png",
        "val_00000.png", "val_00000_polyp.png",
    ]  # fmt: skip
    with Image.open(demo / "raw" / "Kvasir-SEG" / "images" / "cju0qkwl35piu0993l0dewei2.jpg") as im:
        image = np.array(im.convert("RGB"))
    assert np.array_equal(_png(root / "train_cju0qkwl35piu0993l0dewei2.png"), image)
    # the box file's (xmin 20, ymin 10, xmax 50, ymax 30), max edges exclusive
    assert np.array_equal(_png(root / "train_cju0qkwl35piu0993l0dewei2_polyp.png"), image[10:30, 20:50])
    with np.load(next((demo / "raw" / "MedSegBench").glob("polypgen_*.npz"))) as npz:
        for split, index in (("train", 0), ("train", 1), ("val", 0)):
            full = npz[f"{split}_images"][index]
            full = np.repeat(full[..., None], 3, axis=-1) if full.ndim == 2 else full
            assert np.array_equal(_png(root / f"{split}_{index:05d}.png"), full)
            ys, xs = np.nonzero(npz[f"{split}_label"][index] > 0)  # the inclusive max is the exclusive edge
            crop = full[ys.min() : ys.max(), xs.min() : xs.max()]
            assert np.array_equal(_png(root / f"{split}_{index:05d}_polyp.png"), crop)


def test_pannuke_train_images_from_the_split_csv(demo):
    root = demo / "DATA_BASEDIR" / "2D_Images" / "PanNuke"
    _convert(demo_settings(demo), "PanNuke")
    assert sorted(os.listdir(root)) == ["test_images"]
    _convert(demo_settings(demo, splits="all"), "PanNuke")
    # PanNuke_split.csv: Colon/fold1_00000002.png,train and Bladder/fold3_00000001.png,train
    assert _tree(root / "train_images") == ["Bladder/fold3_00000001.png", "Colon/fold1_00000002.png"]
    for fold, row, name in ((1, 2, "Colon/fold1_00000002.png"), (3, 1, "Bladder/fold3_00000001.png")):
        table = pq.read_table(demo / "raw" / "PanNuke" / "data" / f"fold{fold}-00000-of-00001.parquet")
        with Image.open(io.BytesIO(table.column("image")[row].as_py()["bytes"])) as image:
            want = np.array(image)
        assert np.array_equal(_png(root / "train_images" / name), want)


def test_vindr_cxr_train_query_images_and_crops_only_with_all(demo):
    root = demo / "DATA_BASEDIR" / "2D_Images" / "VindrCXR"
    _convert(demo_settings(demo), "VindrCXR")
    assert sorted(os.listdir(root / "VinDr-CXR-dataset" / "ai-vinbigdata")) == ["test"]
    test_crops = set(os.listdir(root / "crop"))
    _convert(demo_settings(demo, splits="all"), "VindrCXR")
    train = "1b2c3d4e5f60718293a4b5c6d7e8f901"  # the demo's train image
    assert os.listdir(root / "VinDr-CXR-dataset" / "ai-vinbigdata" / "train") == [f"{train}.png"]
    added = set(os.listdir(root / "crop")) - test_crops
    assert added and all(name.startswith(f"{train}_") for name in added)


def test_train_data_paths_are_not_built_under_test_and_resolve_under_all(demo):
    subsets = ("2D_Task/BloodMNIST", "2D_Task/Gastrointestinal", "3D_Task/CT_RATE")
    for splits in ("test", "all"):
        settings = demo_settings(demo, splits=splits)
        build = steps.Build(settings)
        for key in subsets:
            build.convert(subset=key)
            subset = build.registry.subset(key)
            found = validate.validate_subset(
                build.registry, subset, settings.data_basedir, train_built=splits == "all"
            )  # the same flag steps.validate and the CLI pass for the config's splits
            train = [r for r in found if r.file.startswith("Train_Data/")]
            assert len(train) == 1 and all(r.passed for r in found), (key, splits)
            if splits == "test":
                assert train[0].not_built > 0 and train[0].missing == 0
            else:
                assert train[0].not_built == 0 and train[0].ok == train[0].paths > 0


def test_status_shows_test_and_train_apart(demo, tmp_path, capsys):
    config = tmp_path / "config.json"
    config.write_text(json.dumps({**demo_values(demo), "splits": {"2D_Task/BloodMNIST": "all"}}))
    _convert(demo_settings(demo, splits="all"), "BloodMNIST")
    _convert(demo_settings(demo), "Gastrointestinal")
    capsys.readouterr()
    code = main(["status", str(demo / "DATA_BASEDIR"), "--config", str(config), "--json", "--results", str(tmp_path)])
    rows = {row["subset"]: row for row in json.loads(capsys.readouterr().out)["subsets"]}
    assert code == 0
    assert rows["2D_Task/BloodMNIST"]["state"] == "built" and rows["2D_Task/BloodMNIST"]["train_state"] == "built"
    assert rows["2D_Task/BloodMNIST"]["train_paths_ok"] == rows["2D_Task/BloodMNIST"]["train_paths"] == 5
    gastro = rows["2D_Task/Gastrointestinal"]
    assert gastro["state"] == "built" and gastro["train_state"] == "not built (splits: test)"
    assert gastro["train_paths_ok"] == 0 and gastro["train_paths"] == 8
    assert rows["2D_Task/PathMNIST"]["train_state"] == "no Train_Data"


def test_brain_tumor_mri_train_folder_mirrors_the_downloads_training_folder(demo):
    """The seed tree's datasets/Testing/<class>/<file> has its training twin datasets/Training/<class>/<file>:
    the download's Training/ files, unchanged."""
    raw = demo / "raw" / "brain-tumor-mri-dataset" / "Training"
    subset = demo / "DATA_BASEDIR" / "2D_Images" / "Brain-Tumor-MRI" / "datasets"
    _convert(demo_settings(demo), "Brain-Tumor-MRI")
    assert sorted(os.listdir(subset)) == ["Testing"]
    _convert(demo_settings(demo, splits={"2D_Task/Brain-Tumor-MRI": "all"}), "Brain-Tumor-MRI")
    expected = ["glioma/Tr-gl_0001.jpg", "meningioma/Tr-me_0001.jpg", "notumor/Tr-no_0001.jpg",
                "pituitary/Tr-pi_0001.jpg"]  # fmt: skip
    assert _tree(subset / "Training") == expected == _tree(raw)
    for name in expected:
        assert (subset / "Training" / name).read_bytes() == (raw / name).read_bytes()
