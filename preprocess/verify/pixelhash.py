"""The digest of an image's decoded pixels (runs in attest's worker processes): only pixels count, not the
encoder, its compression level, metadata chunks or ICC profiles."""

from __future__ import annotations

import hashlib
import sys
import warnings

import numpy as np

from preprocess.formats.imagecheck import (
    Image,  # Pillow, with the package's pixel limit set (a decompression bomb is refused)
)

# --- decoding (runs in the worker processes) -------------------------------------------------------------

# Modes whose raw bytes (Image.tobytes) are the NumPy array's bytes: (dtype, bands). Other modes go through
# NumPy (a bilevel "1" image is packed in its raw bytes, a float one is in the machine's byte order).
_RAW_MODES = {"L": ("uint8", 1), "LA": ("uint8", 2), "RGB": ("uint8", 3), "RGBA": ("uint8", 4), "I;16": ("uint16", 1)}


def decoder_versions() -> str:
    import numpy
    import PIL

    return f"Pillow {PIL.__version__}, numpy {numpy.__version__}"


def pixel_fingerprint(path: str) -> tuple[str, str, str, str]:
    """(mode, dtype, shape, sha256) of the decoded image; raises OSError or ValueError when it does not decode."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        with Image.open(path) as image:
            image.load()
            mode = image.mode
            if mode in ("P", "PA"):  # the indices mean nothing without the palette: hash the colours shown
                image = image.convert("RGBA" if mode == "PA" or "transparency" in image.info else "RGB")
            if image.mode in _RAW_MODES:
                dtype, bands = _RAW_MODES[image.mode]
                shape = (image.height, image.width) + ((bands,) if bands > 1 else ())
                data = image.tobytes()
            else:
                pixels = np.ascontiguousarray(np.asarray(image))
                if pixels.dtype.byteorder == ">" or (pixels.dtype.byteorder == "=" and sys.byteorder == "big"):
                    pixels = pixels.astype(pixels.dtype.newbyteorder("<"))
                dtype, shape, data = pixels.dtype.name, pixels.shape, memoryview(pixels).cast("B")
    shape_text = "x".join(str(n) for n in shape)
    digest = hashlib.sha256(f"{mode} {dtype} {shape_text}\n".encode("ascii"))
    digest.update(data)
    return mode, dtype, shape_text, digest.hexdigest()
