"""The reference DRR looks mu up only inside the box around each slice's body: its integrals must be those of
the whole slice, bit for bit, wherever the body lies (edges, corners, specks the opening removes, none)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from preprocess.volumes import drr
from preprocess.volumes.io import Volume

SQUARE = np.ones((5, 5), np.uint8)


def whole_slice(hu: np.ndarray) -> np.ndarray:
    """The script's integrals of one axial slice (y, x) of float32 HU, on the whole slice, summed y by y."""
    mu = np.clip(0.0025 * (np.clip(hu, -1000, 1200) / 1000.0 + 1.0), 0, None).astype(np.float32)
    body = (hu > -700).astype(np.uint8)
    body = cv2.morphologyEx(cv2.morphologyEx(body, cv2.MORPH_CLOSE, SQUARE), cv2.MORPH_OPEN, SQUARE)
    return (mu * body.astype(np.float32)).sum(axis=0)


def bodies(rng: np.random.Generator, shape: tuple[int, int]) -> list[np.ndarray]:
    """Body tests of one slice (y, x): none, all, random blobs anywhere (touching edges and corners), specks."""
    height, width = shape
    found = [np.zeros(shape, bool), np.ones(shape, bool)]
    for _ in range(40):
        body = np.zeros(shape, bool)
        for _ in range(rng.integers(1, 4)):
            top, left = rng.integers(-3, height), rng.integers(-3, width)
            size = rng.integers(1, max(2, min(shape)))
            body[max(0, top) : max(0, top + size), max(0, left) : max(0, left + rng.integers(1, size + 2))] = True
        body ^= rng.random(shape) < 0.02  # specks and holes
        found.append(body)
    return found


@pytest.mark.parametrize("shape", [(48, 40), (7, 3), (5, 1), (1, 9), (64, 64)])
@pytest.mark.parametrize(("dtype", "slope"), [(np.int16, 1.0), (np.int16, -1.0), (np.uint8, 8.0)])
def test_box_integrals_are_the_whole_slices(shape, dtype, slope):
    rng = np.random.default_rng(sum(shape) + int(slope))
    tests = bodies(rng, shape)
    inter = -1100.0 if dtype == np.uint8 else 0.0
    slices = []
    for body in tests:  # stored values whose HU fall on either side of -700, with noise
        hu = np.where(body, rng.normal(100, 400, shape), rng.normal(-900, 120, shape))
        stored = np.round((hu - inter) / slope)
        info = np.iinfo(dtype)
        slices.append(np.clip(stored, info.min, info.max).astype(dtype))
    data = np.asfortranarray(np.stack([s.T for s in slices], axis=2))  # file order (x, y, z), x fastest
    volume = Volume(data, np.eye(4), slope, inter)
    rule = drr._IntegerRule(volume)
    assert (rule.threshold is None) == (slope < 0)  # both ways of testing the body are exercised
    for k in range(data.shape[2]):
        out = np.zeros(data.shape[0], np.float32)
        rule.add_slice(data[:, :, k].T, out)
        want = whole_slice(volume.float32(data[:, :, k].T))
        assert out.tobytes() == want.tobytes(), k
