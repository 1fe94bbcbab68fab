"""VinDr-Mammo 1.0.0 (the Mammo-CLIP PNG copy by default): the demo's tiny copy of its download (`demo`) and real-
size items (`real_size`, `SIZE`, `REAL_SEED`); preprocess/demo/folders.py finds them."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from preprocess.demo import dicoms, fields
from preprocess.demo.files import encoded, item_id, put
from preprocess.demo.images import encode, pattern
from preprocess.demo.real_sizes import Size

# The Mammo-CLIP copy's table: PhysioNet's finding columns, then patient_id, fold and the boxes in the
# resized PNGs' pixels (column order [I]: the benchmark's script reads them by name).
MAMMO_HEADER = (
    "study_id,series_id,image_id,laterality,view_position,height,width,breast_birads,breast_density,"
    "finding_categories,finding_birads,xmin,ymin,xmax,ymax,split,patient_id,fold,"
    "resized_xmin,resized_ymin,resized_xmax,resized_ymax"
)


MAMMO_PATIENT = "4e3ac9a1d2f1b0c7e5a6d8f9b1c2d3e4"


MAMMO_IMAGES = [
    "2f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c",
    "8c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f",
    "c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8",
]


def vindr_mammo_physionet(base: Path) -> None:
    """The PhysioNet download (the optional DICOM route): images/<study_id>/<image_id>.dicom and
    finding_annotations.csv; one FOR PROCESSING image, one MONOCHROME1."""
    study = "a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6"
    first, second, third = MAMMO_IMAGES
    dicoms._dicom(base / "images" / study / f"{first}.dicom", dicoms.xray(3), window=([2000], [4000]))
    dicoms._dicom(base / "images" / study / f"{second}.dicom", dicoms.xray(4), "MONOCHROME1")
    dicoms._dicom(base / "images" / study / f"{third}.dicom", dicoms.xray(5), for_processing=True)
    header = (
        "study_id,series_id,image_id,laterality,view_position,height,width,breast_birads,breast_density,"
        "finding_categories,finding_birads,xmin,ymin,xmax,ymax,split"
    )
    rows = [
        f"{study},s1,{first},L,CC,96,80,BI-RADS 4,DENSITY C,\"['Mass', 'Suspicious Calcification']\",BI-RADS 4,"
        "10.5,20.5,40.2,50.9,test",
        f"{study},s1,{second},R,MLO,96,80,BI-RADS 1,DENSITY B,\"['No Finding']\",,,,,,test",
        f"{study},s1,{third},R,CC,96,80,BI-RADS 3,DENSITY B,\"['Mass']\",BI-RADS 3,5,5,20,20,training",
    ]
    dicoms._write(base / "finding_annotations.csv", header + "\n" + "\n".join(rows) + "\n")


def demo(base: Path) -> None:
    """The derived copy: 8-bit PNGs under images_png/<patient_id>/ and vindr_detection_v1_folds.csv. A row
    lists several categories (one crop each), a 'No Finding' row has no box, and a training-only category
    (Architectural Distortion) moves the sorted category ids."""
    study = "a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6"
    for n, image_id in enumerate(MAMMO_IMAGES):
        path = base / "images_png" / MAMMO_PATIENT / f"{image_id}.png"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(encode(pattern(300 + n, (120, 72), channels=1), "PNG"))
    first, second, third = MAMMO_IMAGES
    common = f"{study},s1"
    rows = [
        f"{common},{first},L,CC,3518,2800,BI-RADS 4,DENSITY C,\"['Mass', 'Suspicious Calcification']\",BI-RADS 4,"
        f"1200.5,1500.2,1800.9,2100.4,test,{MAMMO_PATIENT},0,10.6,20.2,40.9,50.5",
        f"{common},{first},L,CC,3518,2800,BI-RADS 4,DENSITY C,\"['Mass']\",BI-RADS 4,"
        f"100.0,2600.0,300.0,3000.0,test,{MAMMO_PATIENT},0,50.0,90.0,66.0,118.0",
        f"{common},{second},R,MLO,3518,2800,BI-RADS 1,DENSITY B,\"['No Finding']\",,,,,,test,{MAMMO_PATIENT},0,,,,",
        f"{common},{third},R,CC,3518,2800,BI-RADS 3,DENSITY B,\"['Architectural Distortion']\",BI-RADS 3,"
        f"400.0,400.0,900.0,900.0,training,{MAMMO_PATIENT},1,5.0,5.0,20.0,20.0",
    ]
    dicoms._write(base / "vindr_detection_v1_folds.csv", MAMMO_HEADER + "\n" + "\n".join(rows) + "\n")


# --- real size ----------------------------------------------------------------------------------------------

SIZE = Size(
    "derived copy: 8-bit PNG 1520x912 (Mammo-CLIP's resize); PhysioNet route: DICOM 3518x2800, 12 bits, "
    "uncompressed and JPEG 2000 lossless",
    "Mammo-CLIP preprocessing (resize to 1520x912); VinDr-Mammo paper (Nguyen et al. 2023, Sci Data "
    "10:277) and its finding_annotations.csv height/width 3518x2800",
)
REAL_SEED = 1  # added to the run's seed: each source its own, whichever others are written


def real_size(base: Path, n: int, seed: int) -> dict:
    """Both copies in the one raw folder, as a user with both has it: the Mammo-CLIP PNGs and table (the
    default variant) and the PhysioNet DICOMs and finding_annotations.csv (source_variants: physionet)."""
    png, dicom = (1520, 912), (3518, 2800)
    patient, study = item_id("patient", seed), item_id("study", seed)
    derived, physionet = [], []
    for k in range(n):
        image_id = item_id("vindr_mammo", seed, k)
        gray = (fields.xray(png, seed + k, 16) >> 8).astype(np.uint8)
        put(base / "images_png" / patient / f"{image_id}.png", encoded(gray, "PNG"))
        dicoms.xray_dicom(base / "images" / study / f"{image_id}.dicom", seed + k, dicom)
        x0, y0, x1, y1 = fields.box(seed + k, *dicom)
        sy, sx = png[0] / dicom[0], png[1] / dicom[1]
        common = f"{study},s1,{image_id},L,CC,{dicom[0]},{dicom[1]},BI-RADS 4,DENSITY C,\"['Mass']\",BI-RADS 4"
        derived.append(
            f"{common},{x0},{y0},{x1},{y1},test,{patient},0,{x0 * sx:.1f},{y0 * sy:.1f},{x1 * sx:.1f},{y1 * sy:.1f}"
        )
        physionet.append(f"{common},{x0},{y0},{x1},{y1},test")
    put(base / "vindr_detection_v1_folds.csv", MAMMO_HEADER + "\n" + "\n".join(derived) + "\n")
    header = MAMMO_HEADER.split(",patient_id")[0]
    put(base / "finding_annotations.csv", header + "\n" + "\n".join(physionet) + "\n")
    return {}
