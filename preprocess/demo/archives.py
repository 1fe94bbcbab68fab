"""What the fakes of the parquet and zip downloads share (the dataset folders' fakes.py): the image struct, a
parquet written in row groups, a one-bit mask PNG, question tables, zip members with their modes."""

from __future__ import annotations

import io
import stat
import zipfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from PIL import Image

from preprocess.demo.images import encode, pattern

IMAGE = pa.struct([("bytes", pa.binary()), ("path", pa.string())])


def _write(path: Path, table: pa.Table, rows_per_group: int = 2) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path, row_group_size=rows_per_group)


def _mask_png(mask: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(mask.astype(bool)).convert("1").save(buffer, format="PNG")
    return buffer.getvalue()


def _qa_table(images: list[bytes | None], extra: dict) -> pa.Table:
    column = pa.array([None if b is None else {"bytes": b, "path": None} for b in images], IMAGE)
    return pa.table({"image": column, **extra})


def _qa_rows(base: Path, name: str, images: list[bytes], rows: list[tuple[int | None, str, str]]) -> None:
    """A parquet of (image, question, answer) rows; a row's image is images[k] (None: a row without image)."""
    table = _qa_table(
        [None if k is None else images[k] for k, _, _ in rows],
        {"question": [q for _, q, _ in rows], "answer": [a for _, _, a in rows]},
    )
    _write(base / "data" / name, table)


def _vqa_images(seed: int, jpeg: list[int], count: int, channels: int) -> list[bytes]:
    return [encode(pattern(seed + k, (32, 32), channels), "JPEG" if k in jpeg else "PNG") for k in range(count)]


def _vqa(base: Path, table: dict, suffix: str, channels: int) -> None:
    for split, (seed, jpeg, rows) in table.items():
        images = _vqa_images(seed, jpeg, 1 + max(k for k, _, _ in rows if k is not None), channels)
        _qa_rows(base, f"{split}{suffix}", images, rows)

    # Test rows are images 7, 8 and 9 of the one counter over the five files.


def _zip_add(archive: zipfile.ZipFile, name: str, data: bytes, link: bool = False) -> None:
    info = zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0))
    info.external_attr = ((stat.S_IFLNK | 0o777) if link else (stat.S_IFREG | 0o644)) << 16
    archive.writestr(info, data)
