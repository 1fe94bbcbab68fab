"""Read .npz archives (numpy's zip of .npy members) fast and with errors that name the file.

numpy's own loader inflates members with the stdlib zlib; here the deflate stream of a member is handed to
python-isal, about 2x faster on the multi-GB MedMNIST+ 224 files. Headers can be read without inflating the
arrays, so a structure check (keys, shapes, dtypes) costs milliseconds. `rows` reads the items of an array in
batches, in one pass over the member, so that a job's memory does not grow with the size of the split.
"""

from __future__ import annotations

import io
import math
import struct
import zipfile
import zlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from isal import isal_zlib
from numpy.lib import format as npy_format

from preprocess.errors import RawDataError
from preprocess.formats.archive import NPZ_METHODS, check_readable, copies_by_name
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
            copies = copies_by_name(self._zip.infolist())
            self._members = {name[:-4]: entries for name, entries in copies.items() if name.endswith(".npy")}
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
        """The member of an array, checked as every reader here needs it: held once (numpy writes each array
        once; which copy would be meant cannot be told), not encrypted, stored or deflated."""
        copies = self._members.get(key)
        if copies is None:
            raise RawDataError(f"{self.path}: no array {key!r} (it has: {', '.join(self.keys)})")
        if len(copies) > 1:
            raise RawDataError(
                f"{self.path}: member {key}.npy is held {len(copies)} times (numpy writes each array once): the "
                "file is not the published one, download it again"
            )
        check_readable(self.path, copies[0], NPZ_METHODS)
        return copies[0]

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

    def rows(self, key: str, batches: Iterable[Sequence[int]], block: int = 1 << 20) -> Iterator[np.ndarray]:
        """For each batch of item indices (axis 0, increasing across and within the batches), an array of those
        items, read in one pass over the member's stream with ISA-L: memory holds one batch and one inflated
        block, never the whole array (a 224 px MedMNIST split is gigabytes). Items between the batches' are
        inflated and dropped. After the last batch the rest of the member is read too, so that its length and
        CRC are checked as `array` checks them."""
        entry = self._entry(key)
        where = f"{self.path}[{key}]"
        pieces = _member_pieces(self.path, entry, block, where)
        info, after_header = _stream_header(pieces, where)
        if info.fortran_order and len(info.shape) > 1:
            raise RawDataError(f"{where}: a Fortran-ordered array cannot be read item by item; re-save it C-ordered")
        item_shape = info.shape[1:]
        item_bytes = int(np.prod(item_shape, dtype=np.int64)) * info.dtype.itemsize
        stream = _Bytes(after_header, pieces)
        position = 0  # the item at the stream's current place
        for batch in batches:
            out = np.empty((len(batch), *item_shape), info.dtype)
            flat = out.reshape(len(batch), int(np.prod(item_shape, dtype=np.int64))).view(np.uint8)
            for k, first, count in _runs(batch):  # consecutive items are copied in one go
                if not position <= first <= first + count <= info.shape[0]:
                    raise ValueError(f"{where}: item {first} asked for after item {position - 1} or past the end")
                if not stream.skip((first - position) * item_bytes) or not stream.read_into(flat[k : k + count]):
                    last = f"item {first + count - 1} of {info.shape[0]}"
                    raise RawDataError(f"{where}: ends before {last}; the file is truncated, download it again")
                position = first + count
            yield out
        if not stream.skip((info.shape[0] - position) * item_bytes):
            raise RawDataError(f"{where}: ends before its last item; the file is truncated or corrupt")
        if not stream.at_end():
            raise RawDataError(f"{where}: holds more data than its header promises; the file is corrupt")

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
        if entry.compress_type == zipfile.ZIP_STORED:  # the only other method _entry lets through is deflate
            data = payload
        else:
            try:
                data = isal_zlib.decompress(payload, wbits=-15)
            except isal_zlib.error as exc:
                raise RawDataError(f"{where}: corrupt deflate data ({exc}); download the file again") from None
        if isal_zlib.crc32(data) != entry.CRC:
            raise RawDataError(f"{where}: CRC mismatch; the file is corrupt, download it again")
        return data


SPLITS = ("train", "val", "test")


def expected_image_shape(spec: dict, count: int) -> tuple[int, ...]:
    size = spec["size"]
    shape = (count,) + (size,) * spec["dims"]
    return (*shape, 3) if spec["channels"] == 3 else shape


def largest_bytes(spec: dict) -> int:
    """The most bytes an .npz of this registry description can take: each array at the widest dtype the
    structure check accepts (2D images uint8; 3D volumes up to 8 bytes a voxel; labels up to 8 bytes), an .npy
    header and a zip entry each, and 1% for deflate's worst case (stored blocks: 5 bytes in 64 KiB). A download
    larger than this is not the file the registry describes: its structure check would refuse it."""
    voxel = 1 if spec["dims"] == 2 else 8
    arrays = sum(
        math.prod(expected_image_shape(spec, count)) * voxel + count * spec["labels"] * 8
        for count in spec["counts"].values()
    )
    return arrays + arrays // 100 + 2 * len(spec["counts"]) * (HEADER_BYTES + 1024) + (1 << 20)


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


def _runs(indices: Sequence[int]) -> Iterator[tuple[int, int, int]]:
    """(position in `indices`, first index, count) of each run of consecutive indices."""
    start = 0
    for k in range(1, len(indices) + 1):
        if k == len(indices) or indices[k] != indices[k - 1] + 1:
            yield start, indices[start], k - start
            start = k


def _member_pieces(path: Path, entry: zipfile.ZipInfo, block: int, where: str) -> Iterator[bytes]:
    """A member's uncompressed bytes in pieces of at most `block` (deflate inflated by ISA-L, stored read as
    is; `entry` from NpzFile._entry, stored or deflated); its CRC is checked after the last piece."""
    inflater = isal_zlib.decompressobj(wbits=-15) if entry.compress_type == zipfile.ZIP_DEFLATED else None
    crc, tail = 0, b""
    try:
        with open_regular(path) as handle:
            _seek_to_data(handle, entry, where)
            remaining = entry.compress_size
            while True:
                if not tail and remaining > 0:
                    tail = handle.read(min(block, remaining))
                    if not tail:
                        raise RawDataError(f"{where}: the archive ends early; the file is truncated, download it again")
                    remaining -= len(tail)
                if inflater is None:
                    out, tail = tail, b""
                else:  # max_length bounds each piece, however well the data compresses
                    out = inflater.decompress(tail, block)
                    tail = inflater.unconsumed_tail
                if not out and not tail and remaining == 0:
                    break
                crc = isal_zlib.crc32(out, crc)
                yield out
    except OSError as exc:
        raise RawDataError(f"{where}: cannot read ({exc})") from None
    except isal_zlib.error as exc:
        raise RawDataError(f"{where}: corrupt deflate data ({exc}); download the file again") from None
    if inflater is not None and (not inflater.eof or inflater.unused_data):
        raise RawDataError(f"{where}: the deflate stream is cut short or followed by junk; the file is corrupt")
    if crc != entry.CRC:
        raise RawDataError(f"{where}: CRC mismatch; the file is corrupt, download it again")


def _stream_header(pieces: Iterator[bytes], where: str) -> tuple[ArrayInfo, bytes]:
    """The array description at the start of a member's pieces, and the data bytes that followed it."""
    head = b""
    for piece in pieces:
        head += piece
        parsed = _array_header(head[:HEADER_BYTES], where, complete=False)
        if parsed is not None:
            return parsed[0], head[parsed[1] :]
    parsed = _array_header(head, where)  # the member ended inside its header: this names the problem
    return parsed[0], head[parsed[1] :]


class _Bytes:
    """A forward-only reader over pieces of bytes: skip n bytes, or fill a buffer (False: the pieces ran out)."""

    def __init__(self, first: bytes, pieces: Iterator[bytes]):
        self._view, self._at, self._pieces = memoryview(first), 0, pieces

    def _available(self) -> int:
        while self._at == len(self._view):
            piece = next(self._pieces, None)
            if piece is None:
                return 0
            self._view, self._at = memoryview(piece), 0
        return len(self._view) - self._at

    def skip(self, count: int) -> bool:
        while count > 0:
            step = min(count, self._available())
            if step == 0:
                return False
            self._at += step
            count -= step
        return True

    def at_end(self) -> bool:
        return self._available() == 0

    def read_into(self, target: np.ndarray) -> bool:
        target, filled = memoryview(target).cast("B"), 0
        while filled < len(target):
            step = min(len(target) - filled, self._available())
            if step == 0:
                return False
            target[filled : filled + step] = self._view[self._at : self._at + step]
            self._at += step
            filled += step
        return True
