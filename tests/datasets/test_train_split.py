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

from conftest import demo_settings, demo_values, without_checksums
from preprocess.cli import main
from preprocess.errors import ConfigError, RawDataError
from preprocess.pipeline import runview, steps
from preprocess.rawdata.rawcheck import check_all
from preprocess.readiness.buildable import decide_subset
from preprocess.registry import layout
from preprocess.verify import validate

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


def test_a_check_made_for_the_test_split_is_done_again_for_a_train_build_never_trusted(demo, tmp_path, capsys):
    test_only = steps.Build(demo_settings(demo)).check(sources=["vqa_rad"])  # looked for its test parquet only
    assert [f.id for f in test_only["vqa_rad"].files] == ["test"]
    settings = demo_settings(demo, splits="all", subsets=["2D_Task/APTOS"])
    # A conversion handed that check (the workflow's report) checks the source again, train file included.
    written = steps.Build(settings).convert(
        subset="2D_Task/VQA-RAD", conversion="parquet_records_train", checks=test_only
    )
    assert written and all(path.startswith("2D_Images/VQA-RAD/") for path, kind, _ in written if kind == "file")
    # The run-wide view of a partial run (runview): the stored test-only report says nothing of the train
    # file, so VQA-RAD is left out of this run's view with a line, not planned from it.
    report = layout.check_report(tmp_path, "vqa_rad")
    report.parent.mkdir(parents=True)
    report.write_text(json.dumps(test_only["vqa_rad"].to_json()))
    view = runview.plans(settings.registry(), settings, tmp_path, [])
    assert "2D_Task/VQA-RAD" not in [plan.subset for plan in view]
    assert f"{report}: looked for other files than this run's splits ask for, not used" in capsys.readouterr().out
    with pytest.raises(RawDataError, match=r"check of vqa_rad was made for other splits .* --forcerun check_source"):
        decide_subset(settings.registry(), settings.registry().subset("2D_Task/VQA-RAD"), test_only, settings)


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
    # built with a results folder: its manifests are how status tells a build of ours from the release's files
    steps.Build(demo_settings(demo, splits="all"), results=tmp_path / "results").convert(subset="BloodMNIST")
    steps.Build(demo_settings(demo), results=tmp_path / "results").convert(subset="Gastrointestinal")
    capsys.readouterr()
    argv = ["status", str(demo / "DATA_BASEDIR"), "--config", str(config), "--json"]
    code = main([*argv, "--results", str(tmp_path / "results")])
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


def test_medmnist_3d_train_slides_and_the_train_and_val_label_csvs(demo):
    """3D_Task/MNIST/unzip_cut_slides.py: the train and test volumes are sliced (val is not), every slice along
    axis 0 when there are at most 64, uint8 unchanged (mode L), train_slides/sample_{i:05d}/slice_{k:02d}.png;
    {split}_labels.csv (sample_index,label_index; the labels flattened) for train, test and val."""
    base = demo / "DATA_BASEDIR" / "3D_Images" / "Organ3dMNIST"
    _convert(demo_settings(demo), "Organ3dMNIST")
    assert sorted(os.listdir(base)) == ["test_labels.csv", "test_slides"]
    _convert(demo_settings(demo, splits="all"), "Organ3dMNIST")
    assert sorted(os.listdir(base)) == ["test_labels.csv", "test_slides", "train_labels.csv", "train_slides",
                                        "val_labels.csv"]  # fmt: skip
    with np.load(demo / "raw" / "MedMNIST" / "organmnist3d_64.npz") as npz:
        volumes, labels = npz["train_images"], {split: npz[f"{split}_labels"] for split in ("train", "val")}
    assert volumes.shape == (2, 64, 64, 64) and volumes.dtype == np.uint8
    expected = [f"sample_{i:05d}/slice_{k:02d}.png" for i in range(2) for k in range(64)]
    assert _tree(base / "train_slides") == expected
    for i in range(2):
        for k in range(64):
            with Image.open(base / "train_slides" / f"sample_{i:05d}" / f"slice_{k:02d}.png") as image:
                assert image.mode == "L"
                assert np.array_equal(np.array(image), volumes[i, k]), (i, k)
    for split, rows in labels.items():
        text = "sample_index,label_index\n" + "".join(f"{i},{int(v)}\n" for i, v in enumerate(rows.flatten()))
        assert (base / f"{split}_labels.csv").read_text() == text
    assert (base / "train_labels.csv").read_text() == "sample_index,label_index\n0,0\n1,1\n"
    assert (base / "val_labels.csv").read_text() == "sample_index,label_index\n0,0\n"


def _mask(*boxes) -> np.ndarray:
    """A 128 px 0/1 mask with the given (x0, y0, x1, y1) rectangles (max edges exclusive) set."""
    mask = np.zeros((128, 128), np.uint8)
    for x0, y0, x1, y1 in boxes:
        mask[y0:y1, x0:x1] = 1
    return mask


def test_medsegbench_train_and_val_names_and_the_28_px_rule(demo):
    """Vision_Grounding/Skin_Image/Preprocess.py on every split of the npz: one box around all mask pixels
    (max + 1), an empty mask skipped, PIL crop; a crop narrower or lower than 28 px is deleted with its full
    image. Names images/{split}_{i:05d}_{flag}.png and ..._crop.png."""
    path = demo / "raw" / "MedSegBench" / "isic2018_512.npz"
    with np.load(path) as archive:
        kept = {key: archive[key] for key in ("test_images", "test_label")}
    rng = np.random.default_rng(7)
    train_masks = [
        _mask((10, 10, 37, 60)),  # 27 px wide: dropped with its image
        _mask((100, 100, 128, 128)),  # 28 x 28 at the corner: kept
        _mask((5, 40, 105, 67)),  # 27 px high: dropped
        _mask((10, 10, 20, 20), (60, 70, 90, 100)),  # two blobs, one box (10, 10, 90, 100)
        _mask(),  # empty: skipped
    ]
    val_masks = [_mask((0, 0, 128, 128)), _mask((64, 64, 65, 65))]  # the whole image; one pixel (dropped)
    arrays = {
        **kept,
        "train_images": rng.integers(0, 256, (5, 128, 128, 3), dtype=np.uint8),
        "train_label": np.stack(train_masks),
        "val_images": rng.integers(0, 256, (2, 128, 128, 3), dtype=np.uint8),
        "val_label": np.stack(val_masks),
    }
    with open(path, "wb") as handle:
        np.savez_compressed(handle, **arrays)
    without_checksums(demo, "medsegbench")
    root = demo / "DATA_BASEDIR" / "2D_Images" / "SkinLesion" / "images"
    _convert(demo_settings(demo), "SkinLesion", "isic2018")
    test_names = sorted(os.listdir(root))
    assert test_names and all(name.startswith("test_") for name in test_names)
    _convert(demo_settings(demo, splits="all"), "SkinLesion", "isic2018_train")
    assert sorted(set(os.listdir(root)) - set(test_names)) == [
        "train_00001_isic2018.png", "train_00001_isic2018_crop.png",
        "train_00003_isic2018.png", "train_00003_isic2018_crop.png",
        "val_00000_isic2018.png", "val_00000_isic2018_crop.png",
    ]  # fmt: skip
    windows = {("train", 1): (100, 128, 100, 128), ("train", 3): (10, 100, 10, 90), ("val", 0): (0, 128, 0, 128)}
    for (split, index), (y0, y1, x0, x1) in windows.items():
        image = arrays[f"{split}_images"][index]
        assert np.array_equal(_png(root / f"{split}_{index:05d}_isic2018.png"), image)
        assert np.array_equal(_png(root / f"{split}_{index:05d}_isic2018_crop.png"), image[y0:y1, x0:x1])


MAMMO_PATIENT, MAMMO_TRAIN_PATIENT = "4e3ac9a1d2f1b0c7e5a6d8f9b1c2d3e4", "9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a"
M1, M3 = "2f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c", "c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8"  # the demo's test and training images
MT, MN = "e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0", "f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1"  # added here: training images


def test_vindr_mammo_train_crops_and_query_images(demo):
    """Vision_Grounding/VindrMammo/Preprocess.py: rows without resized boxes or only 'No Finding' skipped; boxes
    int(float) floored at 0, one per listed category; category id = position in the sorted categories of ALL
    rows (a training-only one moves the test ids too); the first merging pair's union goes to the end of the
    list; crops grown to 28 px inside the image; split 'training' -> train; query images_png/<patient>/<id>.png."""
    raw = demo / "raw" / "vindr-mammo"
    image = ((np.arange(120)[:, None] * 2 + np.arange(72)[None, :] * 3) % 256).astype(np.uint8)
    (raw / "images_png" / MAMMO_TRAIN_PATIENT).mkdir(parents=True)
    Image.fromarray(image, mode="L").save(raw / "images_png" / MAMMO_TRAIN_PATIENT / f"{MT}.png")
    Image.fromarray(255 - image, mode="L").save(raw / "images_png" / MAMMO_TRAIN_PATIENT / f"{MN}.png")
    study = "b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7"
    head = f"{study},s2,{MT},L,MLO,3518,2800,BI-RADS 4,DENSITY C"
    tail = f"training,{MAMMO_TRAIN_PATIENT},2"
    rows = [
        f"{head},\"['Mass']\",BI-RADS 4,900.0,1200.0,1500.0,1800.0,{tail},10.7,20.2,50.9,60.5",
        f"{head},\"['Mass']\",BI-RADS 4,950.0,1250.0,1550.0,1850.0,{tail},15.0,25.0,52.0,62.0",  # IoU 0.70
        f"{head},\"['Mass']\",BI-RADS 3,100.0,3000.0,200.0,3400.0,{tail},60.0,105.0,70.0,119.0",  # at the corner
        f"{head},\"['Asymmetry', 'Suspicious Calcification']\",BI-RADS 3,1,1,2,2,{tail},2.0,3.0,12.0,9.0",
        f"{study},s2,{MN},R,CC,3518,2800,BI-RADS 1,DENSITY B,\"['No Finding']\",,,,,,{tail},,,,",
    ]
    table = raw / "vindr_detection_v1_folds.csv"
    table.write_text(table.read_text() + "\n".join(rows) + "\n")
    without_checksums(demo, "vindr_mammo")
    root = demo / "DATA_BASEDIR" / "2D_Images" / "VindrMammo"
    # Architectural Distortion 0 (training), Asymmetry 1 (training), Mass 2, Suspicious Calcification 3
    test_files = [f"crop/{M1}_2_0.png", f"crop/{M1}_2_1.png", f"crop/{M1}_3_0.png"]
    test_files.append(f"images_png/{MAMMO_PATIENT}/{M1}.png")
    _convert(demo_settings(demo), "VindrMammo")
    assert _tree(root) == test_files
    _convert(demo_settings(demo, splits="all"), "VindrMammo")
    # (y0, y1, x0, x1) of each train crop in its 120 x 72 image, by the 28 px rule written out by hand
    train_crops = {
        f"crop/{M3}_0_0.png": (M3, MAMMO_PATIENT, (0, 28, 0, 28)),  # (5, 5, 20, 20) grown from its centre
        f"crop/{MT}_1_0.png": (MT, MAMMO_TRAIN_PATIENT, (0, 28, 0, 28)),  # (2, 3, 12, 9): shifted to 0
        f"crop/{MT}_2_0.png": (MT, MAMMO_TRAIN_PATIENT, (92, 120, 44, 72)),  # the unmerged box comes first
        f"crop/{MT}_2_1.png": (MT, MAMMO_TRAIN_PATIENT, (20, 62, 10, 52)),  # the union, appended
        f"crop/{MT}_3_0.png": (MT, MAMMO_TRAIN_PATIENT, (0, 28, 0, 28)),
    }
    queries = [f"images_png/{MAMMO_PATIENT}/{M3}.png", f"images_png/{MAMMO_TRAIN_PATIENT}/{MT}.png"]
    assert _tree(root) == sorted([*test_files, *train_crops, *queries])  # MN: No Finding only, no query
    for relative in queries:
        assert os.path.samefile(root / relative, raw / relative)
    for name, (image_id, patient, (y0, y1, x0, x1)) in train_crops.items():
        full = _png(raw / "images_png" / patient / f"{image_id}.png")
        assert np.array_equal(_png(root / name), full[y0:y1, x0:x1]), name


def test_radgenome_train_slices_mirror_the_train_preprocessed_folders(demo):
    """3D_Task/RadGenomme-Chest-CT/cut_slides.py --split both: every *_1.nii.gz under
    dataset/train_preprocessed/ (recursive), the CT-RATE rule (dataobj, -600/1500, 64 indices on axis 2),
    written under train_preprocessed_sliced/ at the volume folder's path relative to train_preprocessed/."""
    base = demo / "DATA_BASEDIR" / "3D_Images" / "RadGen_CT"
    raw = demo / "raw" / "RadGenome-ChestCT" / "dataset" / "train_preprocessed"
    _convert(demo_settings(demo), "RadGen_CT")
    assert sorted(os.listdir(base)) == ["valid_preprocessed_sliced"]
    _convert(demo_settings(demo, splits="all"), "RadGen_CT")
    assert sorted(os.listdir(base)) == ["train_preprocessed_sliced", "valid_preprocessed_sliced"]
    series = {"train_16/train_16a": "train_16_a_1.nii.gz", "train_3/train_3b": "train_3_b_1.nii.gz"}
    assert _tree(base / "train_preprocessed_sliced") == sorted(
        f"{folder}/slice_{k:03d}.png" for folder in series for k in range(64)
    )  # the second reconstruction (_2) is not sliced
    scaled = nib.load(str(raw / "train_3" / "train_3b" / "train_3_b_1.nii.gz"))
    assert scaled.get_data_dtype() == np.uint16 and scaled.dataobj.inter == -1024  # HU through the header
    for (folder, name), depth in zip(series.items(), (70, 36), strict=True):
        assert nib.load(str(raw / folder / name)).shape[2] == depth
        for k, want in enumerate(_reference_ct_slices(raw / folder / name)):
            assert np.array_equal(_png(base / "train_preprocessed_sliced" / folder / f"slice_{k:03d}.png"), want)
