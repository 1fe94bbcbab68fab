"""Contact sheets: a grid of sampled outputs with their paths, to see at a glance that slices are upright,
DRRs look like radiographs and crops hold the lesion."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg")
CAPTION = 14


def sample(paths: list[str], count: int) -> list[str]:
    """`count` paths evenly spread over the sorted list (deterministic)."""
    ordered = sorted(p for p in paths if p.lower().endswith(IMAGE_SUFFIXES))
    if len(ordered) <= count:
        return ordered
    return [ordered[int(i)] for i in np.linspace(0, len(ordered) - 1, count)]


def grid_size(count: int, columns: int, tile: int) -> tuple[int, int]:
    rows = max(1, -(-count // columns))
    return columns * tile, rows * (tile + CAPTION)


def contact_sheet(data_basedir: Path, paths: list[str], columns: int = 4, tile: int = 128) -> bytes:
    """PNG bytes of a grid: each tile an image fitted into tile x tile, its path under it."""
    width, height = grid_size(len(paths), columns, tile)
    sheet = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(sheet)
    font = ImageFont.load_default()
    for index, relative in enumerate(paths):
        x, y = (index % columns) * tile, (index // columns) * (tile + CAPTION)
        with Image.open(data_basedir / relative) as image:
            thumb = image.convert("RGB")
            thumb.thumbnail((tile - 4, tile - 4))
        sheet.paste(thumb, (x + (tile - thumb.width) // 2, y + (tile - thumb.height) // 2))
        label = relative if len(relative) <= 22 else "..." + relative[-19:]
        draw.text((x + 2, y + tile), label, fill="black", font=font)
    buffer = io.BytesIO()
    sheet.save(buffer, format="PNG")
    return buffer.getvalue()
