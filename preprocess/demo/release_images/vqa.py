"""VQA tables whose image names only the release gives (MedPix, PathVQA, VQA-RAD).

A release path is the image of the rows its records are about: each record naming the path as its query
image carries a question and an answer, and the rows of the side's parquet files with that question and
answer hold some images (told apart by their bytes). The path's image is the one every such record allows;
no image or several is a flaw of the demo, named. The bytes are the parquet's own.
"""

from __future__ import annotations

import re
from collections import defaultdict

import pyarrow.parquet as pq

from preprocess.demo.release_images.outputs import Outputs
from preprocess.demo.release_images.records import TEST, TRAIN
from preprocess.errors import PreprocessError

MEDPIX = "data/train-*-of-00007-*.parquet"
# subset folder under 2D_Images/ -> (source, image column, parquet globs per side)
TABLES = {
    "MedPIX": ("medpix_clinqa", "image_id", {TEST: MEDPIX, TRAIN: MEDPIX}),  # its one split holds both sides
    "PathVQA": ("pathvqa", "image", {TEST: "data/test-*.parquet", TRAIN: "data/train-*.parquet"}),
    "VQA-RAD": ("vqa_rad", "image", {TEST: "data/test-*.parquet", TRAIN: "data/train-*.parquet"}),
}  # fmt: skip


def _plain(text) -> str:
    """A question or answer as both sides agree on it: no image tag, one case, single spaces."""
    text = re.sub(r"<image>|<\|image_\d+\|>", " ", str(text or ""))
    return " ".join(text.lower().split())


def _rows(raw, folder: str, side: str) -> dict[tuple[str, str], set[bytes]]:
    source, column, pattern = TABLES[folder][0], TABLES[folder][1], TABLES[folder][2][side]
    images = defaultdict(set)
    for path in sorted(raw(source).glob(pattern)):
        table = pq.read_table(path, columns=[column, "question", "answer"])
        for cell, question, answer in zip(
            *(table.column(c).to_pylist() for c in (column, "question", "answer")), strict=True
        ):
            if cell is not None and cell.get("bytes") is not None:
                images[(_plain(question), _plain(answer))].add(bytes(cell["bytes"]))
    return images


def _table(raw, named, folder: str) -> Outputs:
    prefix = f"2D_Images/{folder}/"
    asked = defaultdict(list)  # (path, side) -> the (question, answer) of each record asking about it
    for one in named:
        if one.path.startswith(prefix) and one.question is not None:
            asked[(one.path, one.side)].append((_plain(one.question), _plain(one.answer)))
    rows = {side: _rows(raw, folder, side) for side in {side for _, side in asked}}
    made = {}
    for (path, side), pairs in sorted(asked.items()):
        fits = set.intersection(*(rows[side].get(pair, set()) for pair in pairs))
        if len(fits) != 1:
            raise PreprocessError(f"the demo's {folder} records of {path} fit {len(fits)} images of its parquet rows")
        image = fits.pop()
        made[path] = lambda data=image: data
    return made


def medpix(raw, named) -> Outputs:
    return _table(raw, named, "MedPIX")


def pathvqa(raw, named) -> Outputs:
    return _table(raw, named, "PathVQA")


def vqa_rad(raw, named) -> Outputs:
    return _table(raw, named, "VQA-RAD")
