"""MIMIC-CXR-JPG 2.1.0: the demo's tiny copy of its download (`demo`) and real-size items (`real_size`, `SIZE`,
`REAL_SEED`); preprocess/demo/folders.py finds them."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np

from preprocess.demo import fields
from preprocess.demo.files import encoded, item_id, put
from preprocess.demo.images import encode, pattern
from preprocess.demo.real_sizes import Size

MIMIC_IMAGES = [
    ("p10", "p10000032", "s50414267", "02aa804e-bde0afdd-112c0b34-7bc16630-4e384014"),
    ("p10", "p10000032", "s53189527", "2a2277a9-b0ded155-c0de8eb9-c124d10e-82c5caab"),
    ("p11", "p11000011", "s51029426", "1e3bbd9a-4d3d6b9e-5e1c8f76-6b2a7c41-0e6d8b21"),
]


def demo(base: Path) -> None:
    for n in range(10, 20):
        (base / "files" / f"p{n}").mkdir(parents=True, exist_ok=True)
    for n, (group, patient, study, dicom) in enumerate(MIMIC_IMAGES):
        put(base / "files" / group / patient / study / f"{dicom}.jpg", encode(pattern(80 + n, channels=1), "JPEG"))
    rows = "".join(f"{d},{s[1:]},{p[1:]},test\n" for _, p, s, d in MIMIC_IMAGES)
    put(
        base / "mimic-cxr-2.0.0-split.csv.gz",
        gzip.compress(f"dicom_id,study_id,subject_id,split\n{rows}".encode(), mtime=0),
    )


# --- real size ----------------------------------------------------------------------------------------------

SIZE = Size(
    "8-bit grey JPEG 3056x2544, quality 95",
    "MIMIC-CXR-JPG 2.0.0 (PhysioNet): JPEG quality 95 of the full DICOM resolution, typically 2544 wide",
)
REAL_SEED = 0  # the run's own: Chest ImaGenome's boxes lie on the images MIMIC-CXR-JPG writes with it


MIMIC_SHAPE = (3056, 2544)


def mimic_images(n: int, seed: int) -> list[tuple[str, str, str, str]]:
    """(group, patient, study, dicom) of n MIMIC-CXR-JPG images, two per study."""
    images = []
    for k in range(n):
        patient = 10000000 + seed * 1000 + k // 2
        images.append(
            (f"p{str(patient)[:2]}", f"p{patient}", f"s{50000000 + seed * 1000 + k // 2}", item_id("mimic", seed, k))
        )
    return images


def real_size(base: Path, n: int, seed: int) -> dict:
    for group in range(10, 20):
        (base / "files" / f"p{group}").mkdir(parents=True, exist_ok=True)
    images = mimic_images(n, seed)
    for k, (group, patient, study, dicom) in enumerate(images):
        gray = (fields.xray(MIMIC_SHAPE, seed + k, 16) >> 8).astype(np.uint8)
        put(base / "files" / group / patient / study / f"{dicom}.jpg", encoded(gray, "JPEG"))
    rows = "".join(f"{d},{s[1:]},{p[1:]},test\n" for _, p, s, d in images)
    put(
        base / "mimic-cxr-2.0.0-split.csv.gz",
        gzip.compress(f"dicom_id,study_id,subject_id,split\n{rows}".encode(), mtime=0),
    )
    return {}
