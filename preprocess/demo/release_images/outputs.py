"""What an oracle returns and how the release's copy of it is written.

An oracle maps each name it can make (relative to DATA_BASEDIR) to a function giving the file: bytes (a file
the release ships as the upstream's own bytes) or a Pillow image (a file the benchmark's scripts wrote with
Pillow). Images are saved here with Pillow's own PNG encoder at compression level 9, never with the
pipeline's writer (preprocess/formats/pngio.py: a Sub filter and libdeflate level 1): the same pixels in
other bytes, as the real release's PNGs are to a rebuild.
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable
from pathlib import Path

import numpy as np
from PIL import Image

from preprocess.errors import PreprocessError

Made = bytes | Image.Image
Outputs = dict[str, Callable[[], Made]]
PNG_LEVEL = 9  # the pipeline's writer deflates at level 1 with its own filter: the bytes differ


def raw_file(path: Path) -> Callable[[], bytes]:
    """The upstream file's bytes, read when the release needs it."""
    return lambda: Path(path).read_bytes()


def gray_or_rgb(array: np.ndarray) -> Image.Image:
    """An (H, W) or (H, W, 3) uint8 array as the scripts hand it to Pillow: mode L or RGB."""
    if array.dtype != np.uint8:
        raise PreprocessError(f"an oracle made a {array.dtype} image; the release's PNGs are 8-bit")
    return Image.fromarray(np.ascontiguousarray(array))


def png_bytes(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", compress_level=PNG_LEVEL)
    return buffer.getvalue()


def write(data_basedir: Path, name: str, made: Made) -> None:
    """Write one release file at `name` under DATA_BASEDIR; a name that is not a plain relative path, or a
    file already there (two oracles making one name), stops the demo."""
    if os.path.isabs(name) or os.path.normpath(name) != name or name.split("/")[0] == "..":
        raise PreprocessError(f"an oracle of the demo's release made the name {name!r}, which is not a plain path")
    target = Path(data_basedir) / name
    target.parent.mkdir(parents=True, exist_ok=True)
    data = made if isinstance(made, bytes) else png_bytes(made)
    try:
        with open(target, "xb") as handle:
            handle.write(data)
    except FileExistsError:
        raise PreprocessError(f"two oracles of the demo's release both make {name}") from None
