"""Contact sheets: a grid of sampled outputs with their paths, to see at a glance that slices are upright,
DRRs look like radiographs and crops hold the lesion."""

from __future__ import annotations

import io
import os
import textwrap
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont, ImageOps

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg")
LINE = 12  # caption line height: the folder on one line, the file name on the next
CAPTION = 2 * LINE + 2
CHARS = 20  # characters of the default font that fit under a 128-pixel tile


def sample(paths: list[str], count: int) -> list[str]:
    """`count` paths evenly spread over the sorted list (deterministic)."""
    ordered = sorted(p for p in paths if p.lower().endswith(IMAGE_SUFFIXES))
    if len(ordered) <= count:
        return ordered
    return [ordered[int(i)] for i in np.linspace(0, len(ordered) - 1, count)]


def images_under_link(data_basedir: Path, link: str, limit: int = 64) -> list[str]:
    """Up to `limit` image paths (relative to DATA_BASEDIR, through the link) in the first folders, in
    sorted order, of what `link` points at: enough to sample from without listing a whole download."""
    found: list[str] = []
    start = data_basedir / link
    if start.is_file():
        return [link] if link.lower().endswith(IMAGE_SUFFIXES) else []

    def walk(folder: Path, relative: str) -> None:
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:  # a broken link: the validation reports it
            return
        for entry in entries:
            if len(found) >= limit:
                return
            path = f"{relative}/{entry.name}"
            if entry.is_dir():
                walk(Path(entry.path), path)
            elif entry.name.lower().endswith(IMAGE_SUFFIXES):
                found.append(path)

    walk(start, link)
    return found


def grid_size(count: int, columns: int, tile: int) -> tuple[int, int]:
    rows = max(1, -(-count // columns))
    return columns * tile, rows * (tile + CAPTION)


def caption(relative: str, chars: int = CHARS) -> tuple[str, str]:
    """Two lines: the image's folder (its last components), and its file name (shortened in the middle)."""
    folder, _, name = relative.rpartition("/")
    if len(folder) > chars:
        folder = "..." + folder[-(chars - 3) :]
    if len(name) > chars:
        keep = chars - 3
        name = name[: keep // 2] + "..." + name[-(keep - keep // 2) :]
    return folder + "/", name


def contact_sheet(
    data_basedir: Path, paths: list[str], columns: int = 4, tile: int = 128, empty_note: str = ""
) -> bytes:
    """PNG bytes of a grid: each tile an image fitted into tile x tile, its folder and name under it.
    Without paths, one tile that says why (`empty_note`)."""
    width, height = grid_size(len(paths), columns, tile)
    sheet = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(sheet)
    font = ImageFont.load_default()
    if not paths:
        for i, text in enumerate(textwrap.wrap(empty_note or "no images", width=columns * CHARS - 4)):
            draw.text((6, 6 + i * LINE), text, fill="black", font=font)
    for index, relative in enumerate(paths):
        x, y = (index % columns) * tile, (index // columns) * (tile + CAPTION)
        with Image.open(data_basedir / relative) as image:  # small images are enlarged: 28-pixel MedMNIST too
            thumb = ImageOps.contain(image.convert("RGB"), (tile - 4, tile - 4))
        sheet.paste(thumb, (x + (tile - thumb.width) // 2, y + (tile - thumb.height) // 2))
        for line, text in enumerate(caption(relative)):
            draw.text((x + 2, y + tile + line * LINE), text, fill="black", font=font)
    buffer = io.BytesIO()
    sheet.save(buffer, format="PNG")
    return buffer.getvalue()
