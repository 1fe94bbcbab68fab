"""Stream image structs ({bytes, path}) out of parquet files, one record batch at a time.

Never loads a whole file: pyarrow reads row groups in batches of `batch_rows`, only the columns asked for.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from preprocess.errors import RawDataError


@dataclass(frozen=True)
class ImageRow:
    file: Path
    row: int  # position of the row in its file
    data: bytes | None  # encoded image bytes, None when the row has no image
    stored_path: str | None
    fields: dict


def iter_images(
    path: Path, image_column: str, fields=(), batch_rows: int = 16, rows: set[int] | None = None
) -> Iterator[ImageRow]:
    """Every row of the file, or with `rows` only those (and only the row groups holding them are read: a
    sample of a 30 GB table costs its row groups, not the table)."""
    try:
        parquet = pq.ParquetFile(path, pre_buffer=False)  # pre-buffering reads whole column chunks at once
    except (pa.ArrowException, OSError) as exc:
        raise RawDataError(
            f"{path}: not a readable parquet file ({exc}); the download is truncated or corrupt, download it again"
        ) from None
    names = parquet.schema_arrow.names
    missing = [c for c in (image_column, *fields) if c not in names]
    if missing:
        raise RawDataError(f"{path}: no column {', '.join(missing)} (it has: {', '.join(names)})")
    groups, starts, first = [], [], 0
    for index in range(parquet.metadata.num_row_groups):
        count = parquet.metadata.row_group(index).num_rows
        if rows is None or any(first <= r < first + count for r in rows):
            groups.append(index)
            starts.append(first)
        first += count
    if not groups:
        return
    row, group, left = starts[0], 0, parquet.metadata.row_group(groups[0]).num_rows
    try:
        # One thread and no read-ahead: memory stays at one batch whatever the file size.
        batches = parquet.iter_batches(
            batch_size=batch_rows, row_groups=groups, columns=[image_column, *fields], use_threads=False
        )
        for batch in batches:
            images = batch.column(image_column)
            if pa.types.is_struct(images.type):
                data_column, path_column = (
                    images.field("bytes"),
                    images.field("path") if images.type.get_field_index("path") >= 0 else None,
                )
            elif pa.types.is_binary(images.type) or pa.types.is_large_binary(images.type):
                data_column, path_column = images, None
            else:
                raise RawDataError(f"{path}: column {image_column!r} holds {images.type}, not images")
            extra = {name: batch.column(name).to_pylist() for name in fields}
            for i in range(batch.num_rows):
                if left == 0:  # the next row group read: its first row's number
                    group += 1
                    row, left = starts[group], parquet.metadata.row_group(groups[group]).num_rows
                if rows is None or row in rows:
                    scalar = data_column[i]
                    data = scalar.as_py() if scalar.is_valid else None
                    stored = path_column[i].as_py() if path_column is not None and path_column[i].is_valid else None
                    yield ImageRow(path, row, data, stored, {name: values[i] for name, values in extra.items()})
                row += 1
                left -= 1
            del batch, images, data_column, path_column
            pa.default_memory_pool().release_unused()  # hand freed batch memory back to the system
    except (pa.ArrowException, OSError) as exc:
        raise RawDataError(
            f"{path}: unreadable after row {row} ({exc}); the file is corrupt, download it again"
        ) from None
