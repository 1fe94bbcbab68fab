"""Subsets whose release files are upstream files as they are: the image folders of the seed tree (APTOS,
ISIC-2019, Brain-Tumor-MRI, Kvasir v2, LC25000, RFMiD), M3D's PNG series and the zip members of PMC-VQA and
OmniMedVQA. Each rule says which upstream file sits at which release path; the bytes are the upstream's.
"""

from __future__ import annotations

import stat
import zipfile
from pathlib import Path, PurePosixPath

from preprocess.demo.release_images.outputs import Outputs, raw_file


def _mirror(files, target) -> Outputs:
    return {target(path): raw_file(path) for path in files if path.is_file()}


def aptos(raw, named) -> Outputs:
    return _mirror(raw("aptos2019").glob("train_images/*.png"), lambda p: f"2D_Images/APTOS/train_images/{p.name}")


def isic2019(raw, named) -> Outputs:
    """The test images under test/, and the benchmark's train images (its JSONLs name them) under train/."""
    made = {}
    for split, folder in (("test", "ISIC_2019_Test_Input"), ("train", "ISIC_2019_Training_Input")):
        target = f"2D_Images/ISIC-2019/{split}/{folder}"
        made |= _mirror(raw("isic2019").rglob(f"{folder}/ISIC_*.jpg"), lambda p, t=target: f"{t}/{p.name}")
    return made


def brain_tumor_mri(raw, named) -> Outputs:
    made = {}
    for split in ("Testing", "Training"):
        target = f"2D_Images/Brain-Tumor-MRI/datasets/{split}"
        made |= _mirror(
            raw("brain_tumor_mri").glob(f"{split}/*/*.jpg"), lambda p, t=target: f"{t}/{p.parent.name}/{p.name}"
        )
    return made


def kvasir(raw, named) -> Outputs:
    """The eight class folders; the benchmark split them into test/ and train/ itself (its records say which),
    so every image is offered at both places and the records take one."""
    made = {}
    for split in ("test", "train"):
        target = f"2D_Images/kvasir-dataset/datasets/{split}"
        made |= _mirror(
            raw("kvasir_v2").glob("kvasir-dataset-v2/*/*.jpg"), lambda p, t=target: f"{t}/{p.parent.name}/{p.name}"
        )
    return made


def lc25000(raw, named) -> Outputs:
    """Colon and lung class folders side by side under one Test_Set/ folder."""
    files = raw("lc25000").glob("lung_colon_image_set/*_image_sets/*/*.jpeg")
    return _mirror(files, lambda p: f"2D_Images/lc25000/lung_colon_image_set/Test_Set/{p.parent.name}/{p.name}")


def rfmid(raw, named) -> Outputs:
    """The test images, one folder level up from the download's doubled Test_Set/Test_Set/."""
    return _mirror(
        raw("rfmid").glob("Test_Set/Test_Set/Test/*.png"), lambda p: f"2D_Images/REtinal/Test_Set/Test/{p.name}"
    )


def m3d(raw, named) -> Outputs:
    """The captioned CT series, already 2D PNG slices: the same tree under 3D_Images/M3D/."""
    root = raw("m3d_cap") / "M3D_Cap"
    return _mirror(root.glob("ct_quizze/*/*/*.png"), lambda p: f"3D_Images/M3D/{p.relative_to(root).as_posix()}")


def _members(archive: Path, prefix: str, target: str) -> Outputs:
    """Regular members under `prefix` of a zip, at `target` + the rest of their name; links and names that
    climb out are not images of the dataset and are never offered."""

    def reader(name):
        def read() -> bytes:
            with zipfile.ZipFile(archive) as handle:
                return handle.read(name)

        return read

    made = {}
    with zipfile.ZipFile(archive) as handle:
        for info in handle.infolist():
            rest = PurePosixPath(info.filename[len(prefix) :]) if info.filename.startswith(prefix) else None
            is_link = stat.S_ISLNK(info.external_attr >> 16)
            if rest is None or info.is_dir() or is_link or ".." in rest.parts or rest.is_absolute():
                continue
            made[f"{target}/{rest.as_posix()}"] = reader(info.filename)
    return made


def pmc_vqa(raw, named) -> Outputs:
    return _members(raw("pmc_vqa") / "images.zip", "figures/", "2D_Images/PMC")


def omnimedvqa(raw, named) -> Outputs:
    return _members(raw("omnimedvqa") / "OmniMedVQA.zip", "OmniMedVQA/", "2D_Images/OmniMedVQA_vqa/test")
