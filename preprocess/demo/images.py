"""Tiny deterministic images for the demo and the tests."""

from __future__ import annotations

import io

import numpy as np
from PIL import Image


def pattern(seed: int, size: tuple[int, int] = (32, 32), channels: int = 3) -> np.ndarray:
    """A smooth gradient plus a bright disc, different for every seed (so files differ)."""
    height, width = size
    rows, cols = np.mgrid[0:height, 0:width]
    base = (rows * 5 + cols * 3 + seed * 17) % 256
    disc = (rows - height / 2 - seed % 5) ** 2 + (cols - width / 2) ** 2 < (min(size) / 4) ** 2
    gray = np.where(disc, 255 - base // 4, base).astype(np.uint8)
    if channels == 1:
        return gray
    return np.stack([gray, np.roll(gray, seed % 7, axis=0), 255 - gray], axis=-1)


def encode(array: np.ndarray, fmt: str) -> bytes:
    buffer = io.BytesIO()
    image = Image.fromarray(array)
    if fmt == "JPEG":
        image.save(buffer, format="JPEG", quality=90)
    else:
        image.save(buffer, format=fmt)
    return buffer.getvalue()
