"""Pixel content of the real-size fakes: smooth anatomy-like fields plus noise, deterministic from a seed.

Constant or purely geometric pictures compress far better than real scans, so sizes and times measured on them
would be too low: each field here has low-frequency structure (a body outline, soft texture) and noise of about
the amplitude a detector or a CT reconstruction leaves, so PNG, JPEG, JPEG 2000 and gzip see realistic ratios.
"""

from __future__ import annotations

import numpy as np
from scipy import ndimage


def smooth(shape: tuple[int, int], seed: int, cells: int = 8) -> np.ndarray:
    """float32 in about [-1, 1], varying over about `cells` bumps per side (a cubic upsample of a coarse grid)."""
    coarse = np.random.default_rng(seed).standard_normal((cells + 3, cells + 3)).astype(np.float32)
    zoom = ((shape[0] + 2) / cells, (shape[1] + 2) / cells)
    field = ndimage.zoom(coarse, zoom, order=3, prefilter=False)
    return field[1 : shape[0] + 1, 1 : shape[1] + 1] / 1.5


def _ellipse(shape: tuple[int, int], axes: tuple[float, float], centre=(0.0, 0.0)) -> np.ndarray:
    rows = np.linspace(-1, 1, shape[0], dtype=np.float32)[:, None]
    cols = np.linspace(-1, 1, shape[1], dtype=np.float32)[None, :]
    return ((rows - centre[0]) / axes[0]) ** 2 + ((cols - centre[1]) / axes[1]) ** 2 < 1


def xray(shape: tuple[int, int], seed: int, bits: int = 12) -> np.ndarray:
    """uint16 radiograph of `bits` stored bits: dark air around a bright body with texture and quantum noise."""
    top = (1 << bits) - 1
    rng = np.random.default_rng(seed)
    body = _ellipse(shape, (0.9, 0.75))
    values = np.where(body, 0.55, 0.08) * top + smooth(shape, seed) * 0.12 * top
    values += rng.normal(0, 0.01 * top, shape).astype(np.float32)
    return np.clip(values, 0, top).astype(np.uint16)


def photo(shape: tuple[int, int], seed: int, channels: int = 3) -> np.ndarray:
    """uint8 photograph (fundus, dermoscopy, endoscopy, microscopy): a lit disc, coloured texture, sensor noise."""
    rng = np.random.default_rng(seed)
    lit = np.where(_ellipse(shape, (0.95, 0.95)), 1.0, 0.15).astype(np.float32)
    coarse, fine = smooth(shape, seed), smooth(shape, seed + 1, cells=40)
    planes = []
    for channel in range(channels):  # the channels share the anatomy, in other proportions
        texture = (0.6 - 0.15 * channel) * coarse + (0.2 + 0.05 * channel) * fine
        planes.append(lit * (150 - 30 * channel + 60 * texture) + rng.normal(0, 1.5, shape).astype(np.float32))
    image = np.clip(np.stack(planes, axis=-1), 0, 255).astype(np.uint8)
    return image[..., 0] if channels == 1 else image


def ct_slices(shape: tuple[int, int, int], seed: int) -> np.ndarray:
    """int16 HU volume (x, y, z): air -1000, a body ellipse of soft tissue with lungs and a spine of bone, the
    body shrinking towards both ends, soft-tissue texture and reconstruction noise of a few HU."""
    rng = np.random.default_rng(seed)
    nx, ny, nz = shape
    volume = np.empty(shape, np.int16)
    texture = smooth((nx, ny), seed, cells=24) * 30
    for k in range(nz):
        z = 2 * k / max(nz - 1, 1) - 1
        scale = np.sqrt(max(1 - 0.3 * z * z, 0.2))
        hu = np.full((nx, ny), -1000, np.float32)
        body = _ellipse((nx, ny), (0.85 * scale, 0.65 * scale))
        hu[body] = 40 + texture[body]
        hu[body & _ellipse((nx, ny), (0.35 * scale, 0.25 * scale), (-0.4 * scale, 0))] = -830
        hu[body & _ellipse((nx, ny), (0.35 * scale, 0.25 * scale), (0.4 * scale, 0))] = -790
        hu[_ellipse((nx, ny), (0.1, 0.1), (0, 0.45 * scale))] = 700
        hu += rng.normal(0, 10, (nx, ny)).astype(np.float32)
        volume[:, :, k] = np.clip(hu, -1024, 3071)
    return volume


def mr_slices(shape: tuple[int, int, int], seed: int, peak: float = 1000.0) -> np.ndarray:
    """float32 MR intensities (x, y, z): background 0, a head- or abdomen-shaped ellipsoid of smooth
    tissue contrast with Rician-like noise; the caller casts to the upstream dtype."""
    rng = np.random.default_rng(seed)
    nx, ny, nz = shape
    volume = np.zeros(shape, np.float32)
    texture = 0.5 + 0.3 * smooth((nx, ny), seed, cells=16)
    for k in range(nz):
        z = 2 * k / max(nz - 1, 1) - 1
        scale = np.sqrt(max(1 - z * z, 0.0))
        if scale < 0.15:  # above and below the anatomy: empty slices, as skull-stripped MR has
            continue
        inside = _ellipse((nx, ny), (0.8 * scale, 0.7 * scale))
        plane = np.where(inside, peak * texture, 0) + np.abs(rng.normal(0, 0.02 * peak, (nx, ny)))
        volume[:, :, k] = plane * (inside | (rng.random((nx, ny)) < 0.02))
    return volume


def box(k: int, height: int, width: int, part: int = 0) -> tuple[float, float, float, float]:
    """A box of about a tenth of the image, somewhere different for every item and part: x0, y0, x1, y1."""
    rng = np.random.default_rng([k, part])
    w, h = width * rng.uniform(0.05, 0.2), height * rng.uniform(0.05, 0.2)
    x0, y0 = rng.uniform(0, width - w), rng.uniform(0, height - h)
    return round(x0, 1), round(y0, 1), round(x0 + w, 1), round(y0 + h, 1)
