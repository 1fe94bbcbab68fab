"""The reading plan of a plain NIfTI-1 file from its 348-byte header, without nibabel.

A volume job needs six facts of a header: the shape, the voxel type, where the voxels start, the scaling, the
voxel sizes and the affine. For the header most scanners' converters write (one `.nii`/`.nii.gz` file, magic
`n+1`, a valid sform), those are fixed fields read with `struct`, and importing nibabel to read them was a
tenth of a second of every volume worker's start. `parse` (`read_plan` for a file) returns them only when
nibabel would read the header as it is: no check of nibabel's would report a problem or change a field, and
the affine is the sform (nibabel's choice whenever sform_code is set). Anything else (a qform-only or uncoded
header, negative or zero voxel sizes, a bad qfac, an unknown type, an odd offset, NIfTI-2, an intercept that
is not finite) gives None, and the caller reads the header with nibabel, so results and error messages stay
nibabel's. Both readers give the same HeaderPlan.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

HEADER_BYTES = 348
SINGLE_FILE_OFFSET = 352  # the header and the 4-byte extension flag come first
MAGIC = b"n+1\x00"
VALID_XFORM_CODES = range(6)  # unknown, scanner, aligned, Talairach, MNI-152, other template

# datatype code -> numpy type (the gray types only: every other code is nibabel's to read or refuse)
DTYPES = {2: "u1", 4: "i2", 8: "i4", 16: "f4", 64: "f8", 256: "i1", 512: "u2", 768: "u4", 1024: "i8", 1280: "u8"}


@dataclass(frozen=True)
class HeaderPlan:
    shape: tuple[int, ...]
    dtype: np.dtype  # with the header's byte order
    offset: int  # of the first voxel byte
    slope: float  # 1.0 and 0.0 when the header asks for no scaling
    inter: float
    zooms: tuple[float, ...]  # pixdim of the first three axes
    affine: np.ndarray  # float64 4x4, the sform
    order: str = "F"  # of the voxels: NIfTI stores the first axis fastest


def _fields(block: bytes, order: str) -> dict:
    """The header fields this module uses, decoded with byte order `order` ('<' or '>')."""

    def values(fmt: str, start: int) -> tuple:
        return struct.unpack_from(order + fmt, block, start)

    return {
        "sizeof_hdr": values("i", 0)[0],
        "dim": values("8h", 40),
        "datatype": values("h", 70)[0],
        "bitpix": values("h", 72)[0],
        "pixdim": values("8f", 76),
        "vox_offset": values("f", 108)[0],
        "scl": values("2f", 112),
        "xform_codes": values("2h", 252),  # qform_code, sform_code
        "srows": values("12f", 280),
        "magic": block[344:348],
    }


def _byte_order(block: bytes) -> str | None:
    """The order in which dim[0] reads as a dimension count (nibabel's guess), if either does."""
    for order in "<>":
        if 1 <= struct.unpack_from(order + "h", block, 40)[0] <= 7:
            return order
    return None


def parse(block: bytes) -> HeaderPlan | None:
    """The plan of a plain single-file NIfTI-1 header (see the module's docstring), else None."""
    if len(block) < HEADER_BYTES:
        return None
    order = _byte_order(block)
    if order is None:
        return None
    f = _fields(block, order)
    ndim = f["dim"][0]
    shape = tuple(f["dim"][1 : ndim + 1])
    code = DTYPES.get(f["datatype"])
    qform_code, sform_code = f["xform_codes"]
    slope, inter = f["scl"]
    plain = (
        f["sizeof_hdr"] == HEADER_BYTES
        and f["magic"] == MAGIC
        and code is not None
        and f["bitpix"] == np.dtype(code).itemsize * 8
        and ndim >= 3
        and all(n > 0 for n in shape)
        and shape[:3] != (27307, 1, 6)  # nibabel reads FreeSurfer's ico7 surface as another shape
        and all(z > 0 for z in f["pixdim"][1:4])
        and f["pixdim"][0] in (-1.0, 1.0)
        and f["vox_offset"] >= SINGLE_FILE_OFFSET
        and f["vox_offset"] == int(f["vox_offset"])
        and qform_code in VALID_XFORM_CODES
        and sform_code in VALID_XFORM_CODES
        and sform_code != 0
        and np.isfinite(f["srows"]).all()
    )
    if not plain:
        return None
    if slope == 0 or not np.isfinite(slope):
        slope, inter = 1.0, 0.0  # no scaling
    elif not np.isfinite(inter):
        return None  # nibabel refuses it, in its own words
    affine = np.eye(4)
    affine[:3, :] = np.asarray(f["srows"], dtype=np.float64).reshape(3, 4)
    return HeaderPlan(
        shape=shape,
        dtype=np.dtype(code).newbyteorder(order),
        offset=int(f["vox_offset"]),
        slope=float(slope),
        inter=float(inter),
        zooms=tuple(float(z) for z in f["pixdim"][1:4]),
        affine=affine,
    )


def read_plan(path: Path) -> HeaderPlan | None:
    """The plan of the file's header when it is plain, else None (also when the first bytes cannot be read:
    nibabel's reading then says why)."""
    try:
        if path.name.lower().endswith(".gz"):
            from isal import igzip

            with igzip.open(path, "rb") as handle:
                block = handle.read(HEADER_BYTES)
        else:
            with open(path, "rb") as handle:
                block = handle.read(HEADER_BYTES)
    except Exception:  # any failure here is nibabel's to report
        return None
    return parse(block)
