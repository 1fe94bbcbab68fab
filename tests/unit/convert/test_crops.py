"""Box rules shared by the crop kinds, on literal arrays (the crops themselves: tests/datasets/test_mask_crops.py and
tests/datasets/test_annotation_crops.py)."""

from __future__ import annotations

import numpy as np

from preprocess.convert import boxes


def test_noisy_jpeg_mask_is_thresholded():
    mask = np.array([[3, 8, 0], [250, 247, 5]], np.uint8)  # Kvasir-SEG masks are JPEG: 0-8 and 247-255
    assert boxes.mask_box(mask, threshold=127) == (0, 1, 2, 2)


def test_reference_crop_rule():
    # a 10x4 box grows to 28x28 around its integer midpoint (15, 12)
    assert boxes.reference_crop(10.7, 10.2, 20.9, 14.8, 100, 100) == (1, 0, 29, 28)  # rows shifted from -2
    # large boxes keep their size; coordinates are truncated
    assert boxes.reference_crop(10.9, 5.5, 60.2, 50.1, 100, 100) == (10, 5, 60, 50)
    # near the right/bottom edge the crop is shifted back inside
    assert boxes.reference_crop(95, 95, 99, 99, 100, 100) == (72, 72, 100, 100)
    # negative coordinates are floored at 0; an image smaller than 28 px gives the whole image
    assert boxes.reference_crop(-5, -5, 3, 3, 20, 20) == (0, 0, 20, 20)
