"""The bad-input corpus of volumes: NIfTI and NRRD files that are truncated, corrupt, huge, of an unsupported
type or with an all-zero affine, and volumes without contrast; each case, the exact behaviour, and nothing
written outside the allowed folders."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

from badinput import _claim_dims, _nifti_with, _zero_geometry, run_case
from preprocess.demo.volumes import save_nifti
from preprocess.errors import RawDataError
from preprocess.volumes.io import read_volume
from preprocess.volumes.recipes import Profile
from preprocess.volumes.slicer import reference_slices

MR = Profile("mr_list", low_pct=0.5, high_pct=99.5, fraction=0.015, short="round")


def case_nifti_corrupt_header(tmp):
    (tmp / "b.nii.gz").write_bytes(gzip.compress(b"\x5c\x01" + b"\xff" * 400))
    return read_volume(tmp / "b.nii.gz")


def case_nrrd_wrong_size(tmp):
    (tmp / "c.nrrd").write_bytes(
        b"NRRD0004\ntype: short\ndimension: 3\nsizes: 9 9 9\nencoding: raw\nendian: little\n\n" + b"\x00" * 30
    )
    return read_volume(tmp / "c.nrrd")


def case_all_nan_volume(tmp):
    save_nifti(tmp / "k.nii.gz", np.full((6, 6, 6), np.nan, np.float32))
    return reference_slices(read_volume(tmp / "k.nii.gz"), MR)


def case_constant_volume(tmp):
    save_nifti(tmp / "l.nii.gz", np.full((6, 6, 6), 7.0, np.float32))
    return reference_slices(read_volume(tmp / "l.nii.gz"), MR)


def _nrrd(tmp: Path, name: str, lines: str, data: bytes = b"") -> Path:
    (tmp / name).write_bytes(b"NRRD0004\n" + lines.encode() + b"\n" + data)
    return tmp / name


NRRD_SHORT = "type: short\ndimension: 3\nsizes: 4 4 4\nencoding: raw\nendian: little\n"


def case_nifti_huge_gz(tmp):
    return read_volume(_claim_dims(_nifti_with(tmp, "huge.nii.gz", lambda h: None)))


def case_nifti_huge_uncompressed(tmp):
    return read_volume(_claim_dims(_nifti_with(tmp, "huge.nii", lambda h: None), (600, 600, 600)))


def case_nifti_rgb24(tmp):
    import nibabel as nib

    voxels = np.zeros((4, 4, 4), dtype=[("R", "u1"), ("G", "u1"), ("B", "u1")])
    nib.save(nib.Nifti1Image(voxels, np.eye(4)), tmp / "rgb.nii.gz")
    return read_volume(tmp / "rgb.nii.gz")


def case_nifti_zero_affine(tmp):
    return read_volume(_nifti_with(tmp, "flat.nii.gz", _zero_geometry))


def case_nifti_zero_affine_canonical(tmp):
    from preprocess.volumes.io import read_nifti_canonical

    return read_nifti_canonical(_nifti_with(tmp, "flat2.nii.gz", _zero_geometry))


def case_nifti_short_uncompressed(tmp):
    path = _nifti_with(tmp, "cut.nii", lambda h: None)
    path.write_bytes(path.read_bytes()[:600])
    return read_volume(path)


def case_nifti_cap_from_config(tmp):
    from preprocess.volumes.io import Limits

    return read_volume(_nifti_with(tmp, "small.nii.gz", lambda h: None), Limits(max_voxels=100))


def case_nrrd_unsupported_type(tmp):
    return read_volume(_nrrd(tmp, "block.nrrd", NRRD_SHORT.replace("short", "block")))


def case_nrrd_huge(tmp):
    return read_volume(_nrrd(tmp, "huge.nrrd", NRRD_SHORT.replace("4 4 4", "32767 32767 32767")))


def case_nrrd_data_file_outside(tmp):
    from preprocess.volumes.io import Limits

    (tmp / "raw").mkdir()
    header = NRRD_SHORT + "data file: /etc/passwd\n"
    return read_volume(_nrrd(tmp / "raw", "detached.nrrd", header), Limits(root=tmp / "raw"))


def case_nrrd_data_file_list(tmp):
    return read_volume(_nrrd(tmp, "list.nrrd", NRRD_SHORT + "data file: LIST\n"))


CASES = {
    "NIfTI with a corrupt header": (case_nifti_corrupt_header, (RawDataError, r"b.nii.gz: unreadable NIfTI header")),
    "NRRD with a wrong size": (
        case_nrrd_wrong_size,
        (RawDataError, r"c.nrrd: 30 data bytes, its header promises 1458"),
    ),
    "all-NaN volume": (case_all_nan_volume, lambda r: len(r) == 64 and not any(i.any() for _, i in r)),
    "constant volume": (case_constant_volume, lambda r: len(r) == 64 and not any(i.any() for _, i in r)),
    "NIfTI .gz claiming 32767^3 voxels": (
        case_nifti_huge_gz,
        (RawDataError, r"huge.nii.gz: the header claims 32767 x 32767 x 32767 = \d+ voxels, more than max_volume"),
    ),
    "uncompressed NIfTI claiming more voxels than the file": (
        case_nifti_huge_uncompressed,
        (RawDataError, r"huge.nii: \d+ bytes, its header promises 432000352 .*truncated"),
    ),
    "RGB24 NIfTI": (case_nifti_rgb24, (RawDataError, r"rgb.nii.gz: voxel type .*RGB.* is not supported")),
    "all-zero affine": (case_nifti_zero_affine, (RawDataError, r"flat.nii.gz: unusable geometry")),
    "all-zero affine, canonical reader": (
        case_nifti_zero_affine_canonical,
        (RawDataError, r"flat2.nii.gz: unusable geometry"),
    ),
    "uncompressed NIfTI cut short": (
        case_nifti_short_uncompressed,
        (RawDataError, r"cut.nii: 600 bytes, its header promises 784"),
    ),
    "voxel cap from the config": (
        case_nifti_cap_from_config,
        (RawDataError, r"small.nii.gz: .*216 voxels, more than max_volume_voxels \(100\)"),
    ),
    "NRRD of an unsupported type": (case_nrrd_unsupported_type, (RawDataError, r"block.nrrd: voxel type 'block'")),
    "NRRD claiming 32767^3 voxels": (case_nrrd_huge, (RawDataError, r"huge.nrrd: the header claims 32767 x")),
    "NRRD data file outside the raw folder": (
        case_nrrd_data_file_outside,
        (RawDataError, r"detached.nrrd: its 'data file' '/etc/passwd' points outside the raw folder"),
    ),
    "NRRD data file LIST": (case_nrrd_data_file_list, (RawDataError, r"list.nrrd: data in several detached")),
}


@pytest.mark.parametrize("name", list(CASES))
def test_bad_input_corpus(tmp_path, name):
    run_case(tmp_path, *CASES[name])
