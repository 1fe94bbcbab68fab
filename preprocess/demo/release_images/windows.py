"""The 8-bit value rules of the benchmark's slicing scripts, each operation in the type the scripts compute
it (float32 arrays with Python floats), truncated to uint8, never rounded."""

from __future__ import annotations

import numpy as np


def ct_clip_then_scale(plane: np.ndarray, level: float, width: float) -> np.ndarray:
    """HaN-Seg, SynthRAD: clip to the window, then map it to 0..255."""
    low, high = level - width / 2, level + width / 2
    values = np.clip(plane.astype(np.float32), low, high)
    return ((values - low) / (high - low) * 255.0).astype(np.uint8)


def ct_scale_then_clip(plane: np.ndarray, level: float, width: float) -> np.ndarray:
    """CT-RATE, RadGenome-ChestCT: map the window to 0..255, then clip."""
    low, high = level - width / 2, level + width / 2
    values = (plane.astype(np.float32) - low) / (high - low) * 255.0
    return np.clip(values, 0, 255).astype(np.uint8)


def mr_volume(data: np.ndarray, low_percent: float, high_percent: float) -> np.ndarray:
    """The whole volume to 0..255 between two percentiles of its voxels > 0 (their min and max when the
    percentiles meet; black when they are all one value or there are none)."""
    volume = np.nan_to_num(data.astype(np.float32), nan=0.0, posinf=0.0, neginf=0.0)
    foreground = volume[volume > 0]
    if foreground.size == 0:
        return np.zeros(volume.shape, np.uint8)
    low, high = np.percentile(foreground, low_percent), np.percentile(foreground, high_percent)
    if high <= low:
        low, high = float(foreground.min()), float(foreground.max())
        if high <= low:
            return np.zeros(volume.shape, np.uint8)
    volume = (np.clip(volume, low, high) - low) / (high - low) * 255.0
    return np.clip(volume, 0, 255).astype(np.uint8)


def informative(data: np.ndarray, fraction: float) -> list[int]:
    """Indices along axis 2 of the slices with at least `fraction` of their pixels > 0 (NaN and inf as 0)."""
    found = []
    for index in range(data.shape[2]):
        plane = np.nan_to_num(data[:, :, index].astype(np.float32), nan=0.0, posinf=0.0, neginf=0.0)
        if np.count_nonzero(plane > 0) / plane.size >= fraction:
            found.append(index)
    return found


def evenly(first: int, last: int, count: int = 64) -> list[int]:
    """`count` indices from first to last, evenly spaced and floored (repeating when there are fewer)."""
    return np.linspace(first, last, count).astype(int).tolist()


def from_informative(valid: list[int], total: int, rounded_when_few: bool, count: int = 64) -> list[int]:
    """`count` picks from the informative list (floored positions; rounded ones when the list is shorter than
    `count` and rounded_when_few); the whole volume when no slice is informative."""
    if not valid:
        return evenly(0, total - 1, count)
    positions = np.linspace(0, len(valid) - 1, count)
    positions = np.round(positions) if rounded_when_few and len(valid) < count else positions
    return [valid[p] for p in positions.astype(int)]


def mmdental_window(volume: np.ndarray) -> tuple[float, float]:
    """lo, hi: percentiles 0.5 and 99.5 of the finite values (the non-zero ones if any), min and max when
    those are not usable, hi = lo + 1 when still equal; then hi widened to lo + 1.2 (hi - lo)."""
    values = volume[np.isfinite(volume)]
    values = values[values != 0] if np.any(values != 0) else values
    if values.size == 0:
        return 0.0, 1.0
    low, high = float(np.percentile(values, 0.5)), float(np.percentile(values, 99.5))
    if not (np.isfinite(low) and np.isfinite(high)) or high <= low:
        low, high = float(values.min()), float(values.max())
    if high <= low:
        high = low + 1.0
    return low, low + (high - low) * 1.2


def mmdental_slice(plane: np.ndarray, low: float, high: float) -> np.ndarray:
    values = np.asarray(plane, dtype=np.float32)
    if not np.isfinite(values).any():
        return np.zeros(values.shape, np.uint8)
    values = np.nan_to_num(values, nan=low, posinf=high, neginf=low)
    return (np.clip((values - low) / (high - low), 0.0, 1.0) * 255.0).astype(np.uint8)
