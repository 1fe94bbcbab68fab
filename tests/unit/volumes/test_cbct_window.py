"""MMDental's window: the histogram's percentiles of integer volumes are np.percentile's floats bit for bit, and
the window of either path equals the rule restated on the masked float32 values (an independent statement)."""

from __future__ import annotations

import numpy as np
import pytest

from preprocess.formats import smallint
from preprocess.volumes import transforms as T

QS = (0.0, 0.5, 25.0, 50.0, 99.5, 100.0, 33.3)


def bits(*values: float) -> bytes:
    return np.array(values, dtype=np.float64).tobytes()  # -0.0 and 0.0 differ here, as do NaNs


def ref_window(volume32: np.ndarray) -> tuple[float, float]:
    """The script's window on its float32 volume: finite values, non-zero ones if any; percentiles 0.5 and
    99.5; min/max when not finite or not increasing; +1 when flat; the upper bound stretched by 1.2."""
    values = volume32[np.isfinite(volume32)]
    if (values != 0).any():
        values = values[values != 0]
    if values.size == 0:
        return 0.0, 1.0
    lo, hi = float(np.percentile(values, 0.5)), float(np.percentile(values, 99.5))
    if not (np.isfinite(lo) and np.isfinite(hi)) or hi <= lo:
        lo, hi = float(values.min()), float(values.max())
    if hi <= lo:
        hi = lo + 1.0
    return lo, lo + (hi - lo) * 1.2


def random_volumes():
    rng = np.random.default_rng(50)
    yield "int16 wide", rng.integers(-32768, 32768, (23, 19, 11)).astype(np.int16)
    yield "int16 CBCT-like", (rng.normal(400, 900, (31, 17, 13)).clip(-1000, 3000)).astype(np.int16)
    sparse = rng.integers(-5, 6, (16, 16, 9)).astype(np.int16)
    sparse[rng.random(sparse.shape) < 0.6] = 0
    yield "int16 mostly zeros", sparse
    yield "int16 negatives only", -rng.integers(1, 200, (7, 5, 3)).astype(np.int16)
    yield "int16 one value", np.full((6, 5, 4), -17, np.int16)
    one = np.zeros((6, 5, 4), np.int16)
    one[2, 3, 1] = 900
    yield "int16 one non-zero voxel", one
    two = np.zeros((9, 4, 2), np.int16)
    two[:3], two[5:] = 3, 8
    yield "int16 two values and zeros", two
    yield "int16 all zero", np.zeros((5, 4, 3), np.int16)
    yield "int16 one voxel", np.array([[[1234]]], np.int16)
    yield "uint8", rng.integers(0, 256, (21, 13, 7)).astype(np.uint8)
    yield "int8", rng.integers(-128, 128, (21, 13, 7)).astype(np.int8)
    yield "uint16", rng.integers(0, 65536, (21, 13, 7)).astype(np.uint16)
    for n in range(6):  # sizes that put the virtual positions on and between order statistics
        yield f"int16 random {n}", rng.integers(-3000, 3000, rng.integers(1, 40, 3)).astype(np.int16)


VOLUMES = dict(random_volumes())


@pytest.mark.parametrize("name", list(VOLUMES))
def test_histogram_percentiles_are_numpys_bit_for_bit(name):
    volume = VOLUMES[name]
    values = volume.astype(np.float32).ravel()
    if (values != 0).any():
        values = values[values != 0]
    histogram = smallint.Histogram.of(volume)
    assert histogram.size == values.size
    for q in QS:
        assert bits(histogram.percentile(q)) == bits(float(np.percentile(values, q))), q
    assert bits(histogram.min(), histogram.max()) == bits(float(values.min()), float(values.max()))


@pytest.mark.parametrize("name", list(VOLUMES))
def test_the_window_of_an_integer_volume_is_the_rules_on_its_float32_values(name):
    volume = VOLUMES[name]
    assert bits(*T.cbct_window(volume, 0.5, 99.5, 1.2)) == bits(*ref_window(volume.astype(np.float32)))


@pytest.mark.parametrize("name", list(VOLUMES))
def test_the_float_path_gives_the_rules_window(name):
    volume = VOLUMES[name].astype(np.float32)
    assert bits(*T.cbct_window(volume, 0.5, 99.5, 1.2)) == bits(*ref_window(volume))


def test_the_float_path_leaves_out_nan_and_infinities():
    rng = np.random.default_rng(3)
    volume = rng.normal(0, 100, (12, 11, 10)).astype(np.float32)
    volume[rng.random(volume.shape) < 0.2] = 0
    volume.flat[[3, 40, 77]] = np.nan, np.inf, -np.inf
    before = volume.copy()
    assert bits(*T.cbct_window(volume, 0.5, 99.5, 1.2)) == bits(*ref_window(volume))
    assert np.array_equal(volume, before, equal_nan=True)  # the volume itself is not partitioned
    assert bits(*T.cbct_window(np.full((3, 3, 3), np.nan, np.float32), 0.5, 99.5, 1.2)) == bits(0.0, 1.0)


def test_a_reoriented_view_is_counted_in_place_with_the_same_histogram():
    volume = np.asfortranarray(VOLUMES["int16 CBCT-like"])
    view = np.flip(volume, (0, 2)).transpose(1, 2, 0)
    flat = smallint._memory_order(view)
    assert np.shares_memory(flat, volume) and flat.size == volume.size
    assert np.array_equal(smallint.value_counts(view), smallint.value_counts(volume))
    values, counts = np.unique(volume, return_counts=True)
    assert np.array_equal(smallint.value_counts(volume)[values.astype(np.int64) + 32768], counts)
    assert smallint.value_counts(volume).sum() == volume.size
    assert bits(*T.cbct_window(view, 0.5, 99.5, 1.2)) == bits(*ref_window(volume.astype(np.float32)))


def test_the_table_maps_each_stored_value_as_its_float32_would():
    rng = np.random.default_rng(4)
    plane = rng.integers(-32768, 32768, (40, 30)).astype(np.int16)
    low, high = -812.0, -812.0 + 2911.0 * 1.2
    want = (np.clip((plane.astype(np.float32) - np.float32(low)) / np.float32(high - low), 0, 1) * 255).astype(np.uint8)
    assert np.array_equal(smallint.apply_lut(T.cbct_lut(plane.dtype, low, high), plane.T), want.T)
