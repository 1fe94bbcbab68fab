"""Demo and test fakes of the 3D downloads: same trees, names, dtypes and geometry, tiny arrays."""

from __future__ import annotations

from pathlib import Path

import nibabel as nib
import numpy as np

from preprocess.demo.images import encode, pattern

LPS = np.diag([-0.8, -0.8, 2.0, 1.0])  # voxel axes run to patient Left, Posterior, Superior


def ct_phantom(shape=(48, 40, 36), seed: int = 0, body_axes=(0.9, 0.7)) -> np.ndarray:
    """int16 HU: air, a body ellipse with lungs and a spine, changing along the third axis."""
    x, y, z = np.meshgrid(*(np.linspace(-1, 1, n) for n in shape), indexing="ij")
    hu = np.full(shape, -1000, dtype=np.int16)
    body = (x / body_axes[0]) ** 2 + (y / body_axes[1]) ** 2 < 1 - 0.2 * z**2
    hu[body] = 40
    hu[body & (((x - 0.4) / 0.3) ** 2 + (y / 0.4) ** 2 < 1)] = -820
    hu[body & (((x + 0.4) / 0.3) ** 2 + (y / 0.4) ** 2 < 1)] = -780
    hu[body & ((x / 0.12) ** 2 + ((y - 0.5) / 0.12) ** 2 < 1)] = 700 + seed * 10
    return hu


def mr_phantom(shape=(40, 36, 30), empty: int = 4, seed: int = 0) -> np.ndarray:
    """float32 MR-like intensities, background 0, the first and last `empty` slices blank."""
    x, y, z = np.meshgrid(*(np.linspace(-1, 1, n) for n in shape), indexing="ij")
    values = (300 + 200 * x + 150 * np.cos(3 * y + seed) + 80 * z) * ((x / 0.8) ** 2 + (y / 0.8) ** 2 < 1)
    values = np.clip(values, 0, None).astype(np.float32)
    values[:, :, :empty] = 0
    values[:, :, shape[2] - empty :] = 0
    return values


def save_nifti(path: Path, data: np.ndarray, affine=LPS) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    image = nib.Nifti1Image(data, affine)
    image.header.set_xyzt_units("mm")
    nib.save(image, str(path))


def save_nrrd(path: Path, data: np.ndarray, spacing=(0.9, 0.9, 2.5)) -> None:
    import SimpleITK as sitk

    path.parent.mkdir(parents=True, exist_ok=True)
    image = sitk.GetImageFromArray(np.ascontiguousarray(data.transpose(2, 1, 0)))
    image.SetSpacing(spacing)
    image.SetOrigin((-20.0, -30.0, 10.0))
    sitk.WriteImage(image, str(path), True)


def save_scaled_nifti(path: Path, stored: np.ndarray, slope: float, inter: float, affine=LPS) -> None:
    """Stored values with header scaling (scl_slope, scl_inter), as scanners export CT: HU = slope * v + inter."""
    path.parent.mkdir(parents=True, exist_ok=True)
    image = nib.Nifti1Image(stored, affine)
    image.header.set_slope_inter(slope, inter)
    image.header.set_xyzt_units("mm")
    nib.save(image, str(path))


# The release's task JSONs for these subsets are literal files (preprocess/demo/release/3D_Task/): the writers
# make exactly the series those files name and report nothing to generate.


def ct_rate(base: Path) -> None:
    scans = [("valid_1", "valid_1_a"), ("valid_2", "valid_2_a"), ("valid_2", "valid_2_b")]
    for n, (case, sub) in enumerate(scans):
        folder = base / "dataset" / "valid_fixed" / case / sub
        hu = ct_phantom(shape=(64, 48, 36), seed=n, body_axes=(0.6, 0.7))  # air beside the body: the DRR is cropped
        if sub == "valid_2_b":  # stored unsigned with a header intercept: the reference reads HU through it
            save_scaled_nifti(folder / f"{sub}_1.nii.gz", (hu + 1024).astype(np.uint16), 1.0, -1024.0)
        else:
            save_nifti(folder / f"{sub}_1.nii.gz", hu)
        save_nifti(folder / f"{sub}_2.nii.gz", ct_phantom(seed=n + 5))  # a second reconstruction: not used
    for n, (case, sub) in enumerate([("train_1", "train_1_a"), ("train_2", "train_2_a")]):  # the train split
        folder = base / "dataset" / "train_fixed" / case / sub
        save_nifti(folder / f"{sub}_1.nii.gz", ct_phantom(shape=(48, 40, 70), seed=20 + n, body_axes=(0.6, 0.7)))
        save_nifti(folder / f"{sub}_2.nii.gz", ct_phantom(seed=30 + n))  # a second reconstruction: not used
    metadata = base / "dataset" / "metadata" / "validation_metadata.csv"
    metadata.parent.mkdir(parents=True, exist_ok=True)
    metadata.write_text(
        "VolumeName,XYSpacing,ZSpacing,RescaleIntercept,RescaleSlope\n"
        + "".join(f'{sub}_1.nii.gz,"[0.8, 0.8]",2.0,-1024,1\n' for _, sub in scans)
    )


def radgenome(base: Path) -> None:
    folder = base / "dataset" / "valid_preprocessed" / "valid_1004" / "valid_1004a"  # no underscore upstream
    save_nifti(folder / "valid_1004_a_1.nii.gz", ct_phantom(seed=2))
    train = base / "dataset" / "train_preprocessed"  # the train split, named as the valid one
    save_nifti(train / "train_16" / "train_16a" / "train_16_a_1.nii.gz", ct_phantom(shape=(48, 40, 70), seed=40))
    save_nifti(train / "train_16" / "train_16a" / "train_16_a_2.nii.gz", ct_phantom(seed=41))  # not used
    # fewer than 64 slices (the indices repeat), stored unsigned with a header intercept: HU via the header
    stored = (ct_phantom(seed=42) + 1024).astype(np.uint16)
    save_scaled_nifti(train / "train_3" / "train_3b" / "train_3_b_1.nii.gz", stored, 1.0, -1024.0)


CIRRMRI_SPLITS = {"12": "train", "7": "test", "healthy_3": "test"}


def cirrmri600(base: Path) -> None:
    anisotropic = np.diag([1.4, 1.4, 5.0, 1])
    for sequence in ("T1", "T2"):
        root = base / "CirrMRI600+" / f"Cirrhosis_{sequence}_3D"  # extracted one level deeper
        for case, split_folder in (("12", "train"), ("7", "test"), ("99", "valid")):  # 99: not in the split CSV
            save_nifti(root / f"{split_folder}_images" / f"{case}.nii.gz", mr_phantom(seed=int(case)), anisotropic)
            save_nifti(root / f"{split_folder}_masks" / f"{case}.nii.gz", (mr_phantom(seed=1) > 0).astype(np.uint8))
        healthy = base / "CirrMRI600+" / "Healthy_subjects" / f"{sequence}_W_Healthy"
        save_nifti(healthy / f"{sequence}_images" / "3.nii.gz", mr_phantom(seed=3, empty=0), anisotropic)
        save_nifti(healthy / f"{sequence}_masks" / "3.nii.gz", (mr_phantom(seed=3) > 0).astype(np.uint8))
        rows = "".join(f"{folder},{split}\n" for folder, split in CIRRMRI_SPLITS.items())
        csv = base / f"Cirrhosis_{sequence}_slide_folders.csv"
        csv.write_text("\ufefffolder_name,split\n" + rows, encoding="utf-8")


def brats_ped(base: Path) -> None:
    training = "ASNR-MICCAI-BraTS2023-PED-Challenge-TrainingData"
    cases = [
        (f"{training}/{training}", "BraTS-PED-00002-000", "train"),
        ("ASNR-MICCAI-BraTS2023-PED-Challenge-ValidationData", "BraTS-PED-00101-000", "val"),
    ]
    for n, (folder, case, split) in enumerate(cases):
        for modality in ("t1n", "t1c", "t2w", "t2f"):
            save_nifti(base / folder / case / f"{case}-{modality}.nii.gz", mr_phantom(seed=n + len(modality)))
        if split == "train":
            save_nifti(base / folder / case / f"{case}-seg.nii.gz", np.zeros((40, 36, 30), np.uint8))


def brats_men(base: Path) -> None:
    root = base / "ASNR-MICCAI-BraTS2023-MEN-Challenge-TrainingData" / "BraTS-MEN-Train"
    for case in ("BraTS-MEN-00004-000", "BraTS-MEN-00008-001"):
        for modality in ("t1n", "t2w"):
            save_nifti(root / case / f"{case}-{modality}.nii.gz", mr_phantom(shape=(40, 36, 20), empty=2))


def hanseg(base: Path) -> None:
    for n, case in enumerate(("case_01", "case_02")):
        folder = base / "set_1" / case
        save_nrrd(folder / f"{case}_IMG_CT.nrrd", ct_phantom(seed=n))
        save_nrrd(folder / f"{case}_IMG_MR_T1.nrrd", (mr_phantom(seed=n) * 3).astype(np.int16), spacing=(1.0, 1.0, 1.2))
        save_nrrd(folder / f"{case}_OAR_Brainstem.seg.nrrd", (ct_phantom(seed=n) > 500).astype(np.uint8))
    (base / "set_1" / "OAR_data.csv").write_text("case;Brainstem\ncase_01;1\ncase_02;1\n")


def synthrad(base: Path) -> None:
    for n, case in enumerate(("1BA001", "1BC002", "1PA004", "1PC005")):
        region = "brain" if case[1] == "B" else "pelvis"
        affine = np.diag([1.0, 1.0, 1.0 if region == "brain" else 2.5, 1])
        folder = base / "Task1" / region / case
        save_nifti(folder / "ct.nii.gz", ct_phantom(seed=n), affine)
        save_nifti(folder / "mr.nii.gz", mr_phantom(seed=n), affine)
        save_nifti(folder / "mask.nii.gz", np.ones((40, 36, 30), np.uint8), affine)
    overview = base / "Task1" / "brain" / "overview"
    overview.mkdir(parents=True, exist_ok=True)
    (overview / "1_brain_train.xlsx").write_bytes(b"PK\x03\x04 not a volume")


def mrnet(base: Path) -> None:
    root = base / "MRNet-v1.0"
    for plane, (case, slices) in {"axial": ("1130", 24), "coronal": ("1130", 8), "sagittal": ("1131", 16)}.items():
        volume = np.stack([pattern(k, (32, 32), 1) for k in range(slices)]).astype(np.uint8)
        (root / "valid" / plane).mkdir(parents=True, exist_ok=True)
        np.save(root / "valid" / plane / f"{case}.npy", volume)
    for task in ("abnormal", "acl", "meniscus"):  # headerless, ids zero-padded to 4 digits
        (root / f"valid-{task}.csv").write_text("1130,1\n1131,0\n")
    for plane in ("axial", "coronal", "sagittal"):  # the train split: case 0000 of 12 slices
        (root / "train" / plane).mkdir(parents=True, exist_ok=True)
        np.save(root / "train" / plane / "0000.npy", np.stack([pattern(50 + k, (32, 32), 1) for k in range(12)]))


def m3d(base: Path) -> None:
    folder = base / "M3D_Cap" / "ct_quizze" / "005375" / "Axial_C__delayed"
    folder.mkdir(parents=True, exist_ok=True)
    for k in (0, 1, 2, 10):
        (folder / f"{k}.png").write_bytes(encode(pattern(k, (32, 32), 1), "PNG"))
    (folder.parent / "text.txt").write_text("A demo caption.\n")


def mmdental(base: Path) -> None:
    """CBCTs stored LPS (so the closest canonical flips two axes), uneven sides, voxels 0.3 mm."""
    for n, case in enumerate(("A001", "A002")):
        cbct = (ct_phantom(shape=(44, 38, 30), seed=4 + n) + 1000).astype(np.int16)
        save_nifti(base / case / f"{case}.nii.gz", cbct, np.diag([-0.3, -0.3, 0.3, 1.0]))
    (base / "records.csv").write_text(
        "case_id,visit,record\nA001,1,Caries &amp; filling\nA002,1,Impacted lower third molar\n"
    )


WRITERS = {
    "ct_rate": ct_rate,
    "radgenome_chestct": radgenome,
    "cirrmri600": cirrmri600,
    "brats_ped": brats_ped,
    "brats_men": brats_men,
    "hanseg": hanseg,
    "synthrad2023": synthrad,
    "mrnet": mrnet,
    "m3d_cap": m3d,
    "mmdental": mmdental,
}
