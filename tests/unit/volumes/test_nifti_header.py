"""The NIfTI reader against nibabel, header for header: nibabel reads the header, the pipeline inflates the voxels
itself (ISA-L); for every header, the same shape, voxel type and byte order, voxel offset, scaling, voxel sizes
and affine as nibabel's load, and the same voxels as nibabel's `dataobj`; what nibabel refuses is refused."""

from __future__ import annotations

import gzip
from pathlib import Path

import nibabel as nib
import numpy as np
import pytest

from preprocess.errors import RawDataError
from preprocess.volumes import io

SHAPE = (5, 4, 3)


def _header(dtype="<i2", shape=SHAPE, sform_code=1, qform_code=1, **fields) -> nib.Nifti1Header:
    """A header built field by field with nibabel's own struct (unchecked, so that bad values stay)."""
    header = nib.Nifti1Header(endianness=np.dtype(dtype).byteorder if np.dtype(dtype).byteorder in "<>" else "<")
    header.set_data_dtype(np.dtype(dtype))
    header.set_data_shape(shape)
    header["pixdim"][1:4] = (0.7, 0.8, 1.25)
    header["vox_offset"] = 352
    header["sform_code"], header["qform_code"] = sform_code, qform_code
    header["srow_x"] = (-0.7, 0.01, 0.0, 120.5)
    header["srow_y"] = (0.0, -0.8, 0.02, 95.25)
    header["srow_z"] = (0.0, 0.0, 1.25, -300.0)
    header["quatern_b"], header["quatern_c"], header["quatern_d"] = 0.0, 0.0, 1.0
    header["qoffset_x"], header["qoffset_y"], header["qoffset_z"] = 120.5, 95.25, -300.0
    for name, value in fields.items():
        header[name] = value
    return header


def _write(path: Path, header: nib.Nifti1Header, extension: bytes = b"") -> Path:
    """A single-file NIfTI: the 348 header bytes, the extension flag (and an extension), voxels in F order."""
    dtype = header.get_data_dtype()
    shape = header.get_data_shape()
    voxels = (np.arange(int(np.prod(shape))) % 97).astype(dtype).reshape(shape, order="F")
    flag = b"\x01\x00\x00\x00" if extension else b"\x00\x00\x00\x00"
    head = header.binaryblock + flag + extension
    offset = max(int(header["vox_offset"]), len(head))
    payload = head + b"\x00" * (offset - len(head)) + voxels.tobytes(order="F")
    path.write_bytes(gzip.compress(payload, mtime=0) if path.name.endswith(".gz") else payload)
    return path


def _nibabel(path: Path) -> tuple:
    """What nibabel's load gives: shape, dtype, offset, slope, intercept, zooms, affine."""
    image = nib.load(str(path))
    proxy = image.dataobj
    return (
        tuple(proxy.shape),
        np.dtype(proxy.dtype),
        int(proxy.offset),
        float(proxy.slope),
        float(proxy.inter),
        tuple(float(z) for z in image.header.get_zooms()[:3]),
        np.asarray(image.affine, dtype=np.float64),
    )


def _ours(path: Path) -> tuple:
    """What the pipeline reads: its header plan, and its voxels (the singleton 4th axis squeezed)."""
    plan, _ = io._nifti_header(path, io.Limits())
    return (plan.shape, plan.dtype, plan.offset, plan.slope, plan.inter, plan.zooms, plan.affine)


def _same_voxels(path: Path) -> None:
    theirs = np.asarray(nib.load(str(path)).dataobj)  # nibabel applies the scaling; the pipeline keeps it aside
    volume = io.read_nifti(path)
    assert np.array_equal(volume.scaled(volume.data), theirs.reshape(volume.data.shape))


def _same(ours: tuple, theirs: tuple) -> None:
    assert ours[:6] == theirs[:6]
    assert ours[1].byteorder == theirs[1].byteorder or ours[1].itemsize == 1
    assert np.array_equal(ours[6], theirs[6])  # bit for bit: both are the float32 srows widened


@pytest.mark.parametrize("suffix", [".nii", ".nii.gz"])
@pytest.mark.parametrize("dtype", ["<i2", ">i2", "u1", "i1", "<u2", "<i4", ">f4", "<f8", "<i8", ">u4", "<u8"])
def test_plain_headers_read_as_nibabel_reads_them(tmp_path, dtype, suffix):
    path = _write(tmp_path / f"v{suffix}", _header(dtype))
    _same(_ours(path), _nibabel(path))
    _same_voxels(path)


@pytest.mark.parametrize(
    "fields",
    [
        {"scl_slope": 2.5, "scl_inter": -1024.0},
        {"scl_slope": 0.0, "scl_inter": 7.0},  # no scaling
        {"scl_slope": np.nan, "scl_inter": np.nan},  # no scaling
        {"scl_slope": 1.0, "scl_inter": 0.0},
        {"sform_code": 2, "qform_code": 0},
        {"sform_code": 5, "qform_code": 4},
        {"pixdim": (-1.0, 0.5, 0.5, 3.0, 2.0, 0, 0, 0)},  # qfac -1
        {"vox_offset": 400},  # past the extension flag, not a multiple of 16 (nibabel only warns)
    ],
)
def test_header_fields_read_as_nibabel_reads_them(tmp_path, fields):
    path = _write(tmp_path / "v.nii.gz", _header(**fields))
    _same(_ours(path), _nibabel(path))
    _same_voxels(path)


def test_extension_and_singleton_4th_axis(tmp_path):
    extension = (32).to_bytes(4, "little") + (6).to_bytes(4, "little") + b"x" * 24  # an AFNI-coded extension
    path = _write(tmp_path / "v.nii.gz", _header(shape=(*SHAPE, 1), vox_offset=384), extension)
    _same(_ours(path), _nibabel(path))
    assert np.array_equal(io.read_nifti(path).data, np.asarray(nib.load(str(path)).dataobj)[..., 0])


@pytest.mark.parametrize(
    "fields",
    [
        {"sform_code": 0, "qform_code": 1},  # the qform's quaternion: nibabel's
        {"sform_code": 0, "qform_code": 0},  # nibabel's base affine
        {"sform_code": 9},  # invalid: nibabel resets it to 0
        {"pixdim": (1.0, -0.7, 0.8, 1.25, 0, 0, 0, 0)},  # nibabel takes the absolute value
        {"pixdim": (0.0, 0.7, 0.8, 1.25, 0, 0, 0, 0)},  # qfac 0: nibabel sets it to 1
        {"pixdim": (1.0, 0.0, 0.8, 1.25, 0, 0, 0, 0)},  # nibabel sets a zero size to 1
        {"bitpix": 8},  # nibabel corrects it
        {"magic": b"ni1"},  # the header of a .hdr/.img pair
        {"vox_offset": 0},
    ],
)
def test_headers_nibabel_fixes_are_read_as_nibabel_reads_them(tmp_path, fields):
    path = _write(tmp_path / "v.nii.gz", _header(**fields))
    plan = _ours(path)
    theirs = _nibabel(path)
    assert plan[:6] == theirs[:6]
    assert np.array_equal(plan[6], theirs[6])


def test_an_infinite_intercept_gets_nibabels_refusal(tmp_path):
    path = _write(tmp_path / "v.nii.gz", _header(scl_slope=1.0, scl_inter=np.inf))
    with pytest.raises(RawDataError, match=r"v.nii.gz: unreadable NIfTI header \(HeaderDataError: Valid slope"):
        io.read_nifti(path)


def test_non_gray_types_are_refused_and_nifti2_is_read(tmp_path):
    complex_path = _write(tmp_path / "c.nii", _header("<c8"))
    with pytest.raises(RawDataError, match=r"c.nii: voxel type complex64 .* is not supported"):
        io.read_nifti(complex_path)
    two = tmp_path / "two.nii"
    nib.save(nib.Nifti2Image(np.zeros(SHAPE, np.int16), np.eye(4)), str(two))
    assert io.read_nifti(two).data.shape == SHAPE
    (tmp_path / "short.nii.gz").write_bytes(gzip.compress(b"\x5c\x01" + b"\x00" * 100))
    with pytest.raises(RawDataError, match=r"short.nii.gz: unreadable NIfTI header"):
        io.read_nifti(tmp_path / "short.nii.gz")
