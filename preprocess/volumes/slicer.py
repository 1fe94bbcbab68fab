"""Turn one volume into named 8-bit slices, in reference-compatible or canonical mode."""

from __future__ import annotations

import numpy as np

from preprocess.errors import RawDataError
from preprocess.volumes import transforms as T
from preprocess.volumes.io import Volume
from preprocess.volumes.recipes import Profile


def reference_slices(volume: Volume, profile: Profile) -> list[tuple[str, np.ndarray]]:
    """The benchmark scripts' behaviour: no reorientation, slices along file axis 2 (MRNet: axis 0)."""
    data = volume.data
    if profile.kind == "mrnet":
        total = data.shape[0]
        chosen = np.arange(total) if total <= profile.count else T.evenly_spaced(0, total - 1, profile.count)
        return [
            (f"slice_{k:02d}_orig_{idx:03d}.png", T.minmax_to_uint8(np.asarray(data[idx])))
            for k, idx in enumerate(chosen)
        ]
    _check_values(volume)
    total = data.shape[2]
    if profile.kind == "ct_window":
        chosen = T.evenly_spaced(0, total - 1, profile.count)
        lut = T.window_lut(data.dtype, profile.level, profile.width, volume.slope, volume.inter)
        planes = [data[:, :, i] for i in chosen]
        mapped = [
            T.apply_lut(lut, p)
            if lut is not None
            else T.window_to_uint8(volume.scaled(p), profile.level, profile.width)
            for p in planes
        ]
        return [(f"slice_{k:03d}.png", image) for k, image in enumerate(mapped)]
    values = volume.scaled(data)
    chosen = _mr_indices(values, profile, axis=2)
    low, high = T.percentile_range(values, profile.low_pct, profile.high_pct)
    return [(f"slice_{k:03d}.png", T.normalise_to_uint8(values[:, :, i], low, high)) for k, i in enumerate(chosen)]


def canonical_slices(volume: Volume, profile: Profile) -> list[tuple[str, np.ndarray]]:
    """Corrected mode: RAS canonical frame, radiological axial display, square pixels, unique indices."""
    if volume.affine is None or profile.kind == "mrnet":
        return reference_slices(volume, profile)
    _check_values(volume)
    canonical, spacing = T.to_canonical(volume.data, volume.affine)
    total = canonical.shape[2]
    if profile.kind == "ct_window":
        chosen = np.unique(T.evenly_spaced(0, total - 1, profile.count))

        def mapping(plane):
            return T.window_to_uint8(plane, profile.level, profile.width)
    else:
        values = volume.scaled(canonical)
        chosen = np.unique(_mr_indices(values, profile, axis=2))
        low, high = T.percentile_range(values, profile.low_pct, profile.high_pct)

        def mapping(plane):
            return T.normalise_to_uint8(plane, low, high)

    slices = []
    for k, index in enumerate(chosen):
        view, pixel = T.canonical_view(canonical, spacing, "axial", int(index))
        plane = T.square_pixels(volume.scaled(view).astype(np.float64), pixel)
        slices.append((f"slice_{k:03d}.png", mapping(plane)))
    return slices


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
    total = values.shape[axis]
    informative = T.informative(values, profile.fraction, axis=axis)
    if profile.kind == "mr_contiguous":
        return T.contiguous_range_indices(informative, total, profile.count)
    return T.list_sample_indices(informative, total, profile.count, profile.short)


def _check_values(volume: Volume) -> None:
    if volume.data.size == 0 or min(volume.data.shape) == 0:
        raise RawDataError(f"{volume.path}: empty volume of shape {volume.data.shape}")
