"""The .npz reader: numpy.lib.format reads each member's header, ISA-L inflates its data; what numpy writes in
either header format reads back equal, whichever way it is read, and damaged headers name the member."""

from __future__ import annotations

import io
import zipfile

import numpy as np
import pytest

from preprocess.errors import RawDataError
from preprocess.formats.npzio import NpzFile


def _npz(path, members: dict[str, bytes], compression=zipfile.ZIP_DEFLATED):
    with zipfile.ZipFile(path, "w", compression) as archive:
        for name, data in members.items():
            archive.writestr(f"{name}.npy", data)
    return path


def _npy(array: np.ndarray, version) -> bytes:
    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, array, version=version)
    return buffer.getvalue()


@pytest.mark.parametrize("version", [(1, 0), (2, 0)])
@pytest.mark.parametrize("compression", [zipfile.ZIP_DEFLATED, zipfile.ZIP_STORED])
def test_members_numpy_writes_read_back_equal_by_every_path(tmp_path, version, compression):
    images = np.arange(5 * 7 * 3, dtype=np.uint8).reshape(5, 7, 3)
    labels = np.array([[3], [1], [4], [1], [5]], dtype=">i8")
    path = _npz(tmp_path / "x.npz", {"a": _npy(images, version), "b": _npy(labels, version)}, compression)
    with NpzFile(path) as archive:
        assert archive.keys == ["a", "b"]
        assert archive.info("a").shape == (5, 7, 3) and archive.info("b").dtype == np.dtype(">i8")
        np.testing.assert_array_equal(archive.array("a"), images)
        np.testing.assert_array_equal(archive.array("b"), labels)
        (batch,) = archive.rows("a", [range(5)], block=16)
        np.testing.assert_array_equal(batch, images)
    with np.load(path) as reference:  # numpy's own loader agrees
        np.testing.assert_array_equal(reference["a"], images)


@pytest.mark.parametrize(
    ("member", "message"),
    [
        (b"\x93NUMPX\x01\x00" + b"\x00" * 120, r"x\.npz\[a\]: not a readable \.npy member"),
        (_npy(np.zeros(4, np.uint8), (1, 0))[:30], r"x\.npz\[a\]: the \.npy header is cut short"),
        (b"\x93NUMPY\x09\x00" + b"\x00" * 120, r"x\.npz\[a\]: unsupported \.npy format version 9\.0"),
    ],
)
def test_a_damaged_header_names_the_member(tmp_path, member, message):
    path = _npz(tmp_path / "x.npz", {"a": member})
    with NpzFile(path) as archive:
        for read in (lambda: archive.info("a"), lambda: archive.array("a")):
            with pytest.raises(RawDataError, match=message):
                read()
        with pytest.raises(RawDataError, match=message):
            list(archive.rows("a", [[0]]))


@pytest.mark.parametrize("version", [(1, 0), (2, 0)])
@pytest.mark.parametrize(
    "array",
    [
        np.arange(9 * 6 * 5, dtype=np.uint8).reshape(9, 6, 5),  # gray images
        (np.arange(9 * 4 * 5 * 3) * 7 % 251).astype(np.uint8).reshape(9, 4, 5, 3),  # RGB images
        np.linspace(-3, 3, 9 * 2 * 3 * 4, dtype=">f4").reshape(9, 2, 3, 4),  # 3D volumes, big-endian floats
        np.arange(9 * 2, dtype="<i8").reshape(9, 2),  # label rows
        np.arange(9, dtype=np.int16),  # one value per item
    ],
    ids=["gray", "rgb", "volumes", "labels", "flat"],
)
@pytest.mark.parametrize("compression", [zipfile.ZIP_DEFLATED, zipfile.ZIP_STORED])
def test_rows_in_batches_are_the_items_np_load_returns(tmp_path, array, version, compression):
    """Any batches of increasing indices, read through blocks far smaller than an item (so that items straddle
    the inflated blocks), equal numpy's own loader's items; the header is in format 1.0 or 2.0 as numpy wrote it."""
    member = _npy(array, version)
    assert member[6:8] == bytes(version)  # the format the case is about
    path = _npz(tmp_path / "x.npz", {"a": member}, compression)
    with np.load(path) as reference:
        expected = reference["a"]
    batches = [[0, 1], [3], [4, 6, 7], [8]]
    with NpzFile(path) as archive:
        for block in (7, 1 << 20):
            got = list(archive.rows("a", batches, block=block))
            assert [b.shape for b in got] == [(len(b), *expected.shape[1:]) for b in batches]
            for indices, batch in zip(batches, got, strict=True):
                assert batch.dtype == expected.dtype
                np.testing.assert_array_equal(batch, expected[indices])


def test_rows_of_a_damaged_member_name_it(tmp_path):
    """A member shorter than its header says, or whose bytes were changed, is named; never a short batch."""
    data = _npy(np.arange(40, dtype=np.uint8).reshape(10, 4), (1, 0))
    path = _npz(tmp_path / "short.npz", {"a": data[:-5]}, zipfile.ZIP_STORED)
    with NpzFile(path) as archive, pytest.raises(RawDataError, match=r"short\.npz\[a\]: ends before"):
        list(archive.rows("a", [[9]]))
    path = _npz(tmp_path / "long.npz", {"a": data + b"xx"}, zipfile.ZIP_STORED)
    with NpzFile(path) as archive, pytest.raises(RawDataError, match=r"long\.npz\[a\]: holds more data"):
        list(archive.rows("a", [[0]]))
    path = _npz(tmp_path / "crc.npz", {"a": data}, zipfile.ZIP_STORED)
    raw = bytearray(path.read_bytes())
    raw[raw.index(data) + len(data) - 1] ^= 1  # the last pixel changed, the CRC not
    path.write_bytes(bytes(raw))
    with NpzFile(path) as archive, pytest.raises(RawDataError, match=r"crc\.npz\[a\]: CRC mismatch"):
        list(archive.rows("a", [[0]]))
