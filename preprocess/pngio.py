"""A small PNG encoder: numpy row filter + one libdeflate call.

Pillow's encoder runs the system zlib with per-row filter heuristics: about 170 gray 224x224 images/s on this
hardware. This writer applies the 'Sub' filter to all rows in one numpy operation and compresses the whole
image with libdeflate at level 1, which is several times faster (see benchmarks/). Output is a standard PNG
(8-bit gray or RGB, 16-bit gray); decoders return exactly the input array.

Not ISA-L, although it deflates 1.5-2.8x faster: its level-1 deflate has per-CPU assembly variants, and in one
CI run a job process wrote different deflate streams (same pixels, 425 instead of 418 bytes) for every slice
it encoded. libdeflate's compressor is portable C, so the same pixels give the same bytes in every process.
"""

from __future__ import annotations

import functools
import struct

import deflate
import numpy as np
from isal import isal_zlib

_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_COLOR_TYPES = {1: 0, 3: 2}  # channels -> PNG colour type (gray, RGB)
_FILTER_SUB = 1


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", isal_zlib.crc32(data, isal_zlib.crc32(kind)))


_IEND = _chunk(b"IEND", b"")


@functools.lru_cache(maxsize=64)
def _header(width: int, height: int, bit_depth: int, color_type: int) -> bytes:
    return _SIGNATURE + _chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, bit_depth, color_type, 0, 0, 0))


def encode_png(array: np.ndarray, level: int = 1) -> bytes:
    """PNG bytes of a (H, W) or (H, W, 3) uint8/uint16 array."""
    if array.dtype not in (np.uint8, np.uint16):
        raise ValueError(f"encode_png takes uint8 or uint16 arrays, got {array.dtype}")
    if array.ndim == 2:
        channels = 1
    elif array.ndim == 3 and array.shape[2] == 3:
        channels = 3
    else:
        raise ValueError(f"encode_png takes (H, W) or (H, W, 3) arrays, got shape {array.shape}")
    if channels == 3 and array.dtype == np.uint16:
        raise ValueError("16-bit RGB PNG is not supported (few decoders read it back faithfully)")
    height, width = array.shape[:2]
    if height == 0 or width == 0:
        raise ValueError(f"cannot encode an empty image of shape {array.shape}")
    big_endian = array.astype(">u2", copy=False) if array.dtype == np.uint16 else array
    rows = np.ascontiguousarray(big_endian).view(np.uint8).reshape(height, -1)
    bytes_per_pixel = channels * array.dtype.itemsize
    filtered = np.empty((height, rows.shape[1] + 1), dtype=np.uint8)
    filtered[:, 0] = _FILTER_SUB
    filtered[:, 1 : 1 + bytes_per_pixel] = rows[:, :bytes_per_pixel]
    np.subtract(rows[:, bytes_per_pixel:], rows[:, :-bytes_per_pixel], out=filtered[:, 1 + bytes_per_pixel :])
    compressed = deflate.zlib_compress(filtered, level)
    header = _header(width, height, 8 * array.dtype.itemsize, _COLOR_TYPES[channels])
    return header + _chunk(b"IDAT", compressed) + _IEND
