"""Volume readers. Every reader returns voxels in file order (i, j, k) plus geometry, unscaled.

- NIfTI (.nii, .nii.gz): nibabel parses the header only; the voxel block is inflated with ISA-L and viewed
  with numpy (no float64 copy). Header scaling (scl_slope/scl_inter) is kept aside in `Volume.slope` and
  `Volume.inter` and applied once, by `Volume.scaled`, to the slices that are written.
- NRRD (.nrrd, .seg.nrrd): SimpleITK, whose (z, y, x) array is transposed to (x, y, z) = file order without
  a copy; space directions and origin become an affine (converted from LPS to RAS).
- .npy: numpy, memory-mapped.
- MMDental's rule reads through nibabel itself (`read_nifti_canonical`): closest canonical orientation and
  `get_fdata(float32)`, whose values the reference's pixels come from.
"""

from __future__ import annotations

import gzip
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from preprocess.errors import RawDataError


@dataclass
class Volume:
    data: np.ndarray  # file order (i, j, k), native dtype, header scaling NOT applied
    affine: np.ndarray | None  # voxel (i, j, k, 1) -> RAS+ mm; None for arrays without geometry
    slope: float = 1.0
    inter: float = 0.0
    path: Path | None = None
    zooms: tuple[float, ...] | None = None  # the header's voxel sizes (NIfTI pixdim), when it has them

    @property
    def spacing(self) -> tuple[float, ...]:
        if self.affine is None:
            return (1.0,) * self.data.ndim
        return tuple(float(np.linalg.norm(self.affine[:3, axis])) for axis in range(3))

    @property
    def is_scaled(self) -> bool:
        return (self.slope, self.inter) != (1.0, 0.0)

    def scaled(self, array: np.ndarray) -> np.ndarray:
        """Header scaling applied to (a part of) the data, in float64 like nibabel's get_fdata."""
        if not self.is_scaled:
            return array
        return array.astype(np.float64) * self.slope + self.inter

    def float32(self, array: np.ndarray) -> np.ndarray:
        """`np.asarray(dataobj).astype(np.float32)` of the reference scripts, for (a part of) the data: nibabel
        scales in float64, the scripts then cast to float32."""
        return self.scaled(array).astype(np.float32)

    @property
    def header_zooms(self) -> tuple[float, ...]:
        """Voxel sizes as the reference scripts read them (`header.get_zooms()`), else the affine's."""
        return tuple(float(z) for z in self.zooms[:3]) if self.zooms is not None else self.spacing


def read_volume(path: Path) -> Volume:
    name = path.name.lower()
    if name.endswith((".nii", ".nii.gz")):
        return read_nifti(path)
    if name.endswith(".nrrd"):
        return read_nrrd(path)
    if name.endswith(".npy"):
        return read_npy(path)
    raise RawDataError(f"{path}: unknown volume format (expected .nii, .nii.gz, .nrrd or .npy)")


def _squeeze_4d(data: np.ndarray, path: Path) -> np.ndarray:
    while data.ndim > 3 and data.shape[-1] == 1:
        data = data[..., 0]
    if data.ndim != 3:
        raise RawDataError(f"{path}: expected a 3D volume, got shape {data.shape}")
    return data


def read_nifti(path: Path) -> Volume:
    import nibabel as nib
    from isal import igzip

    try:
        image = nib.load(str(path))
        proxy = image.dataobj  # nibabel's own reading plan: offset, dtype, shape, order, scaling
        shape = tuple(int(n) for n in proxy.shape)
        dtype = np.dtype(proxy.dtype)
        offset = int(proxy.offset)
        slope, inter = float(proxy.slope), float(proxy.inter)
        order = proxy.order
        zooms = tuple(float(z) for z in image.header.get_zooms()[:3])
    except Exception as exc:  # nibabel raises many types for a damaged header
        raise RawDataError(
            f"{path}: unreadable NIfTI header ({type(exc).__name__}: {exc}); the file is corrupt, download it again"
        ) from None
    count = int(np.prod(shape, dtype=np.int64))
    try:
        opener = igzip.open if path.name.lower().endswith(".gz") else open
        with opener(path, "rb") as handle:
            handle.seek(offset) if opener is open else handle.read(offset)
            raw = handle.read(count * dtype.itemsize)
    except (OSError, EOFError, zlib.error, gzip.BadGzipFile) as exc:
        raise RawDataError(
            f"{path}: cannot decompress ({exc}); the file is truncated or corrupt, download it again"
        ) from None
    if len(raw) < count * dtype.itemsize:
        raise RawDataError(
            f"{path}: holds {len(raw)} voxel bytes, its header promises {count * dtype.itemsize} "
            f"(shape {shape}, {dtype}); the file is truncated, download it again"
        )
    data = np.frombuffer(raw, dtype=dtype, count=count).reshape(shape, order=order)
    slope = 1.0 if slope is None or not np.isfinite(slope) or slope == 0 else float(slope)
    inter = 0.0 if inter is None or not np.isfinite(inter) else float(inter)
    affine = np.asarray(image.affine, dtype=np.float64)
    return Volume(_squeeze_4d(data, path), affine, slope, inter, path, zooms)


def read_nifti_canonical(path: Path) -> Volume:
    """nibabel's closest canonical (RAS) image as float32 (`get_fdata(dtype=float32)`), NaN/inf -> 0, a
    singleton 4th axis dropped; header scaling is already in the values."""
    import nibabel as nib

    try:
        image = nib.as_closest_canonical(nib.load(str(path)))
        data = image.get_fdata(dtype=np.float32)
    except (OSError, EOFError, zlib.error, gzip.BadGzipFile, ValueError) as exc:
        raise RawDataError(
            f"{path}: unreadable NIfTI ({type(exc).__name__}: {exc}); the file is truncated or corrupt, "
            "download it again"
        ) from None
    except Exception as exc:  # nibabel raises many types for a damaged header
        raise RawDataError(
            f"{path}: unreadable NIfTI header ({type(exc).__name__}: {exc}); download it again"
        ) from None
    data = np.nan_to_num(data, copy=False, nan=0.0, posinf=0.0, neginf=0.0)
    if data.ndim == 4 and data.shape[3] == 1:
        data = data[:, :, :, 0]
    if data.ndim != 3:
        raise RawDataError(f"{path}: expected a 3D volume, got shape {data.shape}")
    return Volume(data, np.asarray(image.affine, dtype=np.float64), 1.0, 0.0, path)


def read_nrrd(path: Path) -> Volume:
    import SimpleITK as sitk

    try:
        image = sitk.ReadImage(str(path))
    except RuntimeError as exc:
        first = str(exc).strip().splitlines()[-1] if str(exc).strip() else "unknown error"
        raise RawDataError(f"{path}: unreadable NRRD ({first}); the file is corrupt, download it again") from None
    if image.GetNumberOfComponentsPerPixel() != 1:
        raise RawDataError(f"{path}: expected one value per voxel, got {image.GetNumberOfComponentsPerPixel()}")
    array = sitk.GetArrayFromImage(image)  # (z, y, x) = reversed file order
    data = _squeeze_4d(array.transpose(tuple(reversed(range(array.ndim)))), path)
    dimension = image.GetDimension()
    direction = np.array(image.GetDirection(), dtype=np.float64).reshape(dimension, dimension)[:3, :3]
    spacing = np.array(image.GetSpacing(), dtype=np.float64)[:3]
    affine = np.eye(4)
    affine[:3, :3] = direction * spacing  # columns: voxel axes in LPS mm
    affine[:3, 3] = np.array(image.GetOrigin(), dtype=np.float64)[:3]
    affine[:2] *= -1  # LPS -> RAS
    return Volume(data, affine, 1.0, 0.0, path)


def read_npy(path: Path) -> Volume:
    try:
        data = np.load(path, mmap_mode="r", allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise RawDataError(f"{path}: unreadable .npy ({exc}); the file is truncated or corrupt") from None
    if data.ndim != 3:
        raise RawDataError(f"{path}: expected a (slices, height, width) array, got shape {data.shape}")
    return Volume(data, None, 1.0, 0.0, path)
