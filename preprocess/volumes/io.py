"""Volume readers. Every reader returns voxels in file order (i, j, k) plus geometry, unscaled.

- NIfTI (.nii, .nii.gz): nibabel reads the header (and refuses what it refuses); the voxel block is inflated
  with ISA-L and viewed with numpy (no float64 copy). Header scaling (scl_slope/scl_inter) is kept aside in
  `Volume.slope` and `Volume.inter` and applied once, by `Volume.scaled`, to the slices that are written.
  scl_slope 0 means no scaling (the NIfTI-1 standard); so does a slope that is not finite, as nibabel and the
  standard's reference library (nifti1_io.c) read it; an infinite or NaN scl_inter beside a slope is refused
  (nibabel's HeaderDataError, named).
- NRRD (.nrrd, .seg.nrrd): pynrrd reads the header (checked first: voxel count, type, detached data inside the
  raw folder), SimpleITK the voxels, whose (z, y, x) array is transposed to (x, y, z) = file order without
  a copy; space directions and origin become an affine (converted from LPS to RAS).
- .npy: numpy, memory-mapped.
- Header numbers that shape pixels (the scaling, pixdim, the affine's voxel sizes) pass
  preprocess.formats.headervalues: text, inf, NaN or a value beyond its sane range is bad input of the file.
- MMDental's rule reads as nibabel does (`read_nifti_canonical`): closest canonical orientation and
  `get_fdata(float32)`, whose values the reference's pixels come from; unscaled 8/16-bit integers are those
  values exactly, so they are read as above and reoriented by views, everything else by nibabel itself.
"""

from __future__ import annotations

import gzip
import os
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from preprocess.errors import RawDataError
from preprocess.formats.fsutil import is_within
from preprocess.formats.headervalues import Field, number
from preprocess.formats.rawroot import Boundary
from preprocess.formats.smallint import is_small_int

# No file holds a byte beyond this offset (a seek past it overflows): a header that puts its voxels there is
# corrupt (vox_offset 1e30), said before any read.
LARGEST_OFFSET = 2**63 - 1

SCL_SLOPE = Field("scl_slope", smallest=1e-12)  # nibabel has already made 0 (no scaling) into 1
SCL_INTER = Field("scl_inter")
# Slices are resampled to square pixels: voxel sizes that differ more than MAX_ASPECT times between axes (real
# scans: under 10) would ask for slices that many times taller, so they are a damaged header. Sizes are in the
# header's own unit (mm, m or um), hence the wide range.
MAX_ASPECT = 100
LARGEST_VOXEL = 1e6


@dataclass(frozen=True)
class Limits:
    """What a header may ask for before any voxel is read: at most `max_voxels` (None: the config's default,
    max_volume_voxels), and detached NRRD data inside `root` (None: the NRRD's own folder)."""

    max_voxels: int | None = None
    root: Path | None = None

    def voxels(self) -> int:
        if self.max_voxels is not None:
            return self.max_voxels
        from preprocess.registry.config import defaults

        return int(defaults()["max_volume_voxels"])


def _check_count(path: Path, shape, limits: Limits) -> int:
    count = int(np.prod([int(n) for n in shape], dtype=object))
    if any(int(n) < 0 for n in shape) or count > limits.voxels():
        raise RawDataError(
            f"{path}: the header claims {' x '.join(str(n) for n in shape)} = {count} voxels, more than "
            f"max_volume_voxels ({limits.voxels()}); the header is corrupt (download the file again), or raise "
            "max_volume_voxels in the config for a volume this large"
        )
    return count


def _check_dtype(path: Path, dtype: np.dtype, what: str) -> None:
    if dtype.fields is not None or dtype.kind not in "iuf":
        raise RawDataError(
            f"{path}: voxel type {what} is not supported (only gray integer or float volumes are sliced); "
            "convert the volume to one value per voxel"
        )


def _check_geometry(path: Path, affine: np.ndarray, zooms, where: str) -> None:
    """A usable geometry: a finite, invertible affine (an all-zero one would give all-white projections and no
    orientation), and sane voxel sizes, the affine's (`where` it comes from) and the header's own (zooms)."""
    linear = affine[:3, :3]
    if not np.isfinite(affine).all() or abs(np.linalg.det(linear)) < 1e-12:
        raise RawDataError(
            f"{path}: unusable geometry (affine {np.round(linear, 4).tolist()}); the header's {where} is zero or "
            "corrupt: fix the header, or leave the volume out (on_bad_input: skip)"
        )
    _check_sizes(path, np.linalg.norm(linear, axis=0), f"{where} voxel size")
    if zooms is not None:
        _check_sizes(path, zooms, "pixdim")


def _check_sizes(path: Path, values, name: str) -> None:
    """Three voxel sizes, each a positive number, and no axis more than MAX_ASPECT times another."""
    sizes = [
        number(value, path, Field(f"{name}[{axis}]", largest=LARGEST_VOXEL, positive=True))
        for axis, value in enumerate(values[:3], start=1)
    ]
    if max(sizes) > MAX_ASPECT * min(sizes):
        raise RawDataError(
            f"{path}: header voxel sizes {name} {[round(z, 6) for z in sizes]} differ more than {MAX_ASPECT} "
            "times between axes, which no scan has; the item is bad input (a damaged header): download the file "
            "again, or leave it out with on_bad_input: skip"
        )


@dataclass
class Volume:
    data: np.ndarray  # file order (i, j, k), native dtype, header scaling NOT applied
    affine: np.ndarray | None  # voxel (i, j, k, 1) -> RAS+ mm; None for arrays without geometry
    slope: float = 1.0
    inter: float = 0.0
    path: Path | None = None
    zooms: tuple[float, ...] | None = None  # the header's voxel sizes (NIfTI pixdim), when it has them

    @property
    def spacing(self) -> tuple[float, ...]:
        if self.affine is None:
            return (1.0,) * self.data.ndim
        return tuple(float(np.linalg.norm(self.affine[:3, axis])) for axis in range(3))

    @property
    def is_scaled(self) -> bool:
        return (self.slope, self.inter) != (1.0, 0.0)

    def scaled(self, array: np.ndarray) -> np.ndarray:
        """Header scaling applied to (a part of) the data, in float64 like nibabel's get_fdata."""
        if not self.is_scaled:
            return array
        return array.astype(np.float64) * self.slope + self.inter

    def float32(self, array: np.ndarray) -> np.ndarray:
        """`np.asarray(dataobj).astype(np.float32)` of the reference scripts, for (a part of) the data: nibabel
        scales in float64, the scripts then cast to float32."""
        return self.scaled(array).astype(np.float32)

    @property
    def header_zooms(self) -> tuple[float, ...]:
        """Voxel sizes as the reference scripts read them (`header.get_zooms()`), else the affine's."""
        return tuple(float(z) for z in self.zooms[:3]) if self.zooms is not None else self.spacing


def read_volume(path: Path, limits: Limits | None = None) -> Volume:
    name = path.name.lower()
    if name.endswith((".nii", ".nii.gz")):
        return read_nifti(path, limits)
    if name.endswith(".nrrd"):
        return read_nrrd(path, limits)
    if name.endswith(".npy"):
        return read_npy(path)
    raise RawDataError(f"{path}: unknown volume format (expected .nii, .nii.gz, .nrrd or .npy)")


def _squeeze_4d(data: np.ndarray, path: Path) -> np.ndarray:
    while data.ndim > 3 and data.shape[-1] == 1:
        data = data[..., 0]
    if data.ndim != 3:
        raise RawDataError(f"{path}: expected a 3D volume, got shape {data.shape}")
    return data


@dataclass(frozen=True)
class HeaderPlan:
    """How to read a NIfTI file's voxels, as nibabel reads its header."""

    shape: tuple[int, ...]
    dtype: np.dtype  # with the header's byte order
    offset: int  # of the first voxel byte
    slope: float  # 1.0 and 0.0 when the header asks for no scaling
    inter: float
    zooms: tuple[float, ...]  # pixdim of the first three axes
    affine: np.ndarray  # float64 4x4, nibabel's choice (sform, else qform, else the base affine)
    order: str = "F"  # of the voxels: NIfTI stores the first axis fastest


def _nifti_header(path: Path, limits: Limits) -> tuple[HeaderPlan, int]:
    """The header's reading plan (nibabel's) and voxel count, checked before any voxel is read."""
    header = _nibabel_header(path)
    count = _check_count(path, header.shape, limits)
    _check_geometry(path, header.affine, header.zooms, "sform/qform")
    number(header.slope, path, SCL_SLOPE)
    number(header.inter, path, SCL_INTER)
    if header.offset > LARGEST_OFFSET:
        raise RawDataError(
            f"{path}: its header puts the voxels at byte {header.offset}, beyond the end of any file; the header "
            "is corrupt, download the file again"
        )
    if not path.name.lower().endswith(".gz"):
        size, needed = os.path.getsize(path), header.offset + count * header.dtype.itemsize
        if size < needed:
            raise RawDataError(
                f"{path}: {size} bytes, its header promises {needed} (shape {header.shape}, {header.dtype}, "
                f"voxels from byte {header.offset}); the file is truncated, download it again"
            )
    return header, count


def _nibabel_header(path: Path) -> HeaderPlan:
    """nibabel's reading plan of the header: what its image proxy would read."""
    import nibabel as nib

    try:
        image = nib.load(str(path))
        dtype = np.dtype(image.header.get_data_dtype())
        _check_dtype(path, dtype, f"{dtype} ({image.header.get_value_label('datatype')})")
        proxy = image.dataobj  # nibabel's own reading plan: offset, dtype, shape, order, scaling (1, 0 if none)
        return HeaderPlan(
            shape=tuple(int(n) for n in proxy.shape),
            dtype=np.dtype(proxy.dtype),
            offset=int(proxy.offset),
            slope=float(proxy.slope),
            inter=float(proxy.inter),
            zooms=tuple(float(z) for z in image.header.get_zooms()[:3]),
            affine=np.asarray(image.affine, dtype=np.float64),
            order=proxy.order,
        )
    except RawDataError:
        raise
    except Exception as exc:  # nibabel raises many types for a damaged header (OverflowError for vox_offset inf)
        raise RawDataError(
            f"{path}: unreadable NIfTI header ({type(exc).__name__}: {exc}); the file is corrupt, download it again"
        ) from None


def read_nifti(path: Path, limits: Limits | None = None) -> Volume:
    header, count = _nifti_header(path, limits or Limits())
    data = _squeeze_4d(_nifti_voxels(path, header, count), path)
    return Volume(data, header.affine, header.slope, header.inter, path, header.zooms)


def _nifti_voxels(path: Path, header: HeaderPlan, count: int) -> np.ndarray:
    """The voxel block, one ISA-L inflate, viewed in the header's dtype and shape (no copy)."""
    from isal import igzip

    size = count * header.dtype.itemsize
    try:
        opener = igzip.open if path.name.lower().endswith(".gz") else open
        with opener(path, "rb") as handle:
            reached = handle.seek(header.offset)  # in a gzip stream: inflated and dropped, never held
            raw = handle.read(size) if reached == header.offset else b""
    except (OSError, EOFError, zlib.error, gzip.BadGzipFile) as exc:
        raise RawDataError(
            f"{path}: cannot decompress ({exc}); the file is truncated or corrupt, download it again"
        ) from None
    if reached < header.offset:
        raise RawDataError(
            f"{path}: its header puts the voxels at byte {header.offset}, the file holds {reached} bytes; the "
            "header is corrupt or the file truncated, download it again"
        )
    if len(raw) < size:
        raise RawDataError(
            f"{path}: holds {len(raw)} voxel bytes, its header promises {size} "
            f"(shape {header.shape}, {header.dtype}); the file is truncated, download it again"
        )
    return np.frombuffer(raw, dtype=header.dtype, count=count).reshape(header.shape, order=header.order)


def read_nifti_canonical(path: Path, limits: Limits | None = None) -> Volume:
    """nibabel's closest canonical (RAS) image as `get_fdata(dtype=float32)` gives it, NaN/inf -> 0, a
    singleton 4th axis dropped; header scaling is already in the values.

    Unscaled 8/16-bit integers, whose float32 values are the stored ones: the stored array, reoriented by
    views (nibabel's own orientation), with no float copy; everything else through nibabel itself."""
    header, count = _nifti_header(path, limits or Limits())
    orientation = _stored_canonical(header)
    if orientation is None:
        return _nibabel_canonical(path)
    import nibabel as nib

    data = _nifti_voxels(path, header, count)
    if data.ndim == 4:
        data = data[:, :, :, 0]
    canonical = nib.orientations.apply_orientation(data, orientation)
    affine = header.affine @ nib.orientations.inv_ornt_aff(orientation, data.shape)
    return Volume(canonical, affine, 1.0, 0.0, path)


def _stored_canonical(header: HeaderPlan) -> np.ndarray | None:
    """nibabel's closest-canonical orientation when the stored values are get_fdata's float32 values exactly
    (native 8/16-bit integers, no scaling) and the volume is 3D (or a singleton 4D); else None."""
    import nibabel as nib

    shape = header.shape
    three_d = len(shape) == 3 or (len(shape) == 4 and shape[3] == 1)
    if not (three_d and is_small_int(header.dtype) and (header.slope, header.inter) == (1.0, 0.0)):
        return None
    orientation = nib.orientations.io_orientation(header.affine)
    return orientation if np.isfinite(orientation).all() else None


def _nibabel_canonical(path: Path) -> Volume:
    import nibabel as nib

    try:
        image = nib.as_closest_canonical(nib.load(str(path)))
        data = image.get_fdata(dtype=np.float32)
    except (OSError, EOFError, zlib.error, gzip.BadGzipFile, ValueError) as exc:
        raise RawDataError(
            f"{path}: unreadable NIfTI ({type(exc).__name__}: {exc}); the file is truncated or corrupt, "
            "download it again"
        ) from None
    except Exception as exc:  # nibabel raises many types for a damaged header
        raise RawDataError(
            f"{path}: unreadable NIfTI header ({type(exc).__name__}: {exc}); download it again"
        ) from None
    data = np.nan_to_num(data, copy=False, nan=0.0, posinf=0.0, neginf=0.0)
    if data.ndim == 4 and data.shape[3] == 1:
        data = data[:, :, :, 0]
    if data.ndim != 3:
        raise RawDataError(f"{path}: expected a 3D volume, got shape {data.shape}")
    return Volume(data, np.asarray(image.affine, dtype=np.float64), 1.0, 0.0, path)


# NRRD type names (the format's spelling and its synonyms) -> numpy kind and bytes per value
_NRRD_TYPES = {
    **dict.fromkeys(("signed char", "int8", "int8_t"), "i1"),
    **dict.fromkeys(("uchar", "unsigned char", "uint8", "uint8_t"), "u1"),
    **dict.fromkeys(("short", "short int", "signed short", "signed short int", "int16", "int16_t"), "i2"),
    **dict.fromkeys(("ushort", "unsigned short", "unsigned short int", "uint16", "uint16_t"), "u2"),
    **dict.fromkeys(("int", "signed int", "int32", "int32_t"), "i4"),
    **dict.fromkeys(("uint", "unsigned int", "uint32", "uint32_t"), "u4"),
    **dict.fromkeys(("longlong", "long long", "long long int", "signed long long", "int64", "int64_t"), "i8"),
    **dict.fromkeys(("ulonglong", "unsigned long long", "unsigned long long int", "uint64", "uint64_t"), "u8"),
    "float": "f4",
    "double": "f8",
}


HEADER_LIMIT = 1 << 16  # an NRRD header longer than this is not one (attached data read as lines)


class _Lines:
    """The lines of a header block for pynrrd's read_header, counting the bytes it takes (the header's length:
    pynrrd stops after the blank line that ends it) and whether it met that blank line."""

    def __init__(self, lines: list[bytes]):
        self.lines, self.taken, self.ended = iter(lines), 0, False

    def __iter__(self):
        return self

    def __next__(self) -> bytes:
        line = next(self.lines)
        self.taken += len(line)
        self.ended = self.taken > len(line) and not line.strip()
        return line


def nrrd_header(path: Path) -> tuple[dict, int]:
    """The NRRD header fields as pynrrd reads them (keys lower-case, 'datafile' spelled 'data file') and the
    header's length in bytes. A detached header may end at the end of its file; CRLF line ends are fine."""
    import nrrd

    try:
        with open(path, "rb") as handle:
            head = handle.read(HEADER_LIMIT + 1)
    except OSError as exc:
        raise RawDataError(f"{path}: cannot read ({exc.strerror}); check the file's permissions") from None
    if not head.startswith(b"NRRD"):
        raise RawDataError(f"{path}: unreadable NRRD (no NRRD magic); the file is corrupt, download it again")
    whole = len(head) <= HEADER_LIMIT  # the block is the whole file: its last line needs no line end
    lines = head[:HEADER_LIMIT].splitlines(keepends=True)
    if not whole and lines and not lines[-1].endswith(b"\n"):
        lines.pop()  # cut by the block's end
    reader = _Lines(lines)
    try:
        fields = nrrd.read_header(reader)
    except Exception as exc:  # pynrrd raises NRRDError, and ValueError or others for a line of another shape
        raise RawDataError(
            f"{path}: unreadable NRRD header ({type(exc).__name__}: {exc}); the file is corrupt, download it again"
        ) from None
    if not (reader.ended or whole):
        raise RawDataError(
            f"{path}: unreadable NRRD (no end of header in its first {HEADER_LIMIT // 1024} KiB); the file is corrupt"
        )
    named = {key.strip().lower(): value for key, value in fields.items()}
    if "datafile" in named:
        named["data file"] = named.pop("datafile")
    return named, reader.taken


def _nrrd_data_file(path: Path, value: str, limits: Limits) -> Path:
    """The detached data file of a header, refused unless it lies inside the raw folder (symlinks resolved)."""
    if value.upper().startswith("LIST") or len(value.split()) > 1:
        raise RawDataError(f"{path}: data in several detached files ({value!r}) is not supported")
    target = (path.parent / value).resolve()
    root = (limits.root or path.parent).resolve()
    if not is_within(target, [root]):
        raise RawDataError(
            f"{path}: its 'data file' {value!r} points outside the raw folder {root} (to {target}); nothing was "
            "read from it: the header is not the published one, download the file again"
        )
    problem = Boundary(root).problem(target)  # a FIFO or a folder there would block or fail SimpleITK's read
    if problem is not None:
        raise RawDataError(f"{path}: its 'data file' {target} {problem}")
    return target


def _check_nrrd(path: Path, limits: Limits) -> None:
    """Type, voxel count, attached data size and detached data place, from the header alone."""
    fields, header_bytes = nrrd_header(path)
    kind = _NRRD_TYPES.get(str(fields.get("type", "")).lower())
    if kind is None:
        raise RawDataError(f"{path}: voxel type {fields.get('type')!r} is not supported (gray integer or float only)")
    if "sizes" not in fields:
        raise RawDataError(f"{path}: unreadable NRRD (no sizes field); the file is corrupt, download it again")
    shape = [int(n) for n in np.atleast_1d(fields["sizes"])]
    count = _check_count(path, shape, limits)
    data = _nrrd_data_file(path, fields["data file"], limits) if "data file" in fields else None
    if fields.get("encoding", "raw").lower() == "raw":
        available = os.path.getsize(data) if data is not None and data.is_file() else None
        if data is None:
            available = os.path.getsize(path) - header_bytes
        if available is not None and available < count * np.dtype(kind).itemsize:
            raise RawDataError(
                f"{path}: {available} data bytes, its header promises {count * np.dtype(kind).itemsize} "
                f"(sizes {' '.join(map(str, shape))}, {fields['type']}); the file is truncated, download it again"
            )


def read_nrrd(path: Path, limits: Limits | None = None) -> Volume:
    import SimpleITK as sitk

    _check_nrrd(path, limits or Limits())
    try:
        image = sitk.ReadImage(str(path))
    except RuntimeError as exc:
        first = str(exc).strip().splitlines()[-1] if str(exc).strip() else "unknown error"
        raise RawDataError(f"{path}: unreadable NRRD ({first}); the file is corrupt, download it again") from None
    if image.GetNumberOfComponentsPerPixel() != 1:
        raise RawDataError(f"{path}: expected one value per voxel, got {image.GetNumberOfComponentsPerPixel()}")
    array = sitk.GetArrayFromImage(image)  # (z, y, x) = reversed file order
    data = _squeeze_4d(array.transpose(tuple(reversed(range(array.ndim)))), path)
    dimension = image.GetDimension()
    direction = np.array(image.GetDirection(), dtype=np.float64).reshape(dimension, dimension)[:3, :3]
    spacing = np.array(image.GetSpacing(), dtype=np.float64)[:3]
    affine = np.eye(4)
    affine[:3, :3] = direction * spacing  # columns: voxel axes in LPS mm
    affine[:3, 3] = np.array(image.GetOrigin(), dtype=np.float64)[:3]
    affine[:2] *= -1  # LPS -> RAS
    _check_geometry(path, affine, None, "space directions")
    return Volume(data, affine, 1.0, 0.0, path)


def read_npy(path: Path) -> Volume:
    try:
        data = np.load(path, mmap_mode="r", allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise RawDataError(f"{path}: unreadable .npy ({exc}); the file is truncated or corrupt") from None
    if data.ndim != 3:
        raise RawDataError(f"{path}: expected a (slices, height, width) array, got shape {data.shape}")
    return Volume(data, None, 1.0, 0.0, path)
