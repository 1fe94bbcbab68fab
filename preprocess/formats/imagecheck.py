"""Is this file a readable image? A quick check of signature and end marker, or a full decode."""

from __future__ import annotations

import contextlib
import struct
import warnings
from pathlib import Path

from PIL import Image, UnidentifiedImageError

# Pillow refuses to decode images above this many pixels (a decompression bomb). Set here on purpose: a
# whole-slide-sized 32768 x 32768 image still decodes; anything larger is reported, never decoded.
Image.MAX_IMAGE_PIXELS = 1 << 30

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
PNG_IEND = b"\x00\x00\x00\x00IEND\xaeB`\x82"
JPEG_SOI = b"\xff\xd8\xff"
JPEG_EOI = b"\xff\xd9"
_TAIL = 1024
BOMB = "more pixels than the decoder's limit, a possible decompression bomb: not decoded"


@contextlib.contextmanager
def pixel_limit_errors():
    """Pillow's warning for an image between its pixel limit and twice that, raised as the error above it is:
    an image that large is refused, never decoded."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        yield


def image_problem(path: Path, decode: str = "quick") -> str | None:
    """None when the image is readable, else a short reason ('truncated PNG: no IEND chunk', ...)."""
    size = path.stat().st_size
    if size == 0:
        return "zero-byte file"
    with open(path, "rb") as handle:
        head = handle.read(24)
        handle.seek(max(0, size - _TAIL))
        tail = handle.read()
    if head.startswith(PNG_SIGNATURE):
        if not tail.endswith(PNG_IEND):
            return "truncated PNG: no IEND chunk at the end"
        declared = _png_pixels(head)
        if declared is not None and declared[0] * declared[1] > Image.MAX_IMAGE_PIXELS:
            return f"refused: its header declares {declared[0]}x{declared[1]} pixels, {BOMB}"
    elif head.startswith(JPEG_SOI):
        if JPEG_EOI not in tail:
            return "truncated JPEG: no end-of-image marker"
    elif decode == "quick":
        return _pil_problem(path, full=False)
    return _pil_problem(path, full=True) if decode == "full" else None


def _png_pixels(head: bytes) -> tuple[int, int] | None:
    """The width and height a PNG's first chunk declares (IHDR, right after the signature), if it is there."""
    if len(head) < 24 or head[12:16] != b"IHDR":
        return None
    return struct.unpack(">II", head[16:24])


def _pil_problem(path: Path, full: bool) -> str | None:
    try:
        with pixel_limit_errors(), Image.open(path) as image:
            if full:
                image.load()
            else:
                image.verify()
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        return f"refused: more pixels than the decoder's limit, a possible decompression bomb ({exc})"
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError, EOFError) as exc:
        return f"not a readable image ({type(exc).__name__}: {exc})"
    return None
