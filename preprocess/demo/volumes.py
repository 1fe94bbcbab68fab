"""What the fakes of the 3D downloads share (the dataset folders' fakes.py): CT and MR phantoms, NIfTI (plain
and header-scaled) and NRRD writers with the upstreams' geometry."""

from __future__ import annotations

from pathlib import Path

import nibabel as nib
import numpy as np

LPS = np.diag([-0.8, -0.8, 2.0, 1.0])  # voxel axes run to patient Left, Posterior, Superior


def ct_phantom(shape=(48, 40, 36), seed: int = 0, body_axes=(0.9, 0.7)) -> np.ndarray:
    """int16 HU: air, a body ellipse with lungs and a spine, changing along the third axis."""
    x, y, z = np.meshgrid(*(np.linspace(-1, 1, n) for n in shape), indexing="ij")
    hu = np.full(shape, -1000, dtype=np.int16)
    body = (x / body_axes[0]) ** 2 + (y / body_axes[1]) ** 2 < 1 - 0.2 * z**2
    hu[body] = 40
    hu[body & (((x - 0.4) / 0.3) ** 2 + (y / 0.4) ** 2 < 1)] = -820
    hu[body & (((x + 0.4) / 0.3) ** 2 + (y / 0.4) ** 2 < 1)] = -780
    hu[body & ((x / 0.12) ** 2 + ((y - 0.5) / 0.12) ** 2 < 1)] = 700 + seed * 10
    return hu


def mr_phantom(shape=(40, 36, 30), empty: int = 4, seed: int = 0) -> np.ndarray:
    """float32 MR-like intensities, background 0, the first and last `empty` slices blank."""
    x, y, z = np.meshgrid(*(np.linspace(-1, 1, n) for n in shape), indexing="ij")
    values = (300 + 200 * x + 150 * np.cos(3 * y + seed) + 80 * z) * ((x / 0.8) ** 2 + (y / 0.8) ** 2 < 1)
    values = np.clip(values, 0, None).astype(np.float32)
    values[:, :, :empty] = 0
    values[:, :, shape[2] - empty :] = 0
    return values


def save_nifti(path: Path, data: np.ndarray, affine=LPS) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    image = nib.Nifti1Image(data, affine)
    image.header.set_xyzt_units("mm")
    nib.save(image, str(path))


def save_nrrd(path: Path, data: np.ndarray, spacing=(0.9, 0.9, 2.5)) -> None:
    import SimpleITK as sitk

    path.parent.mkdir(parents=True, exist_ok=True)
    image = sitk.GetImageFromArray(np.ascontiguousarray(data.transpose(2, 1, 0)))
    image.SetSpacing(spacing)
    image.SetOrigin((-20.0, -30.0, 10.0))
    sitk.WriteImage(image, str(path), True)


def save_scaled_nifti(path: Path, stored: np.ndarray, slope: float, inter: float, affine=LPS) -> None:
    """Stored values with header scaling (scl_slope, scl_inter), as scanners export CT: HU = slope * v + inter."""
    path.parent.mkdir(parents=True, exist_ok=True)
    image = nib.Nifti1Image(stored, affine)
    image.header.set_slope_inter(slope, inter)
    image.header.set_xyzt_units("mm")
    nib.save(image, str(path))
