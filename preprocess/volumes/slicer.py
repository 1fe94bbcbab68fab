"""Volumes to 8-bit slices, in reference-compatible or canonical mode.

Each slicer yields (fields, image); `name` (the subset's file name template) turns the fields into a file
name: {k} the position in the series, {index} the slice's index in the volume, {view} (cbct_views).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from preprocess.errors import RawDataError
from preprocess.formats.smallint import Histogram, apply_lut, is_small_int
from preprocess.volumes import transforms as T
from preprocess.volumes.io import Limits, Volume, read_nifti_canonical, read_volume
from preprocess.volumes.recipes import Profile, fill

# The `slice` command's names for one file outside any subset; conversions pass their subset's template.
COMMAND_NAME = "slice_{k:03d}.png"


def read_for(profile: Profile, path: Path, limits: Limits | None = None) -> Volume:
    """The reader whose values the profile's rule starts from (MMDental's rule reads through nibabel)."""
    return read_nifti_canonical(path, limits) if profile.kind == "cbct_views" else read_volume(path, limits)


def reference_slices(volume: Volume, profile: Profile, name: str = COMMAND_NAME) -> list[tuple[str, np.ndarray]]:
    """The benchmark scripts' behaviour: no reorientation (MMDental: nibabel's closest canonical), slices
    along file axis 2 (MRNet: axis 0; MMDental: all three axes)."""
    return _named(_reference(volume, profile), name, volume)


def _named(slices, name: str, volume: Volume) -> list[tuple[str, np.ndarray]]:
    return [(fill(name, fields, str(volume.path)), np.ascontiguousarray(image)) for fields, image in slices]


def _reference(volume: Volume, profile: Profile):
    data = volume.data
    if profile.kind == "mrnet":
        total = data.shape[0]
        chosen = np.arange(total) if total <= profile.count else T.evenly_spaced(0, total - 1, profile.count)
        return [({"k": k, "index": int(i)}, T.minmax_to_uint8(np.asarray(data[i]))) for k, i in enumerate(chosen)]
    _check_values(volume)
    if profile.kind == "cbct_views":
        return _cbct_views(data, profile)
    if profile.kind == "ct_window":
        chosen = T.evenly_spaced(0, data.shape[2] - 1, profile.count)
        return [({"k": k, "index": int(i)}, _ct_slice(volume, profile, i)) for k, i in enumerate(chosen)]
    return _mr_slices(volume, profile)


def _mr_slices(volume: Volume, profile: Profile):
    """The MR rule on the float32 volume: one percentile window of the voxels > 0, the informative slices.

    An unscaled 8/16-bit integer volume's float32 values are its stored values (finite, > 0 where they are):
    the slices are chosen from and the window counted on the stored array, and each slice is looked up in the
    window's table over the dtype, with no float32 copy of the volume."""
    data = volume.data
    if is_small_int(data.dtype) and not volume.is_scaled:
        chosen = _mr_indices(data, profile, axis=2)
        window = T.mr_window_of(Histogram.positive(data), profile.low_pct, profile.high_pct)
        lut = T.mr_lut(data.dtype, window)
        return [({"k": k, "index": int(i)}, _lookup(lut, data[:, :, i])) for k, i in enumerate(chosen)]
    values = T.finite_float32(volume.scaled(data))
    chosen = _mr_indices(values, profile, axis=2)
    window = T.mr_window(values, profile.low_pct, profile.high_pct)
    return [({"k": k, "index": int(i)}, T.mr_to_uint8(values[:, :, i], window)) for k, i in enumerate(chosen)]


_LUTS: dict = {}


def _ct_slice(volume: Volume, profile: Profile, index: int) -> np.ndarray:
    plane = volume.data[:, :, index]
    key = (plane.dtype.str, profile.level, profile.width, volume.slope, volume.inter)
    if key not in _LUTS:
        _LUTS[key] = T.window_lut(plane.dtype, profile.level, profile.width, volume.slope, volume.inter)
    lut = _LUTS[key]
    if lut is None:
        return T.window_to_uint8(volume.float32(plane), profile.level, profile.width)
    return _lookup(lut, plane)


def _lookup(lut: np.ndarray, plane: np.ndarray) -> np.ndarray:
    """The plane's values looked up in a table over its dtype (apply_lut)."""
    if plane.flags.f_contiguous and not plane.flags.c_contiguous:
        # NIfTI stores x fastest, so the slice is column-major: NumPy's gather reads such an index across its
        # columns, at twice the time of looking up the row-major transpose and transposing the bytes back.
        import cv2

        return cv2.transpose(apply_lut(lut, plane.T))
    return apply_lut(lut, plane)


def _cbct_views(data: np.ndarray, profile: Profile):
    """One window for the volume; per view, `count` slices from the central span of its axis, transposed."""
    low, high = T.cbct_window(data, profile.low_pct, profile.high_pct, profile.stretch)
    mapping = _cbct_mapping(data.dtype, low, high)
    slices = []
    for view, axis in profile.views:
        for k, index in enumerate(T.cbct_indices(data.shape[axis], profile.count, profile.span)):
            plane = _plane(data, axis, int(index)).T
            slices.append(({"view": view, "k": k, "index": int(index)}, mapping(plane)))
    return slices


def _cbct_mapping(dtype: np.dtype, low: float, high: float):
    """The window as a table over every stored value of an 8/16-bit integer volume (each value as float32, as
    nibabel's get_fdata gives it), else computed on the float32 slice."""
    if not is_small_int(dtype):
        return lambda plane: T.cbct_to_uint8(plane, low, high)
    lut = T.cbct_lut(dtype, low, high)
    return lambda plane: apply_lut(lut, plane)


def _plane(data: np.ndarray, axis: int, index: int) -> np.ndarray:
    """data[..., index, ...] along `axis` by basic indexing: a view (np.take would copy the whole volume)."""
    return data[(slice(None),) * axis + (index,)]


def canonical_slices(volume: Volume, profile: Profile, name: str = COMMAND_NAME) -> list[tuple[str, np.ndarray]]:
    """Corrected mode: RAS canonical frame, radiological axial display, square pixels, unique indices (MRNet
    has no geometry and MMDental's rule is canonical already: both as in reference mode)."""
    if volume.affine is None or profile.kind in ("mrnet", "cbct_views"):
        return reference_slices(volume, profile, name)
    _check_values(volume)
    canonical, spacing = T.to_canonical(volume.data, volume.affine)
    total = canonical.shape[2]
    if profile.kind == "ct_window":
        chosen = np.unique(T.evenly_spaced(0, total - 1, profile.count))

        def mapping(plane):
            return T.window_to_uint8(plane, profile.level, profile.width)
    else:
        values = T.finite_float32(volume.scaled(canonical))
        chosen = np.unique(_mr_indices(values, profile, axis=2))
        low, high = T.percentile_range(values, profile.low_pct, profile.high_pct)

        def mapping(plane):
            return T.normalise_to_uint8(plane, low, high)

    slices = []
    for k, index in enumerate(chosen):
        view, pixel = T.canonical_view(canonical, spacing, "axial", int(index))
        plane = T.square_pixels(volume.scaled(view).astype(np.float64), pixel)
        slices.append(({"k": k, "index": int(index)}, mapping(plane)))
    return _named(slices, name, volume)


def view_slices(volume: Volume, plane: str, mapping, count: int = 64):
    """All-purpose canonical views (debugging one file, tests): `count` unique evenly spaced slices."""
    if volume.affine is None:
        raise RawDataError(f"{volume.path}: no geometry, canonical views need an affine")
    canonical, spacing = T.to_canonical(volume.data, volume.affine)
    axis = T.PLANE_AXIS[plane]
    chosen = np.unique(T.evenly_spaced(0, canonical.shape[axis] - 1, count))
    out = []
    for k, index in enumerate(chosen):
        view, pixel = T.canonical_view(canonical, spacing, plane, int(index))
        out.append((f"{plane}_{k:03d}.png", mapping(T.square_pixels(volume.scaled(view).astype(np.float64), pixel))))
    return out


def _mr_indices(values: np.ndarray, profile: Profile, axis: int) -> np.ndarray:
    """Indices from the informative slices (float32 values > 0 in at least `fraction` of a slice; `values` may
    be the stored integers of a volume whose float32 values they are: the same voxels are > 0)."""
    total = values.shape[axis]
    informative = T.informative(values, profile.fraction, axis=axis)
    if profile.kind == "mr_contiguous":
        return T.contiguous_range_indices(informative, total, profile.count)
    return T.list_sample_indices(informative, total, profile.count, profile.short)


def _check_values(volume: Volume) -> None:
    if volume.data.size == 0 or min(volume.data.shape) == 0:
        raise RawDataError(f"{volume.path}: empty volume of shape {volume.data.shape}")
