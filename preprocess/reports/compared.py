"""The report's page of the files in place whose pixels differ from this build's: for each, the file in place
(the release's), ours (kept under the results folder, layout.OURS) and their difference, side by side.

The difference image holds, per pixel, the largest absolute difference over the channels, stretched so that
the largest one shows white: a single changed pixel stands out. Images are embedded (data URIs), so the page
is whole inside Snakemake's report as well as on its own."""

from __future__ import annotations

import base64
import html
from pathlib import Path

import numpy as np

from preprocess.convert.compare import SAME, read_in_place
from preprocess.formats.pngio import encode_png

LIMIT = 50  # files shown; compared.tsv lists every one
STYLE = (
    "body{font-family:sans-serif;font-size:13px;margin:12px}table{border-collapse:collapse}"
    "td,th{border:1px solid #ccc;padding:4px;vertical-align:top;text-align:left}"
    "img{width:192px;image-rendering:pixelated;background:#eee}code{word-break:break-all}"
)


def page(kept: list[dict], data_basedir: Path, ours_folder: Path) -> str:
    """The whole page for the kept files (subset, path, verdict) of a build."""
    differ = [entry for entry in kept if entry["verdict"] != SAME]
    if not differ:
        note = f"{len(kept)} files in place hold the same pixels as this build's; none differs."
        rows = ""
    else:
        more = f" (the first {LIMIT} shown; results/validation/compared.tsv lists all)" if len(differ) > LIMIT else ""
        note = f"{len(differ)} of {len(kept)} files in place differ from this build's{more}."
        rows = "".join(_row(entry, data_basedir, ours_folder) for entry in differ[:LIMIT])
    head = "<tr><th>subset, path, how they differ</th><th>in place (the release's)</th><th>ours</th>"
    head += "<th>difference</th></tr>"
    return (
        "<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>Files that differ from the release</title>"
        f"<style>{STYLE}</style></head><body><h3>Files that differ from the release</h3><p>{html.escape(note)}</p>"
        f"<table>{head}{rows}</table></body></html>\n"
    )


def _row(entry: dict, data_basedir: Path, ours_folder: Path) -> str:
    theirs, ours = _pixels(data_basedir / entry["path"]), _pixels(ours_folder / entry["path"])
    cells = [_image(theirs), _image(ours), _image(_difference(theirs, ours))]
    text = f"{entry['subset']}<br><code>{html.escape(entry['path'])}</code><br>{html.escape(entry['verdict'])}"
    return f"<tr><td>{text}</td>" + "".join(f"<td>{cell}</td>" for cell in cells) + "</tr>"


def _pixels(path: Path) -> np.ndarray | None:
    """The decoded image, as the comparison decoded it (a link, a FIFO or a bomb in place: none to show)."""
    pixels = read_in_place(path)
    return pixels if isinstance(pixels, np.ndarray) else None


def _difference(theirs: np.ndarray | None, ours: np.ndarray | None) -> np.ndarray | None:
    if theirs is None or ours is None:
        return None
    if theirs.ndim == 3 and ours.ndim == 2:
        theirs = theirs[..., 0]  # a grey image stored as RGB (compare.py compared it as grey)
    if theirs.shape != ours.shape:
        return None
    gap = np.abs(theirs.astype(np.int64) - ours.astype(np.int64))
    gap = gap.max(axis=-1) if gap.ndim == 3 else gap
    top = int(gap.max())
    return np.rint(gap * (255 / top)).astype(np.uint8) if top else gap.astype(np.uint8)


def _image(pixels: np.ndarray | None) -> str:
    if pixels is None:
        return "(no image to show)"
    if pixels.dtype == np.uint16:
        pixels = (pixels >> 8).astype(np.uint8)  # shown at 8 bits; the verdict gives the values
    if pixels.dtype != np.uint8:
        return "(no image to show)"
    data = base64.b64encode(encode_png(np.ascontiguousarray(pixels))).decode("ascii")
    return f'<img alt="" src="data:image/png;base64,{data}">'
