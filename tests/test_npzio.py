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
        seen = []
        grown = archive.inflate_into("a", lambda array, ready: seen.append(ready), block=16)
        np.testing.assert_array_equal(grown, images)
        assert seen[0] == 0 and seen[-1] == images.nbytes
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
            archive.inflate_into("a", lambda array, ready: None)
