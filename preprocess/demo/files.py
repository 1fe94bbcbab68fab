"""What the fake writers (the dataset folders' fakes.py) use: an item's hashed name, an image encoded as its
upstream holds it, a file or an npz written with its folders."""

from __future__ import annotations

import hashlib
import io
from pathlib import Path

import numpy as np
from PIL import Image


def item_id(*parts) -> str:
    """A stable file name of hex digits for an item, as the upstreams' hashed names look."""
    return hashlib.md5("/".join(map(str, parts)).encode()).hexdigest()


def encoded(array: np.ndarray, fmt: str) -> bytes:
    """The image as the upstream's format holds it (JPEG at quality 95, else PNG)."""
    buffer = io.BytesIO()
    if fmt == "JPEG":
        Image.fromarray(array).save(buffer, format="JPEG", quality=95)
    else:
        Image.fromarray(array).save(buffer, format="PNG")
    return buffer.getvalue()


def put(path: Path, data: bytes | str) -> None:
    """Write a fake's file, its folders made."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        path.write_text(data, encoding="utf-8")
    else:
        path.write_bytes(data)


def npz(path: Path, arrays: dict) -> None:
    """Write the arrays as a deflated npz (np.savez_compressed), its folders made."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as handle:
        np.savez_compressed(handle, **arrays)
