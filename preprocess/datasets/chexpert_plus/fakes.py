"""CheXpert Plus: the demo's tiny copy of its download (`demo`); preprocess/demo/folders.py finds it."""

from __future__ import annotations

from pathlib import Path

from preprocess.demo.files import put
from preprocess.demo.images import encode, pattern


def demo(base: Path) -> None:
    referenced = []
    for n, (patient, study, view) in enumerate(
        [("patient00001", "study1", "view1_frontal"), ("patient00002", "study2", "view2_lateral")]
    ):
        relative = f"train/{patient}/{study}/{view}.png"
        put(base / "PNG" / relative, encode(pattern(90 + n, (48, 40), channels=1), "PNG"))
        referenced.append(relative)
    put(
        base / "df_chexpert_plus_240401.csv",
        "path_to_image,section_findings,section_impression\n"
        f"{referenced[0].replace('.png', '.jpg')},Clear lungs.,No acute process.\n"
        f"{referenced[1].replace('.png', '.jpg')},Small effusion.,Left effusion.\n",
    )
