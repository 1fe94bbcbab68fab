"""Pure array functions of the slicers: slice selection, value mapping to 8 bits, canonical views.

Value mapping follows the benchmark's scripts operation by operation and in their dtype (float32: the scripts
cast the voxels to float32 first), then truncates toward zero (astype uint8), never rounds: the same value can
land on either side of a truncation boundary in float32 and in float64.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from preprocess.formats.smallint import Histogram, every_value, is_small_int

F32 = np.float32


def evenly_spaced(first: int, last: int, count: int) -> np.ndarray:
    """floor(linspace(first, last, count)): repeats indices when there are fewer than `count` candidates."""
    return np.floor(np.linspace(first, last, count)).astype(np.int64)


def window_to_uint8(values: np.ndarray, level: float, width: float) -> np.ndarray:
    """CT window in float32: (v - low) / (high - low) * 255, clipped to 0..255, truncated.

    Some scripts clip to [low, high] before scaling, others clip 0..255 after: for every float32 value,
    infinities and NaN included, both orders give the same byte, so one function serves both.
    """
    low, high = level - width / 2, level + width / 2
    scaled = (values.astype(F32, copy=False) - F32(low)) / F32(high - low) * F32(255.0)
    return np.clip(scaled, F32(0), F32(255)).astype(np.uint8)


def window_lut(
    dtype: np.dtype, level: float, width: float, slope: float = 1.0, inter: float = 0.0
) -> np.ndarray | None:
    """The window over every value of an 8/16-bit integer dtype (None for other dtypes), each value taken as
    the scripts see it: header scaling in float64, then float32."""
    if not is_small_int(dtype):
        return None
    values = every_value(dtype).astype(np.float64) * slope + inter
    return window_to_uint8(values.astype(F32), level, width)


@dataclass(frozen=True)
class MrWindow:
    """A whole-volume percentile window (float32 bounds, and the divisor as the script computes it)."""

    low: np.float32
    high: np.float32
    span: np.float32


def mr_window(volume32: np.ndarray, low_pct: float, high_pct: float) -> MrWindow | None:
    """Percentiles of the voxels > 0 (float32, NaN/inf already 0), each asked for alone as the scripts do (a
    list of percentiles comes back in float64); the foreground's min and max when they coincide. None (all
    slices black) when nothing is > 0 or the foreground is flat."""
    return mr_window_of(_Values(volume32[volume32 > 0]), low_pct, high_pct)


def mr_window_of(foreground: _Values | Histogram, low_pct: float, high_pct: float) -> MrWindow | None:
    """`mr_window` from the foreground's values: copied (float volumes) or counted (`Histogram.positive`)."""
    if foreground.size == 0:
        return None
    low, high = foreground.percentile(low_pct), foreground.percentile(high_pct)
    if high > low:
        return MrWindow(F32(low), F32(high), F32(high) - F32(low))
    low, high = foreground.min(), foreground.max()  # Python floats: the divisor in float64
    if high <= low:
        return None
    return MrWindow(F32(low), F32(high), F32(high - low))


def mr_to_uint8(plane32: np.ndarray, window: MrWindow | None) -> np.ndarray:
    """clip to the window, (v - low) / span * 255 in float32, clip 0..255, truncate; black without a window."""
    if window is None:
        return np.zeros(plane32.shape, dtype=np.uint8)
    scaled = (np.clip(plane32, window.low, window.high) - window.low) / window.span * F32(255.0)
    return np.clip(scaled, F32(0), F32(255)).astype(np.uint8)


def mr_lut(dtype: np.dtype, window: MrWindow | None) -> np.ndarray:
    """`mr_to_uint8` over every value of an 8/16-bit integer dtype (each value as float32), for apply_lut."""
    return mr_to_uint8(every_value(dtype).astype(F32), window)


def finite_float32(values: np.ndarray) -> np.ndarray:
    """float32 with NaN and +-inf as 0 (the scripts' nan_to_num)."""
    return np.nan_to_num(values.astype(F32), copy=False, nan=0.0, posinf=0.0, neginf=0.0)


def percentile_range(volume: np.ndarray, low_pct: float, high_pct: float) -> tuple[float, float]:
    """Percentiles over voxels > 0 (NaN/inf count as 0); min/max when they coincide or nothing is > 0 (the
    `slice` command's float64 window for canonical views)."""
    finite = np.nan_to_num(volume.astype(np.float64, copy=False), nan=0.0, posinf=0.0, neginf=0.0)
    foreground = finite[finite > 0]
    if foreground.size:
        low, high = np.percentile(foreground, [low_pct, high_pct])
        if low != high:
            return float(low), float(high)
    return float(finite.min()), float(finite.max())


def normalise_to_uint8(values: np.ndarray, low: float, high: float) -> np.ndarray:
    """Clip to [low, high], scale to 0..255, truncate; all zeros when low == high (float64; canonical mode)."""
    finite = np.nan_to_num(values.astype(np.float64), nan=0.0, posinf=0.0, neginf=0.0)
    if high == low:
        return np.zeros(values.shape, dtype=np.uint8)
    return ((np.clip(finite, low, high) - low) / (high - low) * 255.0).astype(np.uint8)


def minmax_to_uint8(plane: np.ndarray) -> np.ndarray:
    """MRNet's rule: uint8 unchanged, else (v - min) / (max - min) * 255 in the slice's own dtype arithmetic,
    truncated; a flat slice becomes zeros."""
    plane = np.asarray(plane)
    if plane.dtype == np.uint8:
        return plane
    low, high = plane.min(), plane.max()
    if not high > low:
        return np.zeros(plane.shape, dtype=np.uint8)
    return ((plane - low) / (high - low) * 255.0).astype(np.uint8)


def informative(volume32: np.ndarray, fraction: float, axis: int = 2) -> np.ndarray:
    """Indices of slices along `axis` in which at least `fraction` of the voxels are > 0 (float32 values,
    NaN/inf counted as 0, like the scripts)."""
    other = tuple(a for a in range(volume32.ndim) if a != axis)
    size = int(np.prod([volume32.shape[a] for a in other]))
    positive = volume32 > 0
    # Counted slice by slice: a slice of a NIfTI-ordered volume is one block, counted several times faster than
    # a reduction over two axes of the whole.
    counts = np.array([np.count_nonzero(plane) for plane in np.moveaxis(positive, axis, 0)], dtype=np.int64)
    return np.flatnonzero(counts / size >= fraction)


def contiguous_range_indices(informative_idx: np.ndarray, total: int, count: int) -> np.ndarray:
    """CirrMRI600: evenly spaced over [first informative, last informative], or the whole volume."""
    if informative_idx.size == 0:
        return evenly_spaced(0, total - 1, count)
    return evenly_spaced(int(informative_idx[0]), int(informative_idx[-1]), count)


def list_sample_indices(informative_idx: np.ndarray, total: int, count: int, short: str) -> np.ndarray:
    """Sample `count` entries of the informative list; the whole volume, floor-spaced, when it is empty.

    With at least `count` entries, positions are floor(linspace); with fewer, `short` says how positions are
    taken: 'round' (to nearest, half to even) or 'floor'. Either way duplicates appear when the list is short.
    """
    if informative_idx.size == 0:
        return evenly_spaced(0, total - 1, count)
    positions = np.linspace(0, informative_idx.size - 1, count)
    rounding = np.floor if informative_idx.size >= count or short == "floor" else np.rint
    return informative_idx[rounding(positions).astype(np.int64)]


# --- MMDental's CBCT rule: one window per volume, three views ----------------------------------------------


def cbct_window(volume: np.ndarray, low_pct: float, high_pct: float, stretch: float) -> tuple[float, float]:
    """Percentiles of the finite (non-zero, if any) values taken as float32, as Python floats; min/max when not
    finite or not increasing, +1 when still flat; then the upper bound moved out to low + (high - low) * stretch.

    8/16-bit integer volumes are counted in one pass (`Histogram`), others copied once (the selected values)."""
    sample = Histogram.of(volume) if is_small_int(volume.dtype) else _Values.of(volume)
    if sample.size == 0:
        return 0.0, 1.0  # the script returns this before stretching
    low, high = sample.percentile(low_pct), sample.percentile(high_pct)
    if not (np.isfinite(low) and np.isfinite(high)) or high <= low:
        low, high = sample.min(), sample.max()
    if high <= low:
        high = low + 1.0
    return low, low + (high - low) * stretch


@dataclass(frozen=True)
class _Values:
    """The selected values of a float volume (one copy), partitioned in place by each percentile."""

    values: np.ndarray

    @classmethod
    def of(cls, volume: np.ndarray) -> _Values:
        finite = np.isfinite(volume)
        chosen = volume[finite & (volume != 0)]
        return cls(chosen if chosen.size else volume[finite])

    @property
    def size(self) -> int:
        return self.values.size

    def percentile(self, q: float) -> float:
        # Each percentile asked for alone, as the script does (a list would come back in float64); partitioning
        # the copy in place keeps its values, so the second call sees the same sample.
        return float(np.percentile(self.values, q, overwrite_input=True))

    def min(self) -> float:
        return float(self.values.min())

    def max(self) -> float:
        return float(self.values.max())


def cbct_lut(dtype: np.dtype, low: float, high: float) -> np.ndarray:
    """`cbct_to_uint8` over every value of an 8/16-bit integer dtype (each value as float32), for apply_lut."""
    return cbct_to_uint8(every_value(dtype).astype(F32), low, high)


def cbct_indices(length: int, count: int, fractions: tuple[float, float]) -> np.ndarray:
    """`count` floor-spaced indices over [round(f0 n), round(f1 n)) of an axis of n slices, kept inside it."""
    first = max(0, min(round(length * fractions[0]), length - 1))
    stop = max(first + 1, min(round(length * fractions[1]), length))
    return evenly_spaced(first, stop - 1, count)


def cbct_to_uint8(plane32: np.ndarray, low: float, high: float) -> np.ndarray:
    """(v - low) / (high - low) in float32, clipped to 0..1, times 255, truncated."""
    scaled = np.clip((plane32 - F32(low)) / F32(high - low), F32(0), F32(1))
    return (scaled * F32(255.0)).astype(np.uint8)


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
