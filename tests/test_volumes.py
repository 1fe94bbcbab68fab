"""3D slicing: each recipe against an independent computation of the benchmark's rule, the canonical mode's
storage invariance, and bad volumes."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import nibabel as nib
import numpy as np
import pytest
import SimpleITK as sitk
from PIL import Image

from conftest import demo_settings
from preprocess import steps
from preprocess.demo.volumes import ct_phantom, mr_phantom, save_nifti
from preprocess.errors import RawDataError
from preprocess.volumes import transforms as T
from preprocess.volumes.io import read_volume
from preprocess.volumes.slicer import view_slices


def _png(path: Path) -> np.ndarray:
    with Image.open(path) as image:
        assert image.mode == "L"
        return np.array(image)


def _load(path: Path) -> np.ndarray:
    """Voxels as the reference scripts saw them: nibabel get_fdata, or the NRRD array in (x, y, z) order."""
    if path.name.endswith(".nrrd"):
        return sitk.GetArrayFromImage(sitk.ReadImage(str(path))).transpose(2, 1, 0).astype(np.float64)
    return nib.load(str(path)).get_fdata()


# Independent statements of the reference rules (REFERENCE.md), written without the package's helpers.


def ref_ct(volume, level, width, count=64):
    n = volume.shape[2]
    picks = [int(np.floor(v)) for v in np.linspace(0, n - 1, count)]
    low, high = level - width / 2, level + width / 2
    return [((np.clip(volume[:, :, i], low, high) - low) / (high - low) * 255).astype(np.uint8) for i in picks]


def _mr_range(volume, p_low, p_high):
    volume = np.nan_to_num(volume, nan=0.0, posinf=0.0, neginf=0.0)
    low, high = np.percentile(volume[volume > 0], [p_low, p_high])
    if low == high:
        low, high = volume.min(), volume.max()
    return volume, low, high


def _to8(plane, low, high):
    return ((np.clip(plane, low, high) - low) / (high - low) * 255).astype(np.uint8)


def ref_mr_contiguous(volume, p_low, p_high, fraction, count=64):
    volume, low, high = _mr_range(volume, p_low, p_high)
    good = [k for k in range(volume.shape[2]) if (volume[:, :, k] > 0).sum() >= fraction * volume[:, :, k].size]
    first, last = (good[0], good[-1]) if good else (0, volume.shape[2] - 1)
    picks = [int(v) for v in np.floor(np.linspace(first, last, count))]
    return [_to8(volume[:, :, k], low, high) for k in picks]


def ref_mr_list(volume, p_low, p_high, fraction, short, count=64):
    volume, low, high = _mr_range(volume, p_low, p_high)
    good = [k for k in range(volume.shape[2]) if (volume[:, :, k] > 0).sum() >= fraction * volume[:, :, k].size]
    good = good or list(range(volume.shape[2]))
    positions = np.linspace(0, len(good) - 1, count)
    if len(good) >= count or short == "floor":
        picks = [good[int(np.floor(p))] for p in positions]
    else:
        picks = [good[round(float(p))] for p in positions]  # Python rounds half to even, like np.rint
    return [_to8(volume[:, :, k], low, high) for k in picks]


def _check_series(folder: Path, expected: list[np.ndarray]):
    names = sorted(os.listdir(folder))
    assert names == [f"slice_{k:03d}.png" for k in range(len(expected))]
    for name, want in zip(names, expected, strict=True):
        assert np.array_equal(_png(folder / name), want), name


def _convert(settings, subset):
    return steps.convert(settings, settings.registry(), subset, None, 0, 1, None)


def test_ct_rate_window_and_names(settings, demo):
    _convert(settings, "CT_RATE")
    out = demo / "DATA_BASEDIR" / "3D_Images" / "CT_RATE" / "valid_fixed_sliced"
    assert sorted(os.listdir(out)) == ["valid_1_a", "valid_2_a", "valid_2_b"]  # only *_1 reconstructions
    for sub in os.listdir(out):
        source = next((demo / "raw" / "CT-RATE" / "dataset" / "valid_fixed").glob(f"*/{sub}/{sub}_1.nii.gz"))
        expected = ref_ct(_load(source), -600, 1500)
        assert nib.load(str(source)).shape[2] == 36  # fewer slices than 64: indices repeat
        _check_series(out / sub, expected)


def test_radgenome_mirrors_the_parent_path(settings, demo):
    _convert(settings, "RadGen_CT")
    folder = (
        demo / "DATA_BASEDIR" / "3D_Images" / "RadGen_CT" / "valid_preprocessed_sliced" / "valid_1004" / "valid_1004a"
    )
    source = demo / "raw" / "RadGenome-ChestCT" / "dataset" / "valid_preprocessed" / "valid_1004" / "valid_1004a"
    _check_series(folder, ref_ct(_load(source / "valid_1004_a_1.nii.gz"), -600, 1500))


def test_cirrmri600_split_csv_healthy_prefix_and_contiguous_range(settings, demo):
    _convert(settings, "ChirrMRI600")
    root = demo / "DATA_BASEDIR" / "3D_Images" / "ChirrMRI600" / "Cirrhosis_T1_slide"
    assert sorted(str(p.relative_to(root)) for p in root.glob("*/*")) == ["test/7", "test/healthy_3", "train/12"]
    raw = demo / "raw" / "CirrMRI600+"
    for folder, source in (
        ("train/12", raw / "CirrMRI600+" / "Cirrhosis_T1_3D" / "train_images" / "12.nii.gz"),
        ("test/healthy_3", raw / "CirrMRI600+" / "Healthy_subjects" / "T1_W_Healthy" / "T1_images" / "3.nii.gz"),
    ):
        _check_series(root / folder, ref_mr_contiguous(_load(source), 1.0, 99.5, 0.01))


def test_cirrmri600_cross_has_both_sequences(settings, demo):
    _convert(settings, "CirrMRI600_Cross")
    base = demo / "DATA_BASEDIR" / "3D_Images" / "CirrMRI600_Cross"
    assert sorted(os.listdir(base)) == ["Cirrhosis_T1_slide", "Cirrhosis_T2_slide"]
    assert len(list((base / "Cirrhosis_T2_slide").glob("*/*/slice_*.png"))) == 3 * 64


def test_brats_ped_splits_modalities_and_short_list_rounding(settings, demo):
    _convert(settings, "BraTS2023")
    root = demo / "DATA_BASEDIR" / "3D_Images" / "BraTS2023"
    assert sorted(str(p.relative_to(root)) for p in root.glob("*/*/*")) == [
        "train/t1n/BraTS-PED-00002-000",
        "train/t2w/BraTS-PED-00002-000",
        "val/t1n/BraTS-PED-00101-000",
        "val/t2w/BraTS-PED-00101-000",
    ]
    source = next((demo / "raw" / "BraTS2023-PED").glob("**/BraTS-PED-00002-000-t2w.nii.gz"))
    _check_series(root / "train" / "t2w" / "BraTS-PED-00002-000", ref_mr_list(_load(source), 0.5, 99.5, 0.015, "round"))


def test_brats_men_case_folders(settings, demo):
    _convert(settings, "BraTS_MEN")
    root = demo / "DATA_BASEDIR" / "3D_Images" / "BraTS_MEN" / "BraTS-MEN-Test"
    assert sorted(os.listdir(root)) == ["BraTS-MEN-00004-000", "BraTS-MEN-00008-001"]
    source = next((demo / "raw" / "BraTS2023-MEN").glob("**/BraTS-MEN-00004-000-t1n.nii.gz"))
    _check_series(root / "BraTS-MEN-00004-000", ref_mr_list(_load(source), 0.5, 99.5, 0.015, "round"))


def test_hanseg_nrrd_ct_and_mr(settings, demo):
    _convert(settings, "HaN-Seg")
    base = demo / "DATA_BASEDIR" / "3D_Images" / "HaN-Seg"
    raw = demo / "raw" / "HaN-Seg" / "set_1" / "case_02"
    _check_series(base / "CT_slides" / "case_02", ref_ct(_load(raw / "case_02_IMG_CT.nrrd"), 50, 350))
    _check_series(
        base / "MRI_slides" / "case_02", ref_mr_list(_load(raw / "case_02_IMG_MR_T1.nrrd"), 0.5, 99.5, 0.015, "round")
    )
    assert not list(base.rglob("*OAR*"))  # masks are not sliced


def test_synthrad_region_windows_and_floor_sampling(settings, demo):
    _convert(settings, "SynthRAD")
    base = demo / "DATA_BASEDIR" / "3D_Images" / "SynthRAD" / "images"
    raw = demo / "raw" / "SynthRAD2023" / "Task1"
    _check_series(base / "ct" / "1BA001", ref_ct(_load(raw / "brain" / "1BA001" / "ct.nii.gz"), 40, 80))
    _check_series(base / "ct" / "1PA004", ref_ct(_load(raw / "pelvis" / "1PA004" / "ct.nii.gz"), 35, 350))
    _check_series(
        base / "mri" / "1BA001", ref_mr_list(_load(raw / "brain" / "1BA001" / "mr.nii.gz"), 0.5, 99.5, 0.015, "floor")
    )
    _check_series(
        base / "mri" / "1PA004", ref_mr_list(_load(raw / "pelvis" / "1PA004" / "mr.nii.gz"), 1.0, 99.5, 0.02, "floor")
    )
    assert sorted(os.listdir(base)) == ["ct", "mri"]  # overview/ skipped


def test_mrnet_ten_slices_with_original_index_in_the_name(settings, demo):
    _convert(settings, "MRNet")
    base = demo / "DATA_BASEDIR" / "3D_Images" / "MRNet" / "valid_images"
    raw = demo / "raw" / "MRNet" / "MRNet-v1.0" / "valid"
    axial = np.load(raw / "axial" / "1130.npy")
    picks = [int(v) for v in np.floor(np.linspace(0, 23, 10))]
    assert sorted(os.listdir(base / "axial" / "1130")) == [
        f"slice_{k:02d}_orig_{i:03d}.png" for k, i in enumerate(picks)
    ]
    for k, i in enumerate(picks):
        assert np.array_equal(_png(base / "axial" / "1130" / f"slice_{k:02d}_orig_{i:03d}.png"), axial[i])
    assert sorted(os.listdir(base / "coronal" / "1130")) == [f"slice_{k:02d}_orig_{k:03d}.png" for k in range(8)]


def test_m3d_and_mmdental(settings, demo):
    _convert(settings, "M3D")
    root = demo / "DATA_BASEDIR" / "3D_Images" / "M3D" / "ct_quizze" / "005375" / "Axial_C__delayed"
    assert sorted(os.listdir(root)) == ["0.png", "1.png", "10.png", "2.png"]
    _convert(settings, "3D_Task/MMDental")
    source = demo / "raw" / "MMDental" / "A001" / "A001.nii.gz"
    expected = ref_mr_list(_load(source), 0.5, 99.5, 0.0, "floor")  # every slice counts as informative
    _check_series(demo / "DATA_BASEDIR" / "3D_Images" / "MMDental" / "cbct_png" / "A001", expected)


def test_two_workers_write_the_same_slices(demo, tmp_path):
    settings = demo_settings(demo)
    one = steps.convert(settings, settings.registry(), "SynthRAD", None, 0, 1, None, workers=1)
    two = steps.convert(settings, settings.registry(), "SynthRAD", None, 0, 1, None, workers=2)
    assert one == two


# --- pure selection rules ----------------------------------------------------------------------------------


def test_selection_rules_on_literal_lists():
    assert T.evenly_spaced(0, 2, 5).tolist() == [0, 0, 1, 1, 2]
    assert T.list_sample_indices(np.array([3, 4, 5]), 9, 5, "round").tolist() == [3, 3, 4, 5, 5]  # half to even
    assert T.list_sample_indices(np.array([3, 4, 5]), 9, 5, "floor").tolist() == [3, 3, 4, 4, 5]
    assert T.list_sample_indices(np.array([], dtype=int), 3, 4, "round").tolist() == [0, 1, 1, 2]
    assert T.contiguous_range_indices(np.array([2, 7]), 10, 3).tolist() == [2, 4, 7]
    assert T.window_to_uint8(np.array([-2000.0, -1350, -600, 150, 2000]), -600, 1500).tolist() == [0, 0, 127, 255, 255]
    assert T.percentile_range(np.zeros((2, 2, 2)), 1, 99) == (0.0, 0.0)
    assert T.normalise_to_uint8(np.ones((2, 2)), 1.0, 1.0).tolist() == [[0, 0], [0, 0]]


# --- canonical mode: the same patient however the file stores it -------------------------------------------


def _phantom_ras() -> np.ndarray:
    """A box body with a bright marker in the patient's left-anterior-superior corner (RAS voxel order)."""
    data = np.full((20, 24, 12), 100, dtype=np.int16)
    data[1:4, -4:-1, -3:] = 1000  # x small = Left, y large = Anterior, z large = Superior
    return data


SPACING = (1.0, 1.0, 2.5)


def _storages(tmp_path: Path) -> dict[str, Path]:
    data = _phantom_ras()
    ras = np.diag([*SPACING, 1.0])
    paths = {}
    paths["ras"] = tmp_path / "ras.nii.gz"
    save_nifti(paths["ras"], data, ras)
    lps = ras.copy()
    lps[:3, 0] *= -1
    lps[:3, 1] *= -1
    lps[0, 3] = (data.shape[0] - 1) * SPACING[0]
    lps[1, 3] = (data.shape[1] - 1) * SPACING[1]
    paths["lps"] = tmp_path / "lps.nii.gz"
    save_nifti(paths["lps"], data[::-1, ::-1, :].copy(), lps)
    permuted = np.zeros((4, 4))
    permuted[:3, :3] = ras[:3, :3][:, [2, 0, 1]]
    permuted[3, 3] = 1
    paths["permuted"] = tmp_path / "permuted.nii.gz"
    save_nifti(paths["permuted"], data.transpose(2, 0, 1).copy(), permuted)
    image = sitk.GetImageFromArray(data.transpose(2, 1, 0).copy())
    image.SetSpacing(SPACING)
    image.SetDirection((-1, 0, 0, 0, -1, 0, 0, 0, 1))  # LPS world: voxel i runs Right, j Posterior
    paths["nrrd"] = tmp_path / "ras.nrrd"
    sitk.WriteImage(image, str(paths["nrrd"]))
    return paths


@pytest.mark.parametrize("plane", ["axial", "coronal", "sagittal"])
def test_canonical_views_do_not_depend_on_storage(tmp_path, plane):
    views = {}
    for name, path in _storages(tmp_path).items():
        volume = read_volume(path)
        views[name] = view_slices(volume, plane, lambda p: T.window_to_uint8(p, 550, 1100), count=64)
    reference = views.pop("ras")
    for name, other in views.items():
        assert [n for n, _ in other] == [n for n, _ in reference], name
        for (_, a), (_, b) in zip(other, reference, strict=True):
            assert np.array_equal(a, b), (name, plane)


@pytest.mark.parametrize(
    ("plane", "corner"), [("axial", "top-right"), ("coronal", "top-right"), ("sagittal", "top-left")]
)
def test_marker_lands_where_radiologists_expect(tmp_path, plane, corner):
    volume = read_volume(_storages(tmp_path)["lps"])
    slices = view_slices(volume, plane, lambda p: T.window_to_uint8(p, 550, 1100), count=64)
    bright = max(slices, key=lambda item: int(item[1].sum()))[1]
    rows, cols = np.nonzero(bright > 200)  # the marker (1000 HU-like) against the body (100)
    top = rows.mean() < bright.shape[0] / 2
    right = cols.mean() > bright.shape[1] / 2
    assert top and right == (corner == "top-right")
    if plane != "axial":  # square pixels: 12 slices of 2.5 mm become 30 rows of 1 mm
        assert bright.shape[0] == 30


# --- bad volumes ------------------------------------------------------------------------------------------


def test_truncated_nifti_names_the_file(tmp_path):
    save_nifti(tmp_path / "ct.nii.gz", ct_phantom())
    data = (tmp_path / "ct.nii.gz").read_bytes()
    (tmp_path / "cut.nii.gz").write_bytes(data[: len(data) // 2])
    with pytest.raises(RawDataError, match=r"cut.nii.gz: .*truncated"):
        read_volume(tmp_path / "cut.nii.gz")


def test_corrupt_nifti_header(tmp_path):
    (tmp_path / "bad.nii.gz").write_bytes(gzip.compress(b"\x00" * 400))
    with pytest.raises(RawDataError, match=r"bad.nii.gz: unreadable NIfTI header"):
        read_volume(tmp_path / "bad.nii.gz")


def test_unreadable_and_short_nrrd(tmp_path):
    (tmp_path / "junk.nrrd").write_bytes(b"this is not nrrd")
    with pytest.raises(RawDataError, match=r"junk.nrrd: unreadable NRRD"):
        read_volume(tmp_path / "junk.nrrd")
    header = b"NRRD0004\ntype: short\ndimension: 3\nsizes: 10 10 10\nencoding: raw\nendian: little\n\n"
    (tmp_path / "short.nrrd").write_bytes(header + b"\x00" * 100)
    with pytest.raises(RawDataError, match=r"short.nrrd: unreadable NRRD"):
        read_volume(tmp_path / "short.nrrd")


def test_singleton_4th_axis_is_squeezed(tmp_path):
    data = mr_phantom()
    save_nifti(tmp_path / "4d.nii.gz", data[..., None])
    assert np.array_equal(read_volume(tmp_path / "4d.nii.gz").data, data)


def test_nans_count_as_background_and_a_flat_volume_gives_black(tmp_path):
    from preprocess.volumes.recipes import Profile
    from preprocess.volumes.slicer import reference_slices

    data = mr_phantom()
    data[5:10, 5:10, 10] = np.nan
    save_nifti(tmp_path / "nan.nii.gz", data)
    profile = Profile("mr_list", low_pct=0.5, high_pct=99.5, fraction=0.015, short="round")
    got = [image for _, image in reference_slices(read_volume(tmp_path / "nan.nii.gz"), profile)]
    want = ref_mr_list(_load(tmp_path / "nan.nii.gz"), 0.5, 99.5, 0.015, "round")
    assert all(np.array_equal(a, b) for a, b in zip(got, want, strict=True))
    save_nifti(tmp_path / "flat.nii.gz", np.full((8, 8, 8), 5.0, np.float32))
    flat = reference_slices(read_volume(tmp_path / "flat.nii.gz"), profile)
    assert len(flat) == 64 and all(not image.any() for _, image in flat)


def test_slice_command_on_one_file(tmp_path, capsys):
    from preprocess.cli import main

    save_nifti(tmp_path / "ct.nii.gz", ct_phantom())
    assert main(["slice", str(tmp_path / "ct.nii.gz"), str(tmp_path / "out"), "--window", "-600", "1500"]) == 0
    assert "64 slices of" in capsys.readouterr().out
    expected = ref_ct(_load(tmp_path / "ct.nii.gz"), -600, 1500)
    _check_series(tmp_path / "out", expected)
    assert (
        main(
            [
                "slice",
                str(tmp_path / "ct.nii.gz"),
                str(tmp_path / "cor"),
                "--window",
                "40",
                "400",
                "--plane",
                "coronal",
                "--count",
                "5",
            ]
        )
        == 0
    )
    assert sorted(os.listdir(tmp_path / "cor")) == [f"coronal_{k:03d}.png" for k in range(5)]
