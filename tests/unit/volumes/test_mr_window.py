"""The MR rule (BraTS, HaN-Seg MR, SynthRAD MR, CirrMRI600) on an unscaled 8/16-bit integer volume: counted and
looked up in a table instead of computed on a float32 copy, with the same bytes. The expected images come from
the rule restated here on the float32 volume with np.percentile (an independent statement, not the package's
helpers): percentiles of the voxels > 0, each asked for alone; the foreground's min and max when they
coincide; black when nothing is > 0 or the foreground is flat; the informative slices' fraction of voxels > 0."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from preprocess.formats import smallint
from preprocess.volumes import slicer
from preprocess.volumes import transforms as T
from preprocess.volumes.io import Volume
from preprocess.volumes.recipes import BRATS, SYNTHRAD, Profile

CIRRMRI = Profile("mr_contiguous", low_pct=1.0, high_pct=99.5, fraction=0.01)
PROFILES = {"brats": BRATS, "synthrad pelvis": SYNTHRAD["pelvis", "mr"], "cirrmri600": CIRRMRI}
QS = (0.0, 0.5, 1.0, 25.0, 50.0, 99.5, 100.0, 33.3)


def bits(*values: float) -> bytes:
    return np.array(values, dtype=np.float64).tobytes()


def ref_foreground(data: np.ndarray) -> np.ndarray:
    volume = np.nan_to_num(data.astype(np.float32), nan=0.0, posinf=0.0, neginf=0.0)
    return volume[volume > 0]


def ref_normalised(data: np.ndarray, p_low: float, p_high: float) -> np.ndarray:
    """The script's whole volume in 8 bits: float32, window from np.percentile, clip, scale, clip, truncate."""
    volume = np.nan_to_num(data.astype(np.float32), nan=0.0, posinf=0.0, neginf=0.0)
    foreground = volume[volume > 0]
    if foreground.size == 0:
        return np.zeros(volume.shape, np.uint8)
    lo, hi = np.percentile(foreground, p_low), np.percentile(foreground, p_high)
    if hi <= lo:
        lo, hi = float(foreground.min()), float(foreground.max())
        if hi <= lo:
            return np.zeros(volume.shape, np.uint8)
    scaled = (np.clip(volume, lo, hi) - lo) / (hi - lo) * 255.0
    return np.clip(scaled, 0, 255).astype(np.uint8)


def ref_picks(data: np.ndarray, profile: Profile) -> list[int]:
    """The informative slices (float32 > 0 in at least `fraction` of the slice), sampled as the profile says."""
    volume = np.nan_to_num(data.astype(np.float32), nan=0.0, posinf=0.0, neginf=0.0)
    plane = volume.shape[0] * volume.shape[1]
    good = [k for k in range(volume.shape[2]) if np.count_nonzero(volume[:, :, k] > 0) / plane >= profile.fraction]
    count = profile.count
    if not good:
        return np.linspace(0, volume.shape[2] - 1, count, dtype=int).tolist()
    if profile.kind == "mr_contiguous":
        return np.linspace(good[0], good[-1], count, dtype=int).tolist()
    if len(good) >= count or profile.short == "floor":
        return [good[p] for p in np.linspace(0, len(good) - 1, count, dtype=int)]
    return [good[p] for p in np.round(np.linspace(0, len(good) - 1, count)).astype(int)]


def mr_like(rng, shape, dtype, peak: float) -> np.ndarray:
    """Zero background, a noisy blob of tissue, empty slices at both ends, a few stray voxels."""
    nx, ny, nz = shape
    x, y = np.meshgrid(np.linspace(-1, 1, nx), np.linspace(-1, 1, ny), indexing="ij")
    volume = np.zeros(shape, np.float64)
    for k in range(2, nz - 2):
        inside = x**2 / 0.6 + y**2 / 0.5 < 1 - ((2 * k / (nz - 1)) - 1) ** 2
        volume[:, :, k] = np.where(inside, peak * (0.5 + 0.3 * rng.random((nx, ny))), 0)
    volume[rng.random(shape) < 0.01] = peak * 0.2
    return np.asfortranarray(volume.astype(dtype))  # NIfTI's order: the first axis fastest


def random_volumes():
    rng = np.random.default_rng(52)
    yield "int16 MR-like", mr_like(rng, (40, 36, 30), np.int16, 1000)
    yield "uint16 MR-like", mr_like(rng, (33, 28, 21), np.uint16, 40000)
    yield "uint8 MR-like", mr_like(rng, (25, 30, 19), np.uint8, 220)
    yield "int8 MR-like", mr_like(rng, (17, 15, 13), np.int8, 120)
    negatives = mr_like(rng, (30, 26, 20), np.int16, 800)
    negatives[rng.random(negatives.shape) < 0.3] = -rng.integers(1, 32768, 1)[0]
    negatives[0, 0, 0] = -32768
    yield "int16 with negatives", negatives
    yield "int16 wide", np.asfortranarray(rng.integers(-32768, 32768, (23, 19, 11)).astype(np.int16))
    yield "uint16 wide", rng.integers(0, 65536, (21, 13, 70)).astype(np.uint16)
    yield "int16 negatives only", -rng.integers(1, 200, (7, 5, 3)).astype(np.int16)
    yield "int16 all zero", np.zeros((9, 8, 6), np.int16)
    yield "uint8 all zero", np.zeros((9, 8, 6), np.uint8)
    flat = np.zeros((12, 10, 8), np.int16)
    flat[2:9, 3:7, 1:6] = 321
    flat[0, 0, :] = -5
    yield "int16 flat foreground", flat
    mostly = np.full((12, 10, 8), 7, np.uint16)
    mostly[3, 4, 5] = 900  # percentiles 0.5 and 99.5 both 7: the window falls back to min and max
    yield "uint16 one outlier", mostly
    one = np.zeros((6, 5, 4), np.uint8)
    one[2, 3, 1] = 200
    yield "uint8 one voxel > 0", one
    for n in range(5):  # sizes that put the virtual positions on and between order statistics
        yield f"int16 random {n}", rng.integers(-3000, 3000, rng.integers(1, 40, 3)).astype(np.int16)


VOLUMES = dict(random_volumes())


@pytest.mark.parametrize("name", list(VOLUMES))
def test_the_positive_histogram_has_numpys_percentiles_of_the_foreground(name):
    volume = VOLUMES[name]
    foreground = ref_foreground(volume)
    histogram = smallint.Histogram.positive(volume)
    assert histogram.size == foreground.size
    if foreground.size == 0:
        return
    for q in QS:
        assert bits(histogram.percentile(q)) == bits(float(np.percentile(foreground, q))), q
    assert bits(histogram.min(), histogram.max()) == bits(float(foreground.min()), float(foreground.max()))


@pytest.mark.parametrize("name", list(VOLUMES))
@pytest.mark.parametrize("profile", list(PROFILES))
def test_the_integer_path_gives_the_rules_slices_without_a_float_copy(name, profile, monkeypatch):
    data, rule = VOLUMES[name], PROFILES[profile]
    monkeypatch.setattr(T, "finite_float32", _no_float_copy)
    got = slicer.reference_slices(Volume(data, np.eye(4), path=Path("mr.nii.gz")), rule)
    normalised = ref_normalised(data, rule.low_pct, rule.high_pct)
    picks = ref_picks(data, rule)
    assert [n for n, _ in got] == [f"slice_{k:03d}.png" for k in range(len(picks))]
    for (_, image), index in zip(got, picks, strict=True):
        assert image.dtype == np.uint8 and image.flags.c_contiguous
        assert np.array_equal(image, normalised[:, :, index])


def _no_float_copy(values):
    raise AssertionError("an unscaled 8/16-bit volume is converted to float32")


@pytest.mark.parametrize("name", ["int16 MR-like", "int16 with negatives", "uint8 MR-like", "int16 flat foreground"])
def test_a_scaled_or_float_volume_keeps_the_float_path_and_the_rule(name):
    data = VOLUMES[name]
    scaled = Volume(data, np.eye(4), slope=0.5, inter=3.0)
    as_nibabel = data.astype(np.float64) * 0.5 + 3.0  # what nibabel's dataobj gives the script
    cases = [(scaled, as_nibabel), (Volume(data.astype(np.float32), np.eye(4)), data.astype(np.float32))]
    for volume, seen in cases:
        got = slicer.reference_slices(volume, BRATS)
        normalised = ref_normalised(seen, BRATS.low_pct, BRATS.high_pct)
        for (_, image), index in zip(got, ref_picks(seen, BRATS), strict=True):
            assert np.array_equal(image, normalised[:, :, index])


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint16])
def test_the_table_is_the_float_formula_on_every_value(dtype):
    info = np.iinfo(dtype)
    every = np.arange(info.min, info.max + 1).astype(dtype)
    rng = np.random.default_rng(7)
    sample = rng.choice(every[every > 0], 500).reshape(20, 25)
    lo, hi = np.percentile(sample.astype(np.float32), 0.5), np.percentile(sample.astype(np.float32), 99.5)
    window = T.MrWindow(lo, hi, hi - lo)
    values = every.astype(np.float32)
    want = np.clip((np.clip(values, lo, hi) - lo) / (hi - lo) * 255.0, 0, 255).astype(np.uint8)
    assert np.array_equal(T.mr_lut(np.dtype(dtype), window), want)
    assert np.array_equal(smallint.apply_lut(T.mr_lut(np.dtype(dtype), window), every), want)
    assert not T.mr_lut(np.dtype(dtype), None).any()


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint16])
def test_every_value_of_the_dtype_is_counted_in_its_own_bin(dtype):
    info = np.iinfo(dtype)
    every = np.arange(info.min, info.max + 1).astype(dtype)
    twice = np.concatenate([every, every[::-1], every[:5]]).reshape(1, 1, -1)
    want = np.full(every.size, 2)
    want[:5] = 3
    assert np.array_equal(smallint.value_counts(twice), want)


def test_a_value_more_often_than_float32_counts_exactly_is_counted_exactly():
    volume = np.zeros((4097, 4096, 1), np.uint8)  # 2**24 + 4096 zeros less the few below
    volume[0, :3, 0] = 7, 255, 7
    counts = smallint.value_counts(volume)
    assert counts[0] == volume.size - 3 and counts[7] == 2 and counts[255] == 1 and counts.sum() == volume.size
