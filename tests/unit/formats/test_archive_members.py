"""Zip members no reader can take (issue 39, items 6, 9 and 11): a member with the zip "encrypted" flag, one packed
with a method no reader here inflates (Deflate64 = 9, AES = 99), and a name held twice with other bytes, in every
zip reader (SafeArchive for PMC-VQA and OmniMedVQA, the .npz reader, the scene graphs) and through `check` and
`convert`: refused, naming the archive and the member, with what to do; never "unexpected", and `check` goes on
with the other sources.

The flags and methods are patched into real zips, in the local header and in the central directory, as a zip
tool that set them would have written them."""

from __future__ import annotations

import contextlib
import re
import struct
import zipfile
from pathlib import Path

import numpy as np
import pytest
from test_header_values import Demo

from preprocess.convert.scenegraph import SceneGraphs
from preprocess.errors import RawDataError
from preprocess.formats.archive import SafeArchive, archive_problem
from preprocess.formats.npzio import NpzFile, structure_problems

ENCRYPTED = 0x1  # general purpose bit 0
DEFLATE64, AES = 9, 99
FIGURE = "figures/PMC3298543_F1.jpg"  # a figure the demo's PMC-VQA test CSV lists
SPEC = {"dims": 2, "channels": 1, "labels": 1, "counts": {"train": 2, "val": 1, "test": 2}, "size": 8}


def _central_entry(data: bytes, name: str) -> int:
    at = data.find(b"PK\x01\x02")
    while at >= 0:
        length = struct.unpack_from("<H", data, at + 28)[0]
        if data[at + 46 : at + 46 + length] == name.encode():
            return at
        at = data.find(b"PK\x01\x02", at + 4)
    raise AssertionError(f"no central directory entry for {name}")


def _patch(path: Path, name: str, flags: int = 0, method: int | None = None) -> Path:
    """Member `name` of the zip at `path` with `flags` added to its general purpose bits and its compression
    method set to `method`: in its local header (bytes 6 and 8) and its central directory entry (8 and 10)."""
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as archive:
        local = archive.getinfo(name).header_offset
    for at, flags_at, method_at in ((local, 6, 8), (_central_entry(bytes(data), name), 8, 10)):
        struct.pack_into("<H", data, at + flags_at, struct.unpack_from("<H", data, at + flags_at)[0] | flags)
        if method is not None:
            struct.pack_into("<H", data, at + method_at, method)
    path.write_bytes(bytes(data))
    return path


def _zip(path: Path, members: list[tuple[str, bytes]]) -> Path:
    twice = len({name for name, _ in members}) < len(members)  # zipfile warns of a name it writes again
    warned = pytest.warns(UserWarning, match="Duplicate name") if twice else contextlib.nullcontext()
    with warned, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members:
            archive.writestr(name, data)
    return path


def _npz(path: Path) -> Path:
    arrays = {}
    for split, count in SPEC["counts"].items():
        arrays[f"{split}_images"] = np.arange(count * 64, dtype=np.uint8).reshape(count, 8, 8)
        arrays[f"{split}_labels"] = np.zeros((count, 1), np.uint8)
    np.savez_compressed(path, **arrays)
    return path


UNREADABLE = {  # flags, method, what the message says of the member
    "encrypted flag": (ENCRYPTED, None, r"is encrypted \(the zip's encryption flag is set\)"),
    "Deflate64": (0, DEFLATE64, r"is packed with compression method 9 \(Deflate64\), which the pipeline does not"),
    "AES (method 99 alone)": (0, AES, r"is encrypted"),
}
TO_DO = r"download it again, or unpack your copy with a tool that reads it \(7-Zip: 7z x\) and pack it again"


@pytest.mark.parametrize("case", list(UNREADABLE))
def test_a_zip_member_no_reader_takes_is_refused_naming_archive_and_member(tmp_path, case):
    flags, method, said = UNREADABLE[case]
    path = _zip(tmp_path / "images.zip", [(FIGURE, b"JPEG" * 100), ("figures/b.jpg", b"B")])
    _patch(path, FIGURE, flags, method)
    archive = SafeArchive(path)
    with pytest.raises(RawDataError, match=rf"^{path}: member {FIGURE} {said}.*{TO_DO} \(zip -r, plain deflate\)"):
        archive.read(FIGURE)
    assert archive.read("figures/b.jpg") == b"B"  # the archive's other members still read
    assert re.match(rf"holds member {FIGURE}: it {said}.*; download it again$", archive_problem(path))


@pytest.mark.parametrize("case", [*UNREADABLE, "bzip2"])
def test_an_npz_member_no_reader_takes_is_refused_by_every_way_of_reading_it(tmp_path, case):
    """bzip2 is fine for zipfile, but the npz reader inflates with ISA-L: stored and deflate only."""
    flags, method, said = UNREADABLE.get(case, (0, zipfile.ZIP_BZIP2, r"is packed with compression method 12"))
    path = _patch(_npz(tmp_path / "x.npz"), "test_images.npy", flags, method)
    expected = rf"^{path}: member test_images.npy {said}.*{TO_DO} \(numpy.savez\)"
    with NpzFile(path) as archive:
        for read in (archive.info, archive.array, lambda key: list(archive.rows(key, [[0]]))):
            with pytest.raises(RawDataError, match=expected):
                read("test_images")
        assert archive.info("train_images").shape == (2, 8, 8)
    problems = structure_problems(path, SPEC)
    assert len(problems) == 1 and problems[0].startswith(f"{path}: member test_images.npy ")


def test_a_scene_graph_member_with_the_encrypted_flag_is_refused_naming_it(tmp_path):
    name = "scene_graph/abc_SceneGraph.json"
    path = _patch(_zip(tmp_path / "scene_graph.zip", [(name, b'{"objects": []}')]), name, ENCRYPTED)
    with pytest.raises(RawDataError, match=rf"^{path}: member {name} is encrypted"):
        SceneGraphs(path).read("abc")


# --- a member held twice ----------------------------------------------------------------------------------------


def test_a_member_held_twice_with_other_bytes_is_refused_and_identical_copies_are_one(tmp_path):
    twice = _zip(tmp_path / "twice.zip", [(FIGURE, b"first"), ("figures/b.jpg", b"B"), (FIGURE, b"second")])
    with pytest.raises(RawDataError, match=rf"^{twice}: member {FIGURE} is held 2 times with different bytes"):
        SafeArchive(twice).read(FIGURE)
    same = _zip(tmp_path / "same.zip", [(FIGURE, b"first"), (FIGURE, b"first")])
    assert SafeArchive(same).read(FIGURE) == b"first"


def test_a_scene_graph_held_twice_with_other_bytes_is_refused(tmp_path):
    name = "scene_graph/abc_SceneGraph.json"
    other = _zip(tmp_path / "other.zip", [(name, b'{"objects": []}'), (name, b'{"objects": [{"bbox_name": "x"}]}')])
    with pytest.raises(RawDataError, match=rf"^{other}: member {name} is held 2 times with different bytes"):
        SceneGraphs(other).read("abc")
    same = _zip(tmp_path / "same.zip", [(name, b'{"objects": []}'), (name, b'{"objects": []}')])
    assert SceneGraphs(same).read("abc") == {"objects": []}


def test_an_npz_holding_an_array_twice_is_refused_even_with_equal_bytes(tmp_path):
    """numpy writes each array once; a second copy (equal or not) is refused, never silently the last."""
    path = _npz(tmp_path / "x.npz")
    with zipfile.ZipFile(path) as archive:
        copy = archive.read("test_images.npy")
    with pytest.warns(UserWarning, match="Duplicate name"), zipfile.ZipFile(path, "a") as archive:
        archive.writestr("test_images.npy", copy)
    with NpzFile(path) as archive, pytest.raises(RawDataError, match=rf"^{path}: member test_images.npy is held 2"):
        archive.array("test_images")
    assert structure_problems(path, SPEC)[0].startswith(f"{path}: member test_images.npy is held 2 times")


# --- through the CLI --------------------------------------------------------------------------------------------


@pytest.fixture
def planted(tmp_path, demo_template) -> Demo:
    return Demo(tmp_path, demo_template)


def test_check_names_each_unreadable_archive_and_goes_on_with_the_other_sources(planted):
    """The issue's case: `check` ended with 'unexpected RuntimeError ... is encrypted' for every source. Here a
    MedMNIST npz (structure-checked), a MedSegBench npz (member list only) and a PMC-VQA zip are each named."""
    npz = _patch(planted.raw / "MedMNIST" / "bloodmnist_224.npz", "test_images.npy", ENCRYPTED)
    masks = _patch(planted.raw / "MedSegBench" / "isic2018_512.npz", "test_label.npy", method=DEFLATE64)
    images = _patch(next((planted.raw / "PMC-VQA").rglob("images.zip")), FIGURE, method=DEFLATE64)
    code, said = planted.run("check")
    assert code == 0, said[-3000:]
    assert f"{npz}: member test_images.npy is encrypted" in said
    assert f"{masks} holds member test_label.npy: it is packed with compression method 9 (Deflate64)" in said
    assert f"{images} holds member {FIGURE}: it is packed with compression method 9 (Deflate64)" in said
    rows = {line.split()[0]: line.split()[1] for line in said.splitlines() if line[:1].isalpha() and "  " in line}
    assert rows["medmnist"] == rows["medsegbench"] == "corrupt"
    assert rows["vindr_cxr"] == rows["vqa_rad"] == rows["aptos2019"] == "present"


def test_an_npz_member_of_gigabytes_is_no_bomb_to_check(tmp_path):
    """An npz is streamed (a 224 px MedMNIST split is gigabytes): check bounds no member's size in it, as it
    does a zip's."""
    path = _npz(tmp_path / "x.npz")
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as archive:
        local = archive.getinfo("test_images.npy").header_offset
    struct.pack_into("<I", data, local + 22, 3 << 30)  # the declared uncompressed size, local and central
    struct.pack_into("<I", data, _central_entry(bytes(data), "test_images.npy") + 24, 3 << 30)
    path.write_bytes(bytes(data))
    with zipfile.ZipFile(path) as archive:
        assert archive.getinfo("test_images.npy").file_size == 3 << 30
    assert archive_problem(path) is None
    assert archive_problem(path.rename(tmp_path / "x.zip")).startswith("holds member test_images.npy that declares")


def test_convert_stops_on_an_encrypted_npz_naming_it(planted):
    npz = _patch(planted.raw / "MedMNIST" / "bloodmnist_224.npz", "test_images.npy", ENCRYPTED)
    code, said = planted.run("convert", "2D_Task/BloodMNIST")
    assert code != 0 and f"{npz}: member test_images.npy is encrypted" in said, said[-3000:]
    assert not list((planted.data / "2D_Images" / "BloodMNIST").rglob("*.png"))


@pytest.mark.parametrize("case", ["Deflate64", "twice"])
def test_convert_refuses_a_pmc_figure_no_reader_takes_or_held_twice(planted, case):
    """A listed figure in a Deflate64 member, or held twice with other bytes: bad input of its item, named
    (on_bad_input: fail stops, skip counts it); the other figures are written."""
    images = next((planted.raw / "PMC-VQA").rglob("images.zip"))
    if case == "Deflate64":
        _patch(images, FIGURE, method=DEFLATE64)
        said_of_it = f"{images}: member {FIGURE} is packed with compression method 9 (Deflate64)"
    else:
        with pytest.warns(UserWarning, match="Duplicate name"), zipfile.ZipFile(images, "a") as archive:
            archive.writestr(FIGURE, b"other bytes")
        said_of_it = f"{images}: member {FIGURE} is held 2 times with different bytes"
    code, said = planted.run("convert", "2D_Task/PMC")
    assert code != 0 and said_of_it in said, said[-3000:]
    code, said = planted.run("convert", "2D_Task/PMC", on_bad_input="skip")
    assert code == 0 and said_of_it in said and "1 bad items skipped (on_bad_input: skip)" in said, said[-3000:]
    written = [p.name for p in (planted.data / "2D_Images" / "PMC").rglob("*.jpg")]
    assert written and Path(FIGURE).name not in written


def test_convert_takes_a_pmc_figure_held_twice_with_the_same_bytes(planted):
    images = next((planted.raw / "PMC-VQA").rglob("images.zip"))
    with zipfile.ZipFile(images) as archive:
        figure = archive.read(FIGURE)
    with pytest.warns(UserWarning, match="Duplicate name"), zipfile.ZipFile(images, "a") as archive:
        archive.writestr(FIGURE, figure)
    code, said = planted.run("convert", "2D_Task/PMC")
    assert code == 0, said[-3000:]
    assert next((planted.data / "2D_Images" / "PMC").rglob(Path(FIGURE).name)).read_bytes() == figure


def test_a_damaged_deflate_stream_is_named_not_unexpected(tmp_path):
    """The neighbour of an unread method: a deflate member whose bytes are damaged (zlib.error before)."""
    path = _zip(tmp_path / "images.zip", [(FIGURE, bytes(range(256)) * 400)])
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as archive:
        start = archive.getinfo(FIGURE).header_offset + 30 + len(FIGURE)
    data[start + 2 : start + 6] = b"\xff\xff\xff\xff"
    path.write_bytes(bytes(data))
    with pytest.raises(RawDataError, match=rf"^{path}: member {FIGURE} is unreadable \(.*\); download it again"):
        SafeArchive(path).read(FIGURE)
