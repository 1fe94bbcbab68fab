"""Read .npz archives (numpy's zip of .npy members) fast and with errors that name the file.

numpy's own loader inflates members with the stdlib zlib; here the deflate stream of a member is handed to
python-isal, about 2x faster on the multi-GB MedMNIST+ 224 files. Headers can be read without inflating the
arrays, so a structure check (keys, shapes, dtypes) costs milliseconds.
"""

from __future__ import annotations

import io
import mmap
import struct
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from isal import isal_zlib
from numpy.lib import format as npy_format

from preprocess.errors import RawDataError
from preprocess.formats.fsutil import open_regular

# The most an .npy header can take: numpy's loaders refuse a header over 10,000 bytes (their default
# max_header_size), after the 12-byte magic, version and length of the 2.0 format.
HEADER_BYTES = 10_012
_HEADER_READERS = {(1, 0): npy_format.read_array_header_1_0, (2, 0): npy_format.read_array_header_2_0}


@dataclass(frozen=True)
class ArrayInfo:
    shape: tuple[int, ...]
    dtype: np.dtype
    fortran_order: bool


def _array_header(head: bytes, where: str, complete: bool = True) -> tuple[ArrayInfo, int] | None:
    """The array description of an .npy header (numpy.lib.format reads it) and the header's length. When
    `complete` is False, `head` may still be short of the whole header: None then, to read on."""
    stream = io.BytesIO(head)
    try:
        version = npy_format.read_magic(stream)
        reader = _HEADER_READERS.get(version)
        if reader is None:
            raise RawDataError(f"{where}: unsupported .npy format version {version[0]}.{version[1]}")
        shape, fortran_order, dtype = reader(stream)
    except ValueError as exc:
        if not complete and len(head) < HEADER_BYTES:
            return None
        if len(head) < HEADER_BYTES and "EOF" in str(exc):
            raise RawDataError(
                f"{where}: the .npy header is cut short; the file is truncated, download it again"
            ) from None
        raise RawDataError(
            f"{where}: not a readable .npy member ({exc}); the file is corrupt, download it again"
        ) from None
    return ArrayInfo(tuple(shape), np.dtype(dtype), bool(fortran_order)), stream.tell()


def _seek_to_data(handle, entry: zipfile.ZipInfo, where: str) -> None:
    """Move past a member's local zip header to its (compressed) data."""
    handle.seek(entry.header_offset)
    local = handle.read(30)
    if len(local) < 30 or local[:4] != b"PK\x03\x04":
        raise RawDataError(f"{where}: damaged zip entry; the file is corrupt, download it again")
    name_length, extra_length = struct.unpack("<HH", local[26:30])
    handle.seek(entry.header_offset + 30 + name_length + extra_length)


class NpzFile:
    """One .npz archive: `keys`, `info(key)` from headers only, `array(key)` inflated with ISA-L."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self._handle = None
        try:
            self._handle = open_regular(self.path)  # a FIFO in its place would block a plain open forever
            self._zip = zipfile.ZipFile(self._handle)
            self._members = {
                name[:-4]: entry
                for name, entry in ((i.filename, i) for i in self._zip.infolist())
                if name.endswith(".npy")
            }
        except (zipfile.BadZipFile, OSError, EOFError) as exc:
            if self._handle is not None:
                self._handle.close()
            raise RawDataError(
                f"{self.path}: not a readable .npz archive ({exc}); the download is truncated or corrupt: "
                "delete it and download it again"
            ) from None

    def close(self) -> None:
        self._zip.close()
        self._handle.close()

    def __enter__(self) -> NpzFile:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def keys(self) -> list[str]:
        return sorted(self._members)

    def _entry(self, key: str) -> zipfile.ZipInfo:
        try:
            return self._members[key]
        except KeyError:
            raise RawDataError(f"{self.path}: no array {key!r} (it has: {', '.join(self.keys)})") from None

    def info(self, key: str) -> ArrayInfo:
        where = f"{self.path}[{key}]"
        try:
            with self._zip.open(self._entry(key)) as member:
                head = member.read(HEADER_BYTES)
        except (zipfile.BadZipFile, OSError, EOFError, zlib.error) as exc:
            raise RawDataError(f"{where}: cannot read ({exc}); the file is truncated or corrupt") from None
        return _array_header(head, where)[0]

    def array(self, key: str) -> np.ndarray:
        entry = self._entry(key)
        where = f"{self.path}[{key}]"
        raw = self._raw_member(entry, where)
        info, offset = _array_header(raw[:HEADER_BYTES], where)
        expected = int(np.prod(info.shape, dtype=np.int64)) * info.dtype.itemsize
        if len(raw) - offset != expected:
            raise RawDataError(
                f"{where}: holds {len(raw) - offset} data bytes, its header promises {expected} "
                f"(shape {info.shape}, {info.dtype}); the file is truncated or corrupt"
            )
        data = np.frombuffer(raw, dtype=info.dtype, count=expected // info.dtype.itemsize, offset=offset)
        order = "F" if info.fortran_order else "C"
        return data.reshape(info.shape, order=order)

    def inflate_into(self, key: str, progress, block: int = 1 << 20) -> np.ndarray:
        """Inflate an array into shared memory block by block, calling progress(array, bytes_ready) as it grows.

        Workers forked after the first call of progress can start on the leading items while the rest is
        still being inflated (decompression is serial; this overlaps it with the work on the items).
        """
        entry = self._entry(key)
        where = f"{self.path}[{key}]"
        info = self.info(key)
        if info.fortran_order:
            raise RawDataError(f"{where}: Fortran-ordered arrays are not supported here")
        nbytes = int(np.prod(info.shape, dtype=np.int64)) * info.dtype.itemsize
        flat = np.frombuffer(mmap.mmap(-1, max(nbytes, 1)), dtype=np.uint8, count=nbytes)
        array = flat.view(info.dtype).reshape(info.shape)
        inflater = isal_zlib.decompressobj(wbits=-15) if entry.compress_type == zipfile.ZIP_DEFLATED else None
        progress(array, 0)
        crc, filled = 0, 0
        for inflated, data in _npy_blocks(self.path, entry, inflater, block, where):
            crc = isal_zlib.crc32(inflated, crc)
            if data is None:  # still inside the .npy header
                continue
            if filled + len(data) > nbytes:
                raise RawDataError(f"{where}: holds more data than its header promises; the file is corrupt")
            flat[filled : filled + len(data)] = np.frombuffer(data, np.uint8)
            filled += len(data)
            progress(array, filled)
        if filled != nbytes or (inflater is not None and inflater.unused_data):
            raise RawDataError(f"{where}: holds {filled} data bytes, its header promises {nbytes}; the file is corrupt")
        if crc != entry.CRC:
            raise RawDataError(f"{where}: CRC mismatch; the file is corrupt, download it again")
        return array

    def _raw_member(self, entry: zipfile.ZipInfo, where: str) -> bytes:
        """The member's uncompressed bytes: ISA-L for deflate, plain read for stored members."""
        try:
            with open_regular(self.path) as handle:
                _seek_to_data(handle, entry, where)
                payload = handle.read(entry.compress_size)
        except OSError as exc:
            raise RawDataError(f"{where}: cannot read ({exc})") from None
        if len(payload) < entry.compress_size:
            raise RawDataError(f"{where}: the archive ends early; the file is truncated, download it again")
        if entry.compress_type == zipfile.ZIP_STORED:
            data = payload
        elif entry.compress_type == zipfile.ZIP_DEFLATED:
            try:
                data = isal_zlib.decompress(payload, wbits=-15)
            except isal_zlib.error as exc:
                raise RawDataError(f"{where}: corrupt deflate data ({exc}); download the file again") from None
        else:
            raise RawDataError(f"{where}: unsupported zip compression {entry.compress_type}")
        if isal_zlib.crc32(data) != entry.CRC:
            raise RawDataError(f"{where}: CRC mismatch; the file is corrupt, download it again")
        return data


SPLITS = ("train", "val", "test")


def expected_image_shape(spec: dict, count: int) -> tuple[int, ...]:
    size = spec["size"]
    shape = (count,) + (size,) * spec["dims"]
    return (*shape, 3) if spec["channels"] == 3 else shape


def _dtype_problem(dtype: np.dtype, dims: int) -> str | None:
    """What the images' dtype should be, when it is not: 2D images are written as stored (uint8); 3D slices of
    any other integer or float dtype are min-max scaled, as the benchmark's slicing script does."""
    if dtype == np.uint8 or (dims == 3 and dtype.kind in "uif"):
        return None
    return "uint8" if dims == 2 else "uint8, or an integer or float dtype"


def structure_problems(path: Path, spec: dict) -> list[str]:
    """Compare an archive's keys, shapes and dtypes with its registry description (headers only)."""
    try:
        with NpzFile(path) as archive:
            problems = []
            for split in SPLITS:
                count = spec["counts"][split]
                for key, shape in (
                    (f"{split}_images", expected_image_shape(spec, count)),
                    (f"{split}_labels", (count, spec["labels"])),
                ):
                    if key not in archive.keys:
                        problems.append(f"{path.name}: no array {key!r} (it has: {', '.join(archive.keys)})")
                        continue
                    info = archive.info(key)
                    if info.shape != shape:
                        problems.append(f"{path.name}[{key}]: shape {info.shape}, expected {shape}")
                    problem = key.endswith("_images") and _dtype_problem(info.dtype, spec["dims"])
                    if key.endswith("_labels") and info.dtype.kind not in "iub":
                        problem = "integer class indices"
                    if problem:
                        problems.append(f"{path.name}[{key}]: dtype {info.dtype}, expected {problem}")
            return problems
    except RawDataError as exc:
        return [str(exc)]


def _npy_blocks(path: Path, entry, inflater, block: int, where: str):
    """(inflated bytes, the array data among them) of one member, block by block; the data part is None
    while the .npy header is still being read."""
    header, offset = b"", None
    with open_regular(path) as handle:
        _seek_to_data(handle, entry, where)
        remaining = entry.compress_size
        while remaining > 0:
            piece = handle.read(min(block, remaining))
            if not piece:
                raise RawDataError(f"{where}: the archive ends early; the file is truncated, download it again")
            remaining -= len(piece)
            try:
                out = inflater.decompress(piece) if inflater else piece
            except isal_zlib.error as exc:
                raise RawDataError(f"{where}: corrupt deflate data ({exc}); download the file again") from None
            if offset is not None:
                yield out, out
                continue
            header += out
            parsed = _array_header(header, where, complete=remaining == 0)
            if parsed is None:
                yield out, None
                continue
            offset = parsed[1]
            yield out, header[offset:]
