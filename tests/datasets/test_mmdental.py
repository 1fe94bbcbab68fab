"""MMDental through the conversion, on small volumes stored in several orientations and value types, against
the authors' rule restated here (data/Preprocess/3D_Task/MMDental/cut_slides.py, ../shared/REFERENCE.md):
nibabel's closest canonical, get_fdata float32, one window from the 0.5/99.5 percentiles of the finite non-zero
voxels stretched by 1.2, 20 slices per view over the central 90 % of each axis, transposed, PNG."""

from __future__ import annotations

import os
from pathlib import Path

import nibabel as nib
import numpy as np
import pytest
from PIL import Image

from conftest import demo_settings
from preprocess.pipeline import steps
from preprocess.volumes.recipes import CBCT
from preprocess.volumes.slicer import read_for

SHAPE = (26, 21, 17)
RAS = np.diag([0.3, 0.3, 0.3, 1.0])
LPS = np.diag([-0.3, -0.3, 0.3, 1.0])
# voxel i runs posterior, j right, k superior: the closest canonical swaps the first two axes and flips one
SWAPPED = np.array([[0, 0.3, 0, 0], [-0.3, 0, 0, 0], [0, 0, 0.3, 0], [0, 0, 0, 1.0]])


def authors_slices(path: Path) -> dict[str, np.ndarray]:
    """The rule, step by step in the script's dtypes."""
    volume = nib.as_closest_canonical(nib.load(str(path))).get_fdata(dtype=np.float32)
    volume = np.nan_to_num(volume, nan=0.0, posinf=0.0, neginf=0.0)
    if volume.ndim == 4:
        volume = volume[..., 0]
    finite = volume[np.isfinite(volume)]
    nonzero = finite[finite != 0]
    values = nonzero if nonzero.size else finite
    lo, hi = float(np.percentile(values, 0.5)), float(np.percentile(values, 99.5))
    if not (np.isfinite(lo) and np.isfinite(hi)) or hi <= lo:
        lo, hi = float(values.min()), float(values.max())
    if hi <= lo:
        hi = lo + 1.0
    hi = lo + (hi - lo) * 1.2
    out = {}
    for view, axis in (("axial", 2), ("coronal", 1), ("sagittal", 0)):
        n = volume.shape[axis]
        a = max(0, min(round(0.05 * n), n - 1))
        b = max(a + 1, min(round(0.95 * n), n))
        for k, i in enumerate(np.linspace(a, b - 1, 20).astype(int)):
            plane = np.take(volume, i, axis=axis).T
            scaled = np.clip((plane - lo) / (hi - lo), 0, 1) * 255
            out[f"{view}_slice_{k:03d}.png"] = scaled.astype(np.uint8)
    return out


def cbct(seed: int) -> np.ndarray:
    """Air (0) around a noisy head-like block with bone, CBCT-like stored values."""
    rng = np.random.default_rng(seed)
    values = rng.normal(300, 400, SHAPE)
    values[rng.random(SHAPE) < 0.05] = 2500
    values[:3], values[:, -4:] = 0, 0
    return values.clip(-1000, 3000)


def save(path: Path, data: np.ndarray, affine: np.ndarray, stored=None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    image = nib.Nifti1Image(data, affine)
    if stored is not None:
        image.set_data_dtype(stored)  # nibabel chooses a scl_slope/scl_inter for the float values
    nib.save(image, str(path))


CASES = {  # case -> (voxels, affine, stored dtype when nibabel scales them, the reader's array dtype)
    "R001": (cbct(1).astype(np.int16), RAS, None, np.int16),
    "L002": (cbct(2).astype(np.int16), LPS, None, np.int16),
    "W003": (cbct(3).astype(np.int16), SWAPPED, None, np.int16),
    "U004": ((cbct(4) / 12).clip(0, 255).astype(np.uint8), LPS, None, np.uint8),
    "S005": (cbct(5) * 0.37, LPS, np.int16, np.float32),
    "F006": (cbct(6).astype(np.float32) / 7, SWAPPED, None, np.float32),
    "Z007": (np.zeros(SHAPE, np.int16), LPS, None, np.int16),
    "Q008": (cbct(8).astype(np.int16)[..., None], LPS, None, np.int16),
}


@pytest.fixture
def raw(demo):
    folder = demo / "raw" / "MMDental"
    for case, (data, affine, stored, _) in CASES.items():
        save(folder / case / f"{case}.nii.gz", data, affine, stored)
    return folder


def test_the_stored_integers_are_read_as_they_are_and_the_rest_through_nibabel(raw):
    scaled = nib.load(str(raw / "S005" / "S005.nii.gz")).dataobj
    assert scaled.dtype == np.int16 and (scaled.slope, scaled.inter) != (1.0, 0.0)
    for case, (*_, dtype) in CASES.items():
        assert read_for(CBCT, raw / case / f"{case}.nii.gz").data.dtype == dtype, case


@pytest.mark.parametrize("orientation", ["reference", "canonical"])
def test_every_png_has_the_authors_pixels(demo, raw, orientation):
    base = demo / f"DATA-{orientation}"
    base.mkdir()
    settings = demo_settings(demo, orientation=orientation, data_basedir=str(base))
    steps.Build(settings).convert(subset="3D_Task/MMDental")
    root = base / "3D_Images" / "MMDental" / "cbct_png"
    for case in CASES:
        expected = authors_slices(raw / case / f"{case}.nii.gz")
        assert len(expected) == 60 and sorted(os.listdir(root / case)) == sorted(expected)
        for name, want in expected.items():
            with Image.open(root / case / name) as image:
                assert image.mode == "L"
                assert np.array_equal(np.asarray(image), want), (case, name)
