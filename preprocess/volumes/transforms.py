"""Pure array functions of the slicers: slice selection, value mapping to 8 bits, canonical views.

Value mapping follows the benchmark's scripts: linear scaling to 0..255, clipping, then truncation toward
zero (astype uint8), not rounding.
"""

from __future__ import annotations

import numpy as np


def evenly_spaced(first: int, last: int, count: int) -> np.ndarray:
    """floor(linspace(first, last, count)): repeats indices when there are fewer than `count` candidates."""
    return np.floor(np.linspace(first, last, count)).astype(np.int64)


def window_to_uint8(values: np.ndarray, level: float, width: float) -> np.ndarray:
    """CT window: [level - width/2, level + width/2] -> 0..255, clipped, truncated."""
    low, high = level - width / 2.0, level + width / 2.0
    scaled = (np.clip(values.astype(np.float64), low, high) - low) / (high - low) * 255.0
    return scaled.astype(np.uint8)


def window_lut(
    dtype: np.dtype, level: float, width: float, slope: float = 1.0, inter: float = 0.0
) -> np.ndarray | None:
    """A lookup table for the window over every value of a 8/16-bit integer dtype (None for other dtypes)."""
    if dtype not in (np.dtype(np.int16), np.dtype(np.uint16), np.dtype(np.int8), np.dtype(np.uint8)):
        return None
    info = np.iinfo(dtype)
    values = np.arange(info.min, info.max + 1, dtype=np.float64) * slope + inter
    return window_to_uint8(values, level, width)


def apply_lut(lut: np.ndarray, data: np.ndarray) -> np.ndarray:
    offset = -int(np.iinfo(data.dtype).min)
    return lut[data.astype(np.int64) + offset] if offset else lut[data]


def percentile_range(volume: np.ndarray, low_pct: float, high_pct: float) -> tuple[float, float]:
    """Percentiles over voxels > 0 (NaN/inf count as 0); min/max when they coincide or nothing is > 0."""
    finite = np.nan_to_num(volume.astype(np.float64, copy=False), nan=0.0, posinf=0.0, neginf=0.0)
    foreground = finite[finite > 0]
    if foreground.size:
        low, high = np.percentile(foreground, [low_pct, high_pct])
        if low != high:
            return float(low), float(high)
    return float(finite.min()), float(finite.max())


def normalise_to_uint8(values: np.ndarray, low: float, high: float) -> np.ndarray:
    """Clip to [low, high], scale to 0..255, truncate; all zeros when low == high."""
    finite = np.nan_to_num(values.astype(np.float64), nan=0.0, posinf=0.0, neginf=0.0)
    if high == low:
        return np.zeros(values.shape, dtype=np.uint8)
    return ((np.clip(finite, low, high) - low) / (high - low) * 255.0).astype(np.uint8)


def minmax_to_uint8(plane: np.ndarray) -> np.ndarray:
    """Per-slice min-max scaling (uint8 input is returned unchanged); a flat slice becomes zeros."""
    if plane.dtype == np.uint8:
        return np.asarray(plane)
    values = plane.astype(np.float64)
    low, high = values.min(), values.max()
    return normalise_to_uint8(values, low, high)


def informative(volume: np.ndarray, fraction: float, axis: int = 2) -> np.ndarray:
    """Indices of slices along `axis` in which at least `fraction` of the raw voxels are > 0."""
    positive = np.nan_to_num(np.asarray(volume, dtype=np.float64) if volume.dtype.kind == "f" else volume) > 0
    other = tuple(a for a in range(volume.ndim) if a != axis)
    share = positive.mean(axis=other)
    return np.flatnonzero(share >= fraction)


def contiguous_range_indices(informative_idx: np.ndarray, total: int, count: int) -> np.ndarray:
    """CirrMRI600: evenly spaced over [first informative, last informative], or the whole volume."""
    if informative_idx.size == 0:
        return evenly_spaced(0, total - 1, count)
    return evenly_spaced(int(informative_idx[0]), int(informative_idx[-1]), count)


def list_sample_indices(informative_idx: np.ndarray, total: int, count: int, short: str) -> np.ndarray:
    """Sample `count` entries of the informative list (the whole volume when it is empty).

    With at least `count` entries, positions are floor(linspace); with fewer, `short` says how positions are
    taken: 'round' (to nearest, half to even) or 'floor'. Either way duplicates appear when the list is short.
    """
    candidates = informative_idx if informative_idx.size else np.arange(total)
    positions = np.linspace(0, candidates.size - 1, count)
    rounding = np.floor if candidates.size >= count or short == "floor" else np.rint
    return candidates[rounding(positions).astype(np.int64)]


# --- corrected mode: a canonical frame and radiological display ------------------------------------------


def to_canonical(data: np.ndarray, affine: np.ndarray) -> tuple[np.ndarray, tuple[float, float, float]]:
    """Reorder and flip voxel axes so that they run R, A, S (nibabel's closest canonical); return spacing."""
    import nibabel as nib

    orientation = nib.orientations.io_orientation(affine)
    canonical = nib.orientations.apply_orientation(data, orientation)
    spacing = np.linalg.norm(affine[:3, :3], axis=0)
    order = orientation[:, 0].astype(int)
    new_spacing = [0.0, 0.0, 0.0]
    for source_axis, target_axis in enumerate(order):
        new_spacing[target_axis] = float(spacing[source_axis])
    return canonical, tuple(new_spacing)


def canonical_view(canonical: np.ndarray, spacing, plane: str, index: int) -> tuple[np.ndarray, tuple[float, float]]:
    """One slice of an RAS volume in radiological display, with its (row, column) pixel spacing.

    axial: anterior up, patient left on the image right; coronal: superior up, patient left on the right;
    sagittal: superior up, anterior on the left.
    """
    if plane == "axial":
        view = canonical[:, :, index].T  # rows A..P after the flip, columns R..L after the flip
        pixel = (spacing[1], spacing[0])
    elif plane == "coronal":
        view = canonical[:, index, :].T
        pixel = (spacing[2], spacing[0])
    elif plane == "sagittal":
        view = canonical[index, :, :].T
        pixel = (spacing[2], spacing[1])
    else:
        raise ValueError(f"plane must be axial, coronal or sagittal, got {plane!r}")
    return np.flip(view, (0, 1)), pixel


def square_pixels(view: np.ndarray, pixel: tuple[float, float]) -> np.ndarray:
    """Resample so that rows and columns have the same spacing (the smaller one), bilinear."""
    row, col = pixel
    if abs(row - col) <= 1e-3 * max(row, col):
        return view
    from skimage.transform import resize

    target = min(row, col)
    shape = (max(1, round(view.shape[0] * row / target)), max(1, round(view.shape[1] * col / target)))
    return resize(view.astype(np.float64), shape, order=1, preserve_range=True, anti_aliasing=False)


PLANE_AXIS = {"sagittal": 0, "coronal": 1, "axial": 2}
