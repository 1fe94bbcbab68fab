"""Helpers of the bad-input tests (tests/*/test_bad_*.py): small raw files and task JSONs, the corpus's
runner, and a demo copy to plant one fault in and convert (Planted)."""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from conftest import demo_values
from preprocess import cli


def _nifti_with(tmp: Path, name: str, patch) -> Path:
    """A small CT phantom saved as `name`, its 348-byte header changed by patch(nibabel header)."""
    import nibabel as nib

    header = nib.Nifti1Header()
    header.set_data_dtype(np.int16)
    header.set_data_shape((6, 6, 6))
    header.set_sform(np.diag([0.8, 0.8, 2.0, 1.0]), code=1)
    patch(header)
    nib.save(nib.Nifti1Image(np.ones((6, 6, 6), np.int16), None, header=header), tmp / name)
    return tmp / name


def _claim_dims(path: Path, dims=(32767, 32767, 32767)) -> Path:
    """The saved file's header rewritten to claim `dims` voxels (dim[1..3] are int16 at byte 42)."""
    import struct

    packed = path.name.endswith(".gz")
    data = bytearray(gzip.decompress(path.read_bytes()) if packed else path.read_bytes())
    data[42:48] = struct.pack("<3h", *dims)
    path.write_bytes(gzip.compress(bytes(data)) if packed else bytes(data))
    return path


def _zero_geometry(header) -> None:
    header["qform_code"] = 0
    for key in ("srow_x", "srow_y", "srow_z"):
        header[key] = 0


def _bmp(width: int, height: int) -> bytes:
    """A 24-bit BMP header claiming width x height pixels, with 16 bytes of pixels (a decompression bomb)."""
    import struct

    info = struct.pack("<IiiHHIIiiII", 40, width, height, 1, 24, 0, 0, 2835, 2835, 0, 0)
    return b"BM" + struct.pack("<IHHI", 54 + 16, 0, 0, 54) + info + b"\0" * 16


def _snapshot(base: Path, allowed: tuple[str, ...]) -> dict:
    return {
        str(p.relative_to(base)): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in base.rglob("*")
        if p.is_file() and p.relative_to(base).parts[0] not in allowed
    }


def _tree(base: Path, skip: tuple[Path, ...]) -> dict:
    """Every entry under base (but the skipped folders): size, mtime and mode; links by their target."""
    found = {}
    for root, folders, names in os.walk(base):
        folders[:] = [f for f in folders if Path(root, f) not in skip]
        for name in names + folders:
            path = Path(root, name)
            info = path.lstat()
            target = os.readlink(path) if path.is_symlink() else None
            found[str(path.relative_to(base))] = (info.st_size, info.st_mtime_ns, info.st_mode, target)
    return found


class Planted:
    """A demo copy under tmp to plant one fault in (`raw`), then `convert` it through cli.main: the exit code,
    the printed text, and a check that nothing but DATA_BASEDIR and results changed under tmp."""

    def __init__(self, tmp: Path, template: Path):
        self.tmp, self.demo = tmp, tmp / "demo"
        shutil.copytree(template, self.demo, symlinks=True)
        self.raw, self.data = self.demo / "raw", self.demo / "DATA_BASEDIR"
        self.results = tmp / "results"

    def convert(self, subset: str, *extra: str, **config) -> tuple[int, str]:
        values = {**demo_values(self.demo), "verify_checksums": False, **config}
        config_file = self.tmp / "config.json"
        config_file.write_text(json.dumps(values))
        skip = (self.data, self.results)
        before = _tree(self.tmp, skip)
        argv = ["convert", subset, "--config", str(config_file), "--results", str(self.results), *extra]
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            code = cli.main(argv)
        assert _tree(self.tmp, skip) == before, "something outside DATA_BASEDIR and results changed"
        text = out.getvalue()
        assert "Traceback" not in text, text
        return code, text


def _edit_npz(path: Path, key: str, change) -> None:
    with np.load(path) as archive:
        arrays = {name: archive[name] for name in archive}
    arrays[key] = change(arrays[key])
    np.savez_compressed(path, **arrays)


def _set_label(row: int, value, dtype=np.int64):
    def change(labels):
        labels = labels.astype(dtype)
        labels[row] = value
        return labels

    return change


BLOOD = "MedMNIST/bloodmnist_224.npz"


def run_case(tmp_path: Path, action, expected) -> None:
    """One corpus case: the action run in tmp/work, its error (exception, message pattern) or its result's check,
    and nothing changed in tmp outside work/ and results/."""
    work = tmp_path / "work"
    work.mkdir()
    results = tmp_path / "results"
    results.mkdir()
    (tmp_path / "bystander.txt").write_text("must not change")
    outside = _snapshot(tmp_path, ("work", "results"))
    if isinstance(expected, tuple):
        with pytest.raises(expected[0], match=expected[1]):
            action(work)
    else:
        assert expected(action(work))
    assert _snapshot(tmp_path, ("work", "results")) == outside
