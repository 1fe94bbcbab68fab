"""Real-size fakes of the parquet and zip downloads (PanNuke, ROCO-QA, the VQA sets, PMC-VQA, OmniMedVQA);
demo/real.py writes them."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from preprocess.demo import archives, fields
from preprocess.demo.archives import IMAGE
from preprocess.demo.files import encoded

# --- parquet and zip ------------------------------------------------------------------------------------------

ROW_GROUP = 100  # rows per row group, as the Hugging Face uploads of image datasets have them


def _records(n: int, ext: str, question=lambda k: f"What is shown in image {k}?", answer=lambda k: f"finding {k}"):
    return [
        {"qry_inst": "<|image_1|> Answer the question about the image.", "qry_text": question(k),
         "qry_img_path": f"real/{k:05d}.{ext}", "tgt_text": [answer(k), "none of these"]}
        for k in range(n)
    ]  # fmt: skip


def _vqa(base: Path, name: str, n: int, seed: int, shape, channels: int, fmt: str, column: str = "image") -> None:
    images = [{"bytes": encoded(fields.photo(shape, seed + k, channels), fmt), "path": None} for k in range(n)]
    table = pa.table({
        column: pa.array(images, IMAGE),
        "question": [f"What is shown in image {k}?" for k in range(n)],
        "answer": [f"finding {k}" for k in range(n)],
    })  # fmt: skip
    archives._write(base / "data" / name, table, ROW_GROUP)
