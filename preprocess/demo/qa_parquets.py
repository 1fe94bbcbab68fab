"""The question tables of the Hugging Face VQA downloads (PathVQA, VQA-RAD, MedPix ClinQA, ROCO-QA, RadImageNet-VQA),
for the demo and at real size: a parquet whose image column holds {bytes, path} structs beside the question and
answer columns, written in row groups. Each dataset's fakes.py gives what is its own: the columns, their order, the
file names and the quirks (MedPix's image column named image_id)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from preprocess.demo import archives, fields
from preprocess.demo.files import encoded
from preprocess.demo.images import encode, pattern

# The task JSONs' instruction, as the release's records of these subsets have it.
INSTRUCTION = "<|image_1|> Answer the question about the image."


def write(path: Path, columns: dict, image: str = "image", rows_per_group: int = 2) -> None:
    """Write a question table: `columns` in the upstream's order, the one named `image` a list of encoded images
    (None: a row without image), stored as the Hugging Face image struct."""
    structs = [None if b is None else {"bytes": b, "path": None} for b in columns[image]]
    table = pa.table({name: pa.array(structs, archives.IMAGE) if name == image else values
                      for name, values in columns.items()})  # fmt: skip
    archives.write_parquet(path, table, rows_per_group)


def demo_images(seed: int, count: int, channels: int, jpeg=()) -> list[bytes]:
    """The demo's tiny images: image k is pattern(seed + k), PNG unless k is in `jpeg`."""
    return [encode(pattern(seed + k, (32, 32), channels), "JPEG" if k in jpeg else "PNG") for k in range(count)]


def real_images(items, seed: int, shape, channels: int, fmt: str) -> list[bytes]:
    """Real-size images: item k is the field photo(seed + k) at the upstream's shape, channels and format."""
    return [encoded(fields.photo(shape, seed + k, channels), fmt) for k in items]


def demo_splits(base: Path, tables: dict, suffix: str, channels: int) -> None:
    """The demo's split files data/<split><suffix>; `tables` maps a split to (seed, the images stored as JPEG,
    its (image, question, answer) rows), image None for a row without image."""
    for split, (seed, jpeg, rows) in tables.items():
        images = demo_images(seed, 1 + max(k for k, _, _ in rows if k is not None), channels, jpeg)
        write(
            base / "data" / f"{split}{suffix}",
            {
                "image": [None if k is None else images[k] for k, _, _ in rows],
                "question": [q for _, q, _ in rows],
                "answer": [a for _, _, a in rows],
            },
        )


def question(k: int) -> str:
    return f"What is shown in image {k}?"


def answer(k: int) -> str:
    return f"finding {k}"


def real_splits(base: Path, suffix: str, n: int, seed: int, shape, channels: int) -> None:
    """data/test<suffix> with n real-size JPEG items, one question each, and data/train<suffix> with two more
    (their fields seeded from seed + 500)."""
    for split, count, first in (("test", n, seed), ("train", 2, seed + 500)):
        write(
            base / "data" / f"{split}{suffix}",
            {
                "image": real_images(range(count), first, shape, channels, "JPEG"),
                "question": [question(k) for k in range(count)],
                "answer": [answer(k) for k in range(count)],
            },
            rows_per_group=archives.ROW_GROUP,
        )


def record(text: str, image_path: str, targets: list[str]) -> dict:
    """A task JSON record naming a real-size item."""
    return {"qry_inst": INSTRUCTION, "qry_text": text, "qry_img_path": image_path, "tgt_text": targets}


def records(n: int, ext: str) -> list[dict]:
    """The task JSON of n real-size items, item k asked question(k), answered answer(k)."""
    return [record(question(k), f"real/{k:05d}.{ext}", [answer(k), "none of these"]) for k in range(n)]
