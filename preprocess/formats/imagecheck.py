"""Is this file a readable image? A quick check of signature and end marker, or a full decode."""

from __future__ import annotations

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


def image_problem(path: Path, decode: str = "quick") -> str | None:
    """None when the image is readable, else a short reason ('truncated PNG: no IEND chunk', ...)."""
    size = path.stat().st_size
    if size == 0:
        return "zero-byte file"
    with open(path, "rb") as handle:
        head = handle.read(16)
        handle.seek(max(0, size - _TAIL))
        tail = handle.read()
    if head.startswith(PNG_SIGNATURE):
        if not tail.endswith(PNG_IEND):
            return "truncated PNG: no IEND chunk at the end"
    elif head.startswith(JPEG_SOI):
        if JPEG_EOI not in tail:
            return "truncated JPEG: no end-of-image marker"
    elif decode == "quick":
        return _pil_problem(path, full=False)
    return _pil_problem(path, full=True) if decode == "full" else None


def _pil_problem(path: Path, full: bool) -> str | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)  # Pillow only warns up to twice the limit
            with Image.open(path) as image:
                if full:
                    image.load()
                else:
                    image.verify()
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        return f"refused: more pixels than the decoder's limit, a possible decompression bomb ({exc})"
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError, EOFError) as exc:
        return f"not a readable image ({type(exc).__name__}: {exc})"
    return None
