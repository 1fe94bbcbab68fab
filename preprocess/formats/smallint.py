"""8/16-bit integer arrays by value: their value counts, order statistics and lookup tables.

Such an array has at most 65,536 distinct values, so a per-pixel rule can be computed once per value (a table)
and a percentile read from the counts of each value, in one pass and without a float copy of the array. The
volume slicers and the DICOM reader share these, each computing its table in the dtype its rule uses.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

SMALL_INTS = tuple(np.dtype(t) for t in (np.int8, np.uint8, np.int16, np.uint16))


def is_small_int(dtype: np.dtype) -> bool:
    """8/16-bit integers: few enough values that a rule can be tabulated over all of them."""
    return np.dtype(dtype) in SMALL_INTS


def every_value(dtype: np.dtype) -> np.ndarray:
    """Every value of an 8/16-bit integer dtype, ascending, in that dtype: the index of a table is value - min."""
    info = np.iinfo(dtype)
    return np.arange(info.min, info.max + 1).astype(dtype)


def apply_lut(lut: np.ndarray, data: np.ndarray) -> np.ndarray:
    """lut[value - dtype min] for every element, gathered through the unsigned view (no int64 index array)."""
    offset = -int(np.iinfo(data.dtype).min)
    if not offset:
        return np.take(lut, data)
    return np.take(np.roll(lut, offset), data.view(f"u{data.dtype.itemsize}"))


@dataclass(frozen=True)
class Histogram:
    """Some of an 8/16-bit integer array's elements as counts of each distinct value, each value as a rule
    sees it (float32 for the volume scripts, float64 for DICOM rescaling): the sample's order statistics,
    hence np.percentile's result on it, without sorting or copying the array."""

    values: np.ndarray  # the distinct values present, ascending (non-decreasing once rescaled), as the rule's float
    ends: np.ndarray  # cumulative counts: values[i] fills the sorted positions ends[i-1] .. ends[i] - 1

    @classmethod
    def of(cls, array: np.ndarray) -> Histogram:
        """The non-zero values (all of them when every one is zero), as float32."""
        counts = value_counts(array)
        zero = -int(np.iinfo(array.dtype).min)
        if counts.sum() > counts[zero]:
            counts[zero] = 0  # zeros are left out when anything else is there
        return cls.of_counts(counts, every_value(array.dtype).astype(np.float32))

    @classmethod
    def positive(cls, array: np.ndarray) -> Histogram:
        """The values > 0 only, as float32; none when nothing is > 0."""
        counts = value_counts(array)
        counts[: 1 - int(np.iinfo(array.dtype).min)] = 0  # index value - min: zero and the negative values
        return cls.of_counts(counts, every_value(array.dtype).astype(np.float32))

    @classmethod
    def of_counts(cls, counts: np.ndarray, table: np.ndarray) -> Histogram:
        """Counts indexed by value - dtype min, and each value as the rule sees it (`table`, same index): the
        table must not decrease, as a positive linear rescaling does not."""
        present = np.flatnonzero(counts)
        return cls(table[present], np.cumsum(counts[present]))

    @property
    def size(self) -> int:
        return int(self.ends[-1]) if self.ends.size else 0

    def at(self, position: int) -> np.floating:
        """The value at a position of the sorted sample."""
        return self.values[np.searchsorted(self.ends, position, side="right")]

    def percentile(self, q: float) -> float:
        """np.percentile(sample, q) for the default (linear) method, operation by operation: the virtual
        position (n - 1) * q / 100 in float64, its two neighbours, and the interpolation in the values' dtype."""
        last = self.size - 1
        virtual = last * (q / 100)
        below = min(int(np.floor(virtual)), last)
        low, high = self.at(below), self.at(min(below + 1, last))
        return float(_lerp(low, high, virtual - below))

    def min(self) -> float:
        return float(self.values[0])

    def max(self) -> float:
        return float(self.values[-1])


def _lerp(low: np.floating, high: np.floating, gamma: float) -> np.floating:
    """numpy's quantile interpolation between neighbours (gamma taken in their dtype): from the nearer one."""
    kind = type(low)
    step = high - low
    if gamma >= 0.5:
        return high - step * kind(1 - gamma)
    return low + step * kind(gamma)


# Elements per OpenCV histogram: it counts in int32 and hands the counts back as float32, exact integers up to
# 2**24, so no bin of a chunk can reach a count that float32 would round.
HISTOGRAM_CHUNK = 1 << 22


def value_counts(array: np.ndarray) -> np.ndarray:
    """How often each value of an 8/16-bit integer dtype occurs, indexed by value - dtype min."""
    flat = _memory_order(array)
    unsigned = flat.view(f"u{flat.dtype.itemsize}")
    span = 1 << (8 * flat.dtype.itemsize)
    counts = np.zeros(span, dtype=np.int64)
    for start in range(0, unsigned.size, HISTOGRAM_CHUNK):
        counts += _chunk_counts(unsigned[start : start + HISTOGRAM_CHUNK], span)
    offset = -int(np.iinfo(array.dtype).min)
    return np.roll(counts, offset) if offset else counts  # the unsigned view puts negative values last


def _chunk_counts(unsigned: np.ndarray, span: int) -> np.ndarray:
    """Counts of each unsigned 8/16-bit value 0 .. span - 1 in a contiguous run of elements: OpenCV's uniform
    histogram with one bin per value (bin = floor(value * 1.0), exact), in half the time of np.bincount,
    which first widens every element to an int64 index."""
    import cv2

    counts = cv2.calcHist([unsigned.reshape(1, -1)], [0], None, [span], [0, span])
    return counts.ravel().astype(np.int64)


def _memory_order(array: np.ndarray) -> np.ndarray:
    """The elements as one flat array in memory order: a view of a whole block read in any axis order with
    any flips (a reoriented volume), a copy only when the elements are not one block."""
    for axis in range(array.ndim):
        if array.strides[axis] < 0:
            array = np.flip(array, axis)
    order = np.argsort(array.strides, kind="stable")[::-1]
    return array.transpose(order).reshape(-1)
