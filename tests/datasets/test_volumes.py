"""3D slicing: each recipe against an independent statement of the benchmark script's rule (in the script's own
dtypes), the canonical mode's storage invariance, and bad volumes."""

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
from preprocess.demo.volumes import ct_phantom, mr_phantom, save_nifti
from preprocess.errors import RawDataError
from preprocess.formats import smallint
from preprocess.pipeline import steps
from preprocess.volumes import transforms as T
from preprocess.volumes.io import read_volume
from preprocess.volumes.slicer import view_slices


def _png(path: Path) -> np.ndarray:
    with Image.open(path) as image:
        assert image.mode == "L"
        return np.array(image)


def _dataobj(path: Path) -> np.ndarray:
    """Voxels as the scripts read them: `np.asarray(nib.load(p).dataobj)` (header scaling applied by nibabel),
    or the NRRD array in (x, y, z) order as pynrrd returns it."""
    if path.name.endswith(".nrrd"):
        return sitk.GetArrayFromImage(sitk.ReadImage(str(path))).transpose(2, 1, 0)
    return np.asarray(nib.load(str(path)).dataobj)


# Independent statements of the scripts' rules (3D_Task/*/cut_slides*.py), written without the package's helpers
# and in the scripts' order of operations and dtypes.


def ref_ct_scale_then_clip(data, level, width, count=64):
    """CT-RATE, RadGenome: per slice float32, scaled, then clipped to 0..255."""
    hu_min, hu_max = level - width / 2, level + width / 2
    out = []
    for idx in np.linspace(0, data.shape[2] - 1, count, dtype=int):
        sl = data[:, :, idx].astype(np.float32)
        sl = (sl - hu_min) / (hu_max - hu_min) * 255.0
        out.append(np.clip(sl, 0, 255).astype(np.uint8))
    return out


def ref_ct_clip_then_scale(data, level, width, count=64):
    """HaN-Seg, SynthRAD: per slice float32, clipped to the window, then scaled."""
    hu_min, hu_max = level - width / 2, level + width / 2
    out = []
    for idx in np.linspace(0, data.shape[2] - 1, count, dtype=int):
        sl = np.clip(data[:, :, idx].astype(np.float32), hu_min, hu_max)
        out.append(((sl - hu_min) / (hu_max - hu_min) * 255.0).astype(np.uint8))
    return out


def _ref_mr_volume(data, p_low, p_high):
    vol = np.nan_to_num(data.astype(np.float32), nan=0.0, posinf=0.0, neginf=0.0)
    foreground = vol[vol > 0]
    if foreground.size == 0:
        return np.zeros_like(vol, dtype=np.uint8)
    lo = np.percentile(foreground, p_low)
    hi = np.percentile(foreground, p_high)
    if hi <= lo:
        lo, hi = float(foreground.min()), float(foreground.max())
        if hi <= lo:
            return np.zeros_like(vol, dtype=np.uint8)
    vol = np.clip(vol, lo, hi)
    vol = (vol - lo) / (hi - lo) * 255.0
    return np.clip(vol, 0, 255).astype(np.uint8)


def _ref_informative(data, fraction):
    good = []
    for idx in range(data.shape[2]):
        sl = np.nan_to_num(data[:, :, idx].astype(np.float32), nan=0.0, posinf=0.0, neginf=0.0)
        if np.count_nonzero(sl > 0) / sl.size >= fraction:
            good.append(idx)
    return good


def ref_mr(data, p_low, p_high, fraction, sampling, count=64):
    """sampling: 'core' (CirrMRI600: the range first..last informative), 'round' (BraTS, HaN-Seg: short lists
    rounded), 'floor' (SynthRAD)."""
    norm = _ref_mr_volume(data, p_low, p_high)
    good = _ref_informative(data, fraction)
    if not good:
        picks = np.linspace(0, data.shape[2] - 1, count, dtype=int).tolist()
    elif sampling == "core":
        picks = np.linspace(good[0], good[-1], count, dtype=int).tolist()
    elif len(good) >= count or sampling == "floor":
        picks = [good[p] for p in np.linspace(0, len(good) - 1, count, dtype=int)]
    else:
        picks = [good[p] for p in np.round(np.linspace(0, len(good) - 1, count)).astype(int)]
    return [norm[:, :, i] for i in picks]


def ref_mmdental(path: Path) -> dict[str, np.ndarray]:
    """MMDental (data/Preprocess/3D_Task/MMDental/cut_slides.py): closest canonical, float32, one stretched
    window, 20 slices per view from the central 90 %, transposed, scaled, clipped to 0..1, times 255."""
    volume = nib.as_closest_canonical(nib.load(str(path))).get_fdata(dtype=np.float32)
    volume = np.nan_to_num(volume, nan=0.0, posinf=0.0, neginf=0.0)
    values = volume[np.isfinite(volume)]
    values = values[values != 0] if (values != 0).any() else values
    lo, hi = float(np.percentile(values, 0.5)), float(np.percentile(values, 99.5))
    if hi <= lo:
        lo, hi = float(values.min()), float(values.max())
    hi = lo + (hi - lo) * 1.2
    out = {}
    for view, axis in (("axial", 2), ("coronal", 1), ("sagittal", 0)):
        n = volume.shape[axis]
        start = max(0, min(round(n * 0.05), n - 1))
        end = max(start + 1, min(round(n * 0.95), n))
        for k, idx in enumerate(np.linspace(start, end - 1, 20, dtype=int)):
            sl = np.take(volume, idx, axis=axis).T.astype(np.float32)
            sl = np.clip((sl - lo) / (hi - lo), 0.0, 1.0)
            out[f"{view}_slice_{k:03d}.png"] = (sl * 255.0).astype(np.uint8)
    return out


def _check_series(folder: Path, expected: list[np.ndarray]):
    names = sorted(os.listdir(folder))
    assert names == [f"slice_{k:03d}.png" for k in range(len(expected))]
    for name, want in zip(names, expected, strict=True):
        assert np.array_equal(_png(folder / name), want), name


def _convert(settings, subset):
    return steps.Build(settings).convert(subset=subset)


def test_ct_rate_window_and_names(settings, demo):
    _convert(settings, "CT_RATE")
    out = demo / "DATA_BASEDIR" / "3D_Images" / "CT_RATE" / "valid_fixed_sliced"
    assert sorted(os.listdir(out)) == ["valid_1_a", "valid_2_a", "valid_2_b"]  # only *_1 reconstructions
    for sub in os.listdir(out):
        source = next((demo / "raw" / "CT-RATE" / "dataset" / "valid_fixed").glob(f"*/{sub}/{sub}_1.nii.gz"))
        assert nib.load(str(source)).shape[2] == 36  # fewer slices than 64: indices repeat
        _check_series(out / sub, ref_ct_scale_then_clip(_dataobj(source), -600, 1500))
    scaled = demo / "raw" / "CT-RATE" / "dataset" / "valid_fixed" / "valid_2" / "valid_2_b" / "valid_2_b_1.nii.gz"
    assert nib.load(str(scaled)).dataobj.inter == -1024  # HU through the header intercept


def test_ct_rate_slices_and_drr_come_from_one_read_per_volume(settings, demo, monkeypatch):
    """One job reads each CT once and writes its 64 slices and its DRR (the issue: one inflate per volume)."""
    import preprocess.volumes.io as io

    reads = []
    real = io.read_nifti
    monkeypatch.setattr(io, "read_nifti", lambda path, limits=None: reads.append(path.name) or real(path, limits))
    _convert(settings, "CT_RATE")
    assert sorted(reads) == ["valid_1_a_1.nii.gz", "valid_2_a_1.nii.gz", "valid_2_b_1.nii.gz"]
    root = demo / "DATA_BASEDIR" / "3D_Images" / "CT_RATE"
    for sub in ("valid_1_a", "valid_2_a", "valid_2_b"):
        assert len(os.listdir(root / "valid_fixed_sliced" / sub)) == 64
        assert os.listdir(root / "valid_fixed_drr" / sub) == ["drr_ap.png"]


def test_radgenome_mirrors_the_parent_path(settings, demo):
    _convert(settings, "RadGen_CT")
    folder = (
        demo / "DATA_BASEDIR" / "3D_Images" / "RadGen_CT" / "valid_preprocessed_sliced" / "valid_1004" / "valid_1004a"
    )
    source = demo / "raw" / "RadGenome-ChestCT" / "dataset" / "valid_preprocessed" / "valid_1004" / "valid_1004a"
    _check_series(folder, ref_ct_scale_then_clip(_dataobj(source / "valid_1004_a_1.nii.gz"), -600, 1500))


def test_cirrmri600_split_csv_healthy_prefix_and_contiguous_range(settings, demo, capsys):
    _convert(settings, "ChirrMRI600")
    root = demo / "DATA_BASEDIR" / "3D_Images" / "ChirrMRI600" / "Cirrhosis_T1_slide"
    assert sorted(str(p.relative_to(root)) for p in root.glob("*/*")) == ["test/7", "test/healthy_3", "train/12"]
    assert "not in the split CSV, so not sliced (as the benchmark's script drops them): 99" in capsys.readouterr().out
    raw = demo / "raw" / "CirrMRI600+"
    for folder, source in (
        ("train/12", raw / "CirrMRI600+" / "Cirrhosis_T1_3D" / "train_images" / "12.nii.gz"),
        ("test/healthy_3", raw / "CirrMRI600+" / "Healthy_subjects" / "T1_W_Healthy" / "T1_images" / "3.nii.gz"),
    ):
        _check_series(root / folder, ref_mr(_dataobj(source), 1.0, 99.5, 0.01, "core"))


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
    _check_series(root / "train" / "t2w" / "BraTS-PED-00002-000", ref_mr(_dataobj(source), 0.5, 99.5, 0.015, "round"))


def test_brats_men_case_folders(settings, demo):
    _convert(settings, "BraTS_MEN")
    root = demo / "DATA_BASEDIR" / "3D_Images" / "BraTS_MEN" / "BraTS-MEN-Test"
    assert sorted(os.listdir(root)) == ["BraTS-MEN-00004-000", "BraTS-MEN-00008-001"]
    source = next((demo / "raw" / "BraTS2023-MEN").glob("**/BraTS-MEN-00004-000-t1n.nii.gz"))
    _check_series(root / "BraTS-MEN-00004-000", ref_mr(_dataobj(source), 0.5, 99.5, 0.015, "round"))


def test_hanseg_nrrd_ct_and_mr(settings, demo):
    _convert(settings, "HaN-Seg")
    base = demo / "DATA_BASEDIR" / "3D_Images" / "HaN-Seg"
    raw = demo / "raw" / "HaN-Seg" / "set_1" / "case_02"
    ct = ref_ct_clip_then_scale(_dataobj(raw / "case_02_IMG_CT.nrrd"), 50, 350)
    _check_series(base / "CT_slides" / "case_02", ct)
    _check_series(
        base / "MRI_slides" / "case_02", ref_mr(_dataobj(raw / "case_02_IMG_MR_T1.nrrd"), 0.5, 99.5, 0.015, "round")
    )
    assert not list(base.rglob("*OAR*"))  # masks are not sliced


def test_synthrad_region_windows_and_floor_sampling(settings, demo):
    _convert(settings, "SynthRAD")
    base = demo / "DATA_BASEDIR" / "3D_Images" / "SynthRAD" / "images"
    raw = demo / "raw" / "SynthRAD2023" / "Task1"
    brain, pelvis = raw / "brain" / "1BA001", raw / "pelvis" / "1PA004"
    _check_series(base / "ct" / "1BA001", ref_ct_clip_then_scale(_dataobj(brain / "ct.nii.gz"), 40, 80))
    _check_series(base / "ct" / "1PA004", ref_ct_clip_then_scale(_dataobj(pelvis / "ct.nii.gz"), 35, 350))
    _check_series(base / "mri" / "1BA001", ref_mr(_dataobj(brain / "mr.nii.gz"), 0.5, 99.5, 0.015, "floor"))
    _check_series(base / "mri" / "1PA004", ref_mr(_dataobj(pelvis / "mr.nii.gz"), 1.0, 99.5, 0.02, "floor"))
    assert sorted(os.listdir(base / "ct")) == ["1BA001", "1BC002", "1PA004", "1PC005"]
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


def test_m3d_links_the_png_series(settings, demo):
    _convert(settings, "M3D")
    root = demo / "DATA_BASEDIR" / "3D_Images" / "M3D" / "ct_quizze" / "005375" / "Axial_C__delayed"
    assert sorted(os.listdir(root)) == ["0.png", "1.png", "10.png", "2.png"]


def test_mmdental_canonical_views_and_stretched_window(settings, demo, capsys):
    raw = demo / "raw" / "MMDental"
    save_nifti(raw / "B002" / "scan_a.nii.gz", mr_phantom())  # two NIfTIs, neither named after the folder
    save_nifti(raw / "B002" / "scan_b.nii.gz", mr_phantom())
    (raw / "C003").mkdir()  # no NIfTI at all
    only = mr_phantom(shape=(30, 26, 22))  # the folder's only NIfTI, not named after it
    save_nifti(raw / "D004" / "cbct.nii", only, np.diag([-0.4, 0.4, 0.4, 1.0]))
    _convert(settings, "3D_Task/MMDental")
    out = capsys.readouterr().out
    assert f"skipped {raw / 'B002'}: 2 NIfTI files" in out and f"skipped {raw / 'C003'}: no NIfTI file" in out
    root = demo / "DATA_BASEDIR" / "3D_Images" / "MMDental" / "cbct_png"
    assert sorted(os.listdir(root)) == ["A001", "A002", "D004"]
    for case, source in (("A001", raw / "A001" / "A001.nii.gz"), ("D004", raw / "D004" / "cbct.nii")):
        expected = ref_mmdental(source)
        assert sorted(os.listdir(root / case)) == sorted(expected)
        assert len(expected) == 60 and "sagittal_slice_019.png" in expected
        for name, want in expected.items():
            assert np.array_equal(_png(root / case / name), want), (case, name)
    assert _png(root / "A001" / "axial_slice_000.png").shape == (38, 44)  # transposed: rows are the y axis


def test_two_workers_write_the_same_slices(demo, tmp_path):
    settings = demo_settings(demo)
    one = steps.Build(settings).convert(subset="SynthRAD", workers=1)
    two = steps.Build(settings).convert(subset="SynthRAD", workers=2)
    assert one == two


# --- pure selection rules ----------------------------------------------------------------------------------


def test_selection_rules_on_literal_lists():
    assert T.evenly_spaced(0, 2, 5).tolist() == [0, 0, 1, 1, 2]
    assert T.list_sample_indices(np.array([3, 4, 5]), 9, 5, "round").tolist() == [3, 3, 4, 5, 5]  # half to even
    assert T.list_sample_indices(np.array([3, 4, 5]), 9, 5, "floor").tolist() == [3, 3, 4, 4, 5]
    assert T.list_sample_indices(np.array([], dtype=int), 3, 4, "round").tolist() == [0, 0, 1, 2]  # floor
    assert T.contiguous_range_indices(np.array([2, 7]), 10, 3).tolist() == [2, 4, 7]
    assert T.window_to_uint8(np.array([-2000.0, -1350, -600, 150, 2000]), -600, 1500).tolist() == [0, 0, 127, 255, 255]
    assert T.percentile_range(np.zeros((2, 2, 2)), 1, 99) == (0.0, 0.0)
    assert T.normalise_to_uint8(np.ones((2, 2)), 1.0, 1.0).tolist() == [[0, 0], [0, 0]]


@pytest.mark.parametrize(("level", "width"), [(-600, 1500), (50, 350), (40, 80), (35, 350)])
def test_window_table_is_the_float32_rule_for_every_stored_value(level, width):
    """Every int16 value through a header scaling whose float32 and float64 windows disagree on some values:
    the table must hold the scripts' float32 bytes (nibabel scales in float64, the script casts to float32)."""
    slope, inter = float(np.float32(0.01)), 0.0  # as a NIfTI header stores them (float32)
    stored = np.arange(-32768, 32768).astype(np.int16)
    hu = (stored * slope + inter).astype(np.float32)
    hu_min, hu_max = level - width / 2, level + width / 2
    script = np.clip((hu - hu_min) / (hu_max - hu_min) * 255.0, 0, 255).astype(np.uint8)
    table = T.window_lut(np.dtype(np.int16), level, width, slope, inter)
    assert np.array_equal(smallint.apply_lut(table, stored), script)
    in_float64 = ((np.clip(stored * slope + inter, hu_min, hu_max) - hu_min) / width * 255).astype(np.uint8)
    assert not np.array_equal(in_float64, script)  # a float64 window would fail this test


def test_mr_window_takes_percentiles_one_at_a_time_in_float32(tmp_path):
    """A float32 MR volume whose percentile window differs between float32 and float64 arithmetic."""
    from preprocess.volumes.recipes import Profile
    from preprocess.volumes.slicer import reference_slices

    data = (np.random.default_rng(3).random((32, 32, 24)) * 997.3 + 0.37).astype(np.float32)
    data[:, :, :3] = 0
    save_nifti(tmp_path / "mr.nii.gz", data)
    profile = Profile("mr_list", low_pct=0.5, high_pct=99.5, fraction=0.015, short="floor")
    got = [image for _, image in reference_slices(read_volume(tmp_path / "mr.nii.gz"), profile)]
    want = ref_mr(_dataobj(tmp_path / "mr.nii.gz"), 0.5, 99.5, 0.015, "floor")
    assert all(np.array_equal(a, b) for a, b in zip(got, want, strict=True))
    low, high = np.percentile(data[data > 0].astype(np.float64), [0.5, 99.5])
    in_float64 = ((np.clip(data.astype(np.float64), low, high) - low) / (high - low) * 255).astype(np.uint8)
    assert not np.array_equal(in_float64, _ref_mr_volume(data, 0.5, 99.5))  # a float64 window would fail this test


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
    with pytest.raises(RawDataError, match=r"short.nrrd: 100 data bytes, its header promises 2000 .*truncated"):
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
    want = ref_mr(_dataobj(tmp_path / "nan.nii.gz"), 0.5, 99.5, 0.015, "round")
    assert all(np.array_equal(a, b) for a, b in zip(got, want, strict=True))
    save_nifti(tmp_path / "flat.nii.gz", np.full((8, 8, 8), 5.0, np.float32))
    flat = reference_slices(read_volume(tmp_path / "flat.nii.gz"), profile)
    assert len(flat) == 64 and all(not image.any() for _, image in flat)


def test_slice_command_on_one_file(tmp_path, capsys):
    from preprocess.cli import main

    save_nifti(tmp_path / "ct.nii.gz", ct_phantom())
    assert main(["slice", str(tmp_path / "ct.nii.gz"), str(tmp_path / "out"), "--window", "-600", "1500"]) == 0
    assert "64 slices of" in capsys.readouterr().out
    expected = ref_ct_scale_then_clip(_dataobj(tmp_path / "ct.nii.gz"), -600, 1500)
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
