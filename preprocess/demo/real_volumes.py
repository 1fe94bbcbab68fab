"""Real-size fakes of the volume downloads (CT-RATE, RadGenome, BraTS, HaN-Seg, SynthRAD, CirrMRI600+, MRNet,
MMDental); demo/real.py writes them."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from preprocess.demo import fields
from preprocess.demo.real_files import put
from preprocess.demo.volumes import save_nifti, save_nrrd

# --- volumes --------------------------------------------------------------------------------------------------

CT_SHAPE = (512, 512, 300)
LPS_CT = np.diag([-0.7, -0.7, 1.5, 1.0])


def ct_rate(base: Path, n: int, seed: int) -> dict:
    names = []
    for k in range(n):
        sub = f"valid_{seed * 1000 + k + 1}_a"
        names.append(f"{sub}_1.nii.gz")
        save_nifti(
            base / "dataset" / "valid_fixed" / sub[:-2] / sub / names[-1], fields.ct_slices(CT_SHAPE, seed + k), LPS_CT
        )
    rows = "".join(f'{name},"[0.7, 0.7]",1.5,-1024,1\n' for name in names)
    put(
        base / "dataset" / "metadata" / "validation_metadata.csv",
        "VolumeName,XYSpacing,ZSpacing,RescaleIntercept,RescaleSlope\n" + rows,
    )
    return {}


def radgenome(base: Path, n: int, seed: int) -> dict:
    for k in range(n):
        case = f"valid_{seed * 1000 + k + 1}"
        path = base / "dataset" / "valid_preprocessed" / case / f"{case}a" / f"{case}_a_1.nii.gz"
        save_nifti(path, fields.ct_slices(CT_SHAPE, seed + k), LPS_CT)
    return {}


BRATS = (240, 240, 155)
BRATS_LPS = np.diag([-1.0, -1.0, 1.0, 1.0])


def _mr(shape, seed: int, dtype=np.int16) -> np.ndarray:
    return fields.mr_slices(shape, seed).astype(dtype)


def brats_ped(base: Path, n: int, seed: int) -> dict:
    folder = "ASNR-MICCAI-BraTS2023-PED-Challenge-TrainingData"
    for k in range(n):
        case = f"BraTS-PED-{seed * 1000 + k + 2:05d}-000"
        for m, modality in enumerate(("t1n", "t1c", "t2w", "t2f")):
            save_nifti(
                base / folder / folder / case / f"{case}-{modality}.nii.gz", _mr(BRATS, seed + k * 4 + m), BRATS_LPS
            )
        save_nifti(base / folder / folder / case / f"{case}-seg.nii.gz", np.zeros(BRATS, np.uint8), BRATS_LPS)
    return {}


def brats_men(base: Path, n: int, seed: int) -> dict:
    root = base / "ASNR-MICCAI-BraTS2023-MEN-Challenge-TrainingData" / "BraTS-MEN-Train"
    for k in range(n):
        case = f"BraTS-MEN-{seed * 1000 + k + 4:05d}-000"
        for m, modality in enumerate(("t1n", "t1c", "t2w", "t2f")):
            save_nifti(root / case / f"{case}-{modality}.nii.gz", _mr(BRATS, seed + k * 4 + m), BRATS_LPS)
    return {}


def hanseg(base: Path, n: int, seed: int) -> dict:
    rows = []
    for k in range(n):
        case = f"case_{k + 1:02d}"
        folder = base / "set_1" / case
        ct = fields.ct_slices((1024, 1024, 180), seed + k)
        save_nrrd(folder / f"{case}_IMG_CT.nrrd", ct, spacing=(0.558, 0.558, 2.0))
        save_nrrd(folder / f"{case}_IMG_MR_T1.nrrd", _mr((512, 512, 86), seed + k), spacing=(0.703, 0.703, 3.0))
        rows.append(f"{case};1")
    put(base / "set_1" / "OAR_data.csv", "case;Brainstem\n" + "\n".join(rows) + "\n")
    return {}


PELVIS = np.diag([1.0, 1.0, 2.5, 1.0])


def synthrad(base: Path, n: int, seed: int) -> dict:
    """Items alternate brain and pelvis (at least one of each)."""
    for k in range(max(n, 2)):
        if k % 2 == 0:
            folder, shape, affine = base / "Task1" / "brain" / f"1BA{k + 1:03d}", (260, 220, 180), np.eye(4)
        else:
            folder, shape, affine = base / "Task1" / "pelvis" / f"1PA{k + 1:03d}", (448, 294, 119), PELVIS
        save_nifti(folder / "ct.nii.gz", fields.ct_slices(shape, seed + k), affine)
        save_nifti(folder / "mr.nii.gz", fields.mr_slices(shape, seed + k), affine)
        save_nifti(folder / "mask.nii.gz", np.ones(shape, np.uint8), affine)
    return {}


def cirrmri600(base: Path, n: int, seed: int) -> dict:
    shape, affine = (320, 260, 64), np.diag([1.4, 1.4, 5.0, 1])
    for sequence in ("T1", "T2"):
        root = base / "CirrMRI600+" / f"Cirrhosis_{sequence}_3D"
        rows = []
        for k in range(n):
            case = str(seed * 1000 + k + 1)
            save_nifti(root / "test_images" / f"{case}.nii.gz", fields.mr_slices(shape, seed + k), affine)
            save_nifti(root / "test_masks" / f"{case}.nii.gz", np.zeros(shape, np.uint8), affine)
            rows.append(f"{case},test\n")
        healthy = base / "CirrMRI600+" / "Healthy_subjects" / f"{sequence}_W_Healthy"
        save_nifti(healthy / f"{sequence}_images" / "3.nii.gz", fields.mr_slices(shape, seed + n), affine)
        save_nifti(healthy / f"{sequence}_masks" / "3.nii.gz", np.zeros(shape, np.uint8), affine)
        rows.append("healthy_3,test\n")
        put(base / f"Cirrhosis_{sequence}_slide_folders.csv", "\ufefffolder_name,split\n" + "".join(rows))
    return {}


def mrnet(base: Path, n: int, seed: int) -> dict:
    root = base / "MRNet-v1.0"
    cases = [f"{1130 + k:04d}" for k in range(n)]
    for p, plane in enumerate(("axial", "coronal", "sagittal")):
        for k, case in enumerate(cases):
            volume = np.clip(fields.mr_slices((256, 256, 30), seed + k * 3 + p, 200) + 10, 0, 255).astype(np.uint8)
            (root / "valid" / plane).mkdir(parents=True, exist_ok=True)
            np.save(root / "valid" / plane / f"{case}.npy", np.ascontiguousarray(volume.transpose(2, 0, 1)))
    for task in ("abnormal", "acl", "meniscus"):
        put(root / f"valid-{task}.csv", "".join(f"{case},{k % 2}\n" for k, case in enumerate(cases)))
    return {}


def mmdental(base: Path, n: int, seed: int) -> dict:
    rows = []
    for k in range(n):
        case = f"A{k + 1:03d}"
        cbct = (fields.ct_slices((400, 400, 300), seed + k) + 1000).astype(np.int16)
        save_nifti(base / case / f"{case}.nii.gz", cbct, np.diag([-0.3, -0.3, 0.3, 1.0]))
        rows.append(f"{case},1,Caries &amp; filling\n")
    put(base / "records.csv", "case_id,visit,record\n" + "".join(rows))
    return {}
