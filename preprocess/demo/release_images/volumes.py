"""The benchmark's slicing of NIfTI and NRRD volumes, per dataset: which files, which slices, which names.
Volumes are read with nibabel (`np.asarray(img.dataobj)`, header scaling applied, as the scripts read them)
and NRRD with pynrrd (file axis order, header orientation ignored): not with the pipeline's readers."""

from __future__ import annotations

import csv

import nibabel as nib
import nrrd
import numpy as np

from preprocess.demo.release_images import windows
from preprocess.demo.release_images.outputs import Outputs, gray_or_rgb


def _nifti(path) -> np.ndarray:
    return np.asarray(nib.load(str(path)).dataobj)


def _series(made: Outputs, folder: str, planes, name: str = "slice_{k:03d}.png") -> None:
    """One PNG per (k, plane function) under `folder`; the volume is read once, when the first is written."""
    for k, plane in enumerate(planes):
        made[f"{folder}/{name.format(k=k)}"] = lambda p=plane: gray_or_rgb(p())


def _lazy(read, rule):
    """Slices of a volume read and turned to 8 bits once, on the first call: [function per slice]."""
    cache = {}

    def slices():
        if "s" not in cache:
            cache["s"] = rule(read())
        return cache["s"]

    return slices


def _mr(read, low: float, high: float, fraction: float, rounded_when_few: bool, count_from):
    """The scripts' MR rule: the volume windowed between percentiles, picks from its informative slices."""

    def rule(data):
        scaled = windows.mr_volume(data, low, high)
        picks = windows.from_informative(windows.informative(data, fraction), data.shape[2], rounded_when_few)
        return [scaled[:, :, index] for index in picks]

    slices = _lazy(read, rule)
    return [lambda k=k: slices()[k] for k in range(count_from)]


def _ct(read, window, level: float, width: float):
    def rule(data):
        return [window(data[:, :, index], level, width) for index in windows.evenly(0, data.shape[2] - 1)]

    slices = _lazy(read, rule)
    return [lambda k=k: slices()[k] for k in range(64)]


def brats_ped(raw, named) -> Outputs:
    """t1n and t2w of each case; split train when a folder of its path is a TrainingData one, else val."""
    made = {}
    for modality in ("t1n", "t2w"):
        for path in sorted(raw("brats_ped").rglob(f"BraTS-PED-*-{modality}.nii.gz")):
            split = "train" if any("TrainingData" in part for part in path.parent.parts) else "val"
            folder = f"3D_Images/BraTS2023/{split}/{modality}/{path.parent.name}"
            _series(made, folder, _mr(lambda p=path: _nifti(p), 0.5, 99.5, 0.015, True, 64))
    return made


def brats_men(raw, named) -> Outputs:
    made = {}
    for path in sorted(raw("brats_men").rglob("BraTS-MEN-*-t1n.nii.gz")):
        folder = f"3D_Images/BraTS_MEN/BraTS-MEN-Test/{path.parent.name}"
        _series(made, folder, _mr(lambda p=path: _nifti(p), 0.5, 99.5, 0.015, True, 64))
    return made


def _cirrmri_rule(data):
    """Percentiles 1 and 99.5; 64 evenly spaced over [first, last] informative slice (1% of pixels)."""
    scaled = windows.mr_volume(data, 1.0, 99.5)
    valid = windows.informative(data, 0.01)
    picks = windows.evenly(valid[0], valid[-1]) if valid else windows.evenly(0, data.shape[2] - 1)
    return [scaled[:, :, index] for index in picks]


def _cirrmri(raw, subset_folder: str, sequence: str) -> Outputs:
    """The images (not the masks, whose files share the images' names) of the cirrhosis and healthy
    folders, healthy ones prefixed `healthy_`; the split from the sequence's CSV, cases not in it left out."""
    base = raw("cirrmri600")
    with open(base / f"Cirrhosis_{sequence}_slide_folders.csv", newline="", encoding="utf-8-sig") as handle:
        splits = {row["folder_name"].strip(): row["split"].strip() for row in csv.DictReader(handle)}
    found = [(p, "") for p in base.rglob(f"Cirrhosis_{sequence}_3D/*_images/*.nii.gz")]
    found += [(p, "healthy_") for p in base.rglob(f"{sequence}_W_Healthy/{sequence}_images/*.nii.gz")]
    made = {}
    for path, prefix in sorted(found):
        case = prefix + path.name.removesuffix(".nii.gz")
        if case in splits:
            folder = f"3D_Images/{subset_folder}/Cirrhosis_{sequence}_slide/{splits[case]}/{case}"
            slices = _lazy(lambda p=path: _nifti(p), _cirrmri_rule)
            _series(made, folder, [lambda k=k, s=slices: s()[k] for k in range(64)])
    return made


def chirrmri600(raw, named) -> Outputs:
    return _cirrmri(raw, "ChirrMRI600", "T1")


def cirrmri600_cross(raw, named) -> Outputs:
    return _cirrmri(raw, "CirrMRI600_Cross", "T1") | _cirrmri(raw, "CirrMRI600_Cross", "T2")


def hanseg(raw, named) -> Outputs:
    """set_1/<case>/<case>_IMG_CT.nrrd (window L 50 W 350) and _IMG_MR_T1.nrrd (as BraTS-PED)."""
    made = {}
    for case in sorted(p for p in (raw("hanseg") / "set_1").iterdir() if p.is_dir()):
        ct, mr = case / f"{case.name}_IMG_CT.nrrd", case / f"{case.name}_IMG_MR_T1.nrrd"
        if ct.is_file():
            read = lambda p=ct: nrrd.read(str(p))[0]  # noqa: E731
            _series(made, f"3D_Images/HaN-Seg/CT_slides/{case.name}", _ct(read, windows.ct_clip_then_scale, 50, 350))
        if mr.is_file():
            read = lambda p=mr: nrrd.read(str(p))[0]  # noqa: E731
            _series(made, f"3D_Images/HaN-Seg/MRI_slides/{case.name}", _mr(read, 0.5, 99.5, 0.015, True, 64))
    return made


SYNTHRAD_CT = {"brain": (40, 80), "pelvis": (35, 350)}  # window level, width
SYNTHRAD_MR = {"brain": (0.5, 99.5, 0.015), "pelvis": (1.0, 99.5, 0.02)}  # percentiles, informative fraction


def synthrad(raw, named) -> Outputs:
    made = {}
    for region in ("brain", "pelvis"):
        for case in sorted(p for p in (raw("synthrad2023") / "Task1" / region).iterdir() if p.is_dir()):
            if (case / "ct.nii.gz").is_file():
                read = lambda p=case / "ct.nii.gz": _nifti(p)  # noqa: E731
                planes = _ct(read, windows.ct_clip_then_scale, *SYNTHRAD_CT[region])
                _series(made, f"3D_Images/SynthRAD/images/ct/{case.name}", planes)
            if (case / "mr.nii.gz").is_file():
                read = lambda p=case / "mr.nii.gz": _nifti(p)  # noqa: E731
                planes = _mr(read, *SYNTHRAD_MR[region], rounded_when_few=False, count_from=64)
                _series(made, f"3D_Images/SynthRAD/images/mri/{case.name}", planes)
    return made


def radgenome(raw, named) -> Outputs:
    """Every *_1.nii.gz under dataset/<split>_preprocessed/, its sub-folders mirrored under
    <split>_preprocessed_sliced/."""
    made = {}
    for split in ("valid", "train"):
        root = raw("radgenome_chestct") / "dataset" / f"{split}_preprocessed"
        for path in sorted(root.rglob("*_1.nii.gz")):
            folder = f"3D_Images/RadGen_CT/{split}_preprocessed_sliced/{path.parent.relative_to(root).as_posix()}"
            _series(made, folder, _ct(lambda p=path: _nifti(p), windows.ct_scale_then_clip, -600, 1500))
    return made


def _mmdental_rule(path):
    image = nib.as_closest_canonical(nib.load(str(path)))
    volume = np.nan_to_num(image.get_fdata(dtype=np.float32), nan=0.0, posinf=0.0, neginf=0.0)
    volume = volume[..., 0] if volume.ndim == 4 and volume.shape[3] == 1 else volume
    low, high = windows.mmdental_window(volume)
    planes = {}
    for view, axis in (("axial", 2), ("coronal", 1), ("sagittal", 0)):
        size = volume.shape[axis]
        first = max(0, min(round(size * 0.05), size - 1))
        end = max(first + 1, min(round(size * 0.95), size))
        for k, index in enumerate(windows.evenly(first, end - 1, 20)):
            plane = np.take(volume, index, axis=axis).T
            planes[f"{view}_slice_{k:03d}.png"] = windows.mmdental_slice(plane, low, high)
    return planes


def _mmdental_file(case):
    """<case>/<case>.nii.gz, else <case>/<case>.nii, else the folder's only NIfTI (none or several: None)."""
    for name in (f"{case.name}.nii.gz", f"{case.name}.nii"):
        if (case / name).is_file():
            return case / name
    found = [
        p for p in case.iterdir() if p.is_file() and (p.name.lower().endswith(".nii.gz") or p.suffix.lower() == ".nii")
    ]
    return found[0] if len(found) == 1 else None


def mmdental(raw, named) -> Outputs:
    """20 slices a view (axial = axis 2, coronal = 1, sagittal = 0) of the closest canonical volume, each
    transposed, between one window for the whole volume."""
    made = {}
    for case in sorted(p for p in raw("mmdental").iterdir() if p.is_dir()):
        path = _mmdental_file(case)
        if path is None:
            continue
        slices = _lazy(lambda p=path: p, _mmdental_rule)
        for view in ("axial", "coronal", "sagittal"):
            for k in range(20):
                name = f"{view}_slice_{k:03d}.png"
                made[f"3D_Images/MMDental/cbct_png/{case.name}/{name}"] = lambda n=name, s=slices: gray_or_rgb(s()[n])
    return made
