"""What the fakes of the parquet and zip downloads share (the dataset folders' fakes.py): the image struct, a
parquet written in row groups, a one-bit mask PNG, zip members with their modes. The question tables of the VQA
downloads are qa_parquets.py's."""

from __future__ import annotations

import io
import stat
import zipfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from PIL import Image

IMAGE = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
ROW_GROUP = 100  # rows per row group at real size, as the Hugging Face uploads of image datasets have them


def write_parquet(path: Path, table: pa.Table, rows_per_group: int = 2) -> None:
    """A parquet file of `table` in row groups of `rows_per_group` rows (tiny ones, so a reader meets several)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path, row_group_size=rows_per_group)


def mask_png(mask: np.ndarray) -> bytes:
    """A 1-bit PNG of a boolean mask."""
    buffer = io.BytesIO()
    Image.fromarray(mask.astype(bool)).convert("1").save(buffer, format="PNG")
    return buffer.getvalue()


def zip_add(archive: zipfile.ZipFile, name: str, data: bytes, link: bool = False) -> None:
    """Add `data` as member `name` with a fixed date (same bytes each run); `link` marks it a symbolic link."""
    info = zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0))
    info.external_attr = ((stat.S_IFLNK | 0o777) if link else (stat.S_IFREG | 0o644)) << 16
    archive.writestr(info, data)
