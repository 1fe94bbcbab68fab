"""Numbers read from headers (issue 39, items 4 and 12): a DICOM rescale or window, a NIfTI scaling or voxel
size, an NRRD spacing that is text, inf, NaN or beyond its sane range is bad input of its file, named with the
tag, through every reader and the CLI: never an all-black image, never a numpy RuntimeWarning, never
"unexpected". Where a standard gives a value a meaning (NIfTI scl_slope 0: no scaling), that meaning holds.

The hostile DICOMs are real files: pydicom writes a placeholder value, whose bytes are then replaced with the
hostile text (pydicom refuses to write `abc` as a decimal string)."""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import re
import shutil
import struct
import warnings
from pathlib import Path

import nibabel as nib
import numpy as np
import pytest
import yaml
from PIL import Image

from conftest import demo_values
from preprocess import cli
from preprocess.datasets.vindr_mammo.fakes import vindr_mammo_physionet
from preprocess.demo.dicoms import _dicom, xray
from preprocess.errors import RawDataError
from preprocess.formats.dicomio import read_dicom
from preprocess.volumes import io as volume_io

CXR_A, CXR_B = "0a6fd1c1a33ba8b6cafe3aa5ef0e5c9a", "9f8e7d6c5b4a39281706f5e4d3c2b1a0"  # the demo's test split
MAMMO = "2f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c"  # the physionet route's one image with findings
PLACEHOLDER = "1.23456789012345"  # 16 characters, the longest a DS value may be: room for any text below


def _with_text(path: Path, keyword: str, text: str) -> Path:
    """The DICOM at `path` with the value of `keyword` replaced by `text`, byte for byte in the file."""
    import pydicom

    dataset = pydicom.dcmread(path)
    setattr(dataset, keyword, PLACEHOLDER)
    dataset.save_as(path)
    data = path.read_bytes()
    assert data.count(PLACEHOLDER.encode()) == 1
    path.write_bytes(data.replace(PLACEHOLDER.encode(), text.encode().ljust(len(PLACEHOLDER))))
    return path


def _read_quietly(path: Path):
    """read_dicom's result or its error, and every RuntimeWarning numpy raised meanwhile."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = read_dicom(path)
        except RawDataError as exc:
            result = exc
    return result, [w for w in caught if issubclass(w.category, RuntimeWarning)]


HOSTILE_DICOM = {  # tag, text as stored, what the message says
    "RescaleSlope abc": ("RescaleSlope", "abc", r"RescaleSlope \(0028,1053\) is 'abc', not a number"),
    "RescaleSlope NaN": ("RescaleSlope", "NaN", r"RescaleSlope \(0028,1053\) is 'NaN', not a finite number"),
    "RescaleSlope inf": ("RescaleSlope", "inf", r"RescaleSlope \(0028,1053\) is 'inf', not a finite number"),
    "RescaleSlope 0": ("RescaleSlope", "0", r"RescaleSlope \(0028,1053\) is '0', outside the sane range 1e-12"),
    "RescaleIntercept -inf": ("RescaleIntercept", "-inf", r"RescaleIntercept \(0028,1052\) is '-inf', not a finite"),
    "RescaleIntercept 1e400": ("RescaleIntercept", "1e400", r"RescaleIntercept .* is '1e400', not a finite number"),
    "WindowCenter inf": ("WindowCenter", "inf", r"WindowCenter \(0028,1050\) is 'inf', not a finite number"),
    "WindowWidth inf": ("WindowWidth", "inf", r"WindowWidth \(0028,1051\) is 'inf', not a finite number"),
    "WindowWidth text": ("WindowWidth", "wide", r"WindowWidth \(0028,1051\) is 'wide', not a number"),
    "WindowCenter, second of two abc": ("WindowCenter", "2000\\abc", r"WindowCenter \(0028,1050\) is 'abc', not a"),
    "WindowWidth, first of two NaN": ("WindowWidth", "NaN\\4000", r"WindowWidth \(0028,1051\) is 'NaN', not a finite"),
    "WindowWidth 1e13": ("WindowWidth", "1e13", r"WindowWidth \S+ is '1e13', outside the sane range .* <= 1e\+12"),
}


@pytest.mark.parametrize("name", list(HOSTILE_DICOM))
def test_a_hostile_header_number_is_bad_input_named_with_file_and_tag(tmp_path, name):
    keyword, text, said = HOSTILE_DICOM[name]
    path = tmp_path / "x.dicom"
    _dicom(path, xray(1), window=([2000], [4000]))
    result, runtime_warnings = _read_quietly(_with_text(path, keyword, text))
    assert isinstance(result, RawDataError), f"decoded: {result}"
    assert re.search(rf"^{re.escape(str(path))}: header field {said}", str(result)), str(result)
    assert "bad input" in str(result) and "on_bad_input: skip" in str(result)
    assert runtime_warnings == []


def test_an_empty_tag_takes_its_default_and_good_text_values_read(tmp_path):
    """The neighbours that are not bad input: an empty RescaleSlope is no rescale, a window value with spaces
    is a number; both decode to the pixels of the plain file."""
    plain, empty, spaced = (tmp_path / f"{n}.dicom" for n in ("plain", "empty", "spaced"))
    for path in (plain, empty, spaced):
        _dicom(path, xray(1), window=([2000], [4000]))
    _with_text(empty, "RescaleSlope", "")
    _with_text(spaced, "WindowCenter", "  2000  ")
    expected = read_dicom(plain).pixels
    assert expected.max() > expected.min() + 200  # a picture, not a flat image
    for path in (empty, spaced):
        result, runtime_warnings = _read_quietly(path)
        assert np.array_equal(result.pixels, expected) and runtime_warnings == []


@pytest.mark.parametrize("bits", [0, 17])
def test_bits_stored_outside_bits_allocated_is_named(tmp_path, bits):
    import pydicom

    path = tmp_path / "bits.dicom"
    _dicom(path, xray(1))
    dataset = pydicom.dcmread(path)
    dataset.BitsStored = bits
    dataset.save_as(path)
    with pytest.raises(RawDataError, match=rf"bits.dicom: header field BitsStored \(0028,0101\) is '{bits}'"):
        read_dicom(path)


# --- through the CLI: a named, counted skip, or a stop; never a black image ------------------------------------


class Demo:
    """A demo copy to plant one fault in, converted through cli.main: the exit code and what it printed."""

    def __init__(self, tmp: Path, template: Path):
        self.tmp, self.demo = tmp, tmp / "demo"
        shutil.copytree(template, self.demo, symlinks=True)
        self.raw, self.data = self.demo / "raw", self.demo / "DATA_BASEDIR"

    def run(self, *argv: str, **config) -> tuple[int, str]:
        path = self.tmp / "config.json"
        path.write_text(json.dumps({**demo_values(self.demo), "verify_checksums": False, **config}))
        out = io.StringIO()
        with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(out):
            warnings.simplefilter("always")
            with contextlib.redirect_stderr(out):
                code = cli.main([*argv, "--config", str(path), "--results", str(self.tmp / "results")])
        text = out.getvalue()
        assert "Traceback" not in text and "unexpected" not in text, text
        assert [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)] == []
        return code, text

    def written(self, folder: str, image_id: str) -> list[Path]:
        return sorted(p for p in (self.data / folder).rglob("*.png") if image_id in p.name)


@pytest.fixture
def planted(tmp_path, demo_template) -> Demo:
    return Demo(tmp_path, demo_template)


HOSTILE_CXR = [("WindowCenter", "inf"), ("WindowWidth", "inf"), ("RescaleSlope", "NaN")]


@pytest.mark.parametrize(("keyword", "text"), HOSTILE_CXR)
def test_vindr_cxr_image_with_a_hostile_window_or_slope_is_skipped_and_counted(planted, keyword, text):
    """The issue's case: before, exit 0 with the image and its crops all black and a bare RuntimeWarning."""
    dicom = planted.raw / "vindr-cxr" / "test" / f"{CXR_A}.dicom"
    _with_text(dicom, keyword, text)
    code, said = planted.run("convert", "2D_Task/VindrCXR", on_bad_input="skip")
    assert code == 0, said[-3000:]
    assert re.search(rf"skipped \S*{CXR_A}.dicom: \S*{CXR_A}.dicom: header field {keyword} .* is '{text}'", said), said
    assert "1 bad items skipped (on_bad_input: skip)" in said
    assert planted.written("2D_Images/VindrCXR", CXR_A) == []  # no query image and no crop, black or not
    others = planted.written("2D_Images/VindrCXR", CXR_B)
    assert others and all(np.asarray(Image.open(p)).max() > 0 for p in others)


def test_vindr_cxr_hostile_header_stops_the_job_naming_the_file(planted):
    dicom = _with_text(planted.raw / "vindr-cxr" / "test" / f"{CXR_A}.dicom", "RescaleSlope", "abc")
    code, said = planted.run("convert", "2D_Task/VindrCXR")
    assert code != 0
    assert f"{dicom}: header field RescaleSlope (0028,1053) is 'abc', not a number" in said, said[-3000:]
    assert planted.written("2D_Images/VindrCXR", CXR_A) == []


def test_vindr_mammo_physionet_dicom_with_a_nan_slope_is_skipped_and_counted(planted):
    """The neighbour source: VinDr-Mammo's PhysioNet DICOMs go through the same reader."""
    raw = planted.raw / "vindr-mammo"
    vindr_mammo_physionet(raw)
    overrides = yaml.safe_load((planted.demo / "registry-overrides.yaml").read_text())
    del overrides["sources"]["vindr_mammo"]  # the registry's own physionet file list applies
    (planted.demo / "registry-overrides.yaml").write_text(yaml.safe_dump(overrides))
    dicom = _with_text(next(raw.rglob(f"{MAMMO}.dicom")), "RescaleSlope", "NaN")
    variants = {"source_variants": {"vindr_mammo": "physionet"}}
    code, said = planted.run("convert", "2D_Task/VindrMammo", **variants)
    assert code != 0 and f"{dicom}: header field RescaleSlope (0028,1053) is 'NaN'" in said, said[-3000:]
    code, said = planted.run("convert", "2D_Task/VindrMammo", on_bad_input="skip", **variants)
    assert code == 0 and "1 bad items skipped (on_bad_input: skip)" in said, said[-3000:]
    assert planted.written("2D_Images/VindrMammo", MAMMO) == []


# --- NIfTI and NRRD ---------------------------------------------------------------------------------------------

# Byte offsets in the NIfTI-1 header (nifti1.h): pixdim[1..3] float32 at 80, scl_slope at 112, scl_inter at 116.
PIXDIM, SCL_SLOPE, SCL_INTER = 80, 112, 116


def _nifti(path: Path, patches: dict[int, tuple], affine=None) -> Path:
    """A small int16 CT-like volume saved by nibabel, its header fields then overwritten (float32 at offset)."""
    voxels = (np.arange(6 * 5 * 4) * 37 % 1500 - 1000).astype(np.int16).reshape(6, 5, 4)
    nib.save(nib.Nifti1Image(voxels, np.diag([0.8, 0.8, 2.0, 1.0]) if affine is None else affine), str(path))
    data = bytearray(gzip.decompress(path.read_bytes()))
    for offset, values in patches.items():
        struct.pack_into(f"<{len(values)}f", data, offset, *values)
    path.write_bytes(gzip.compress(bytes(data)))
    return path


@pytest.mark.parametrize("slope", [0.0, float("nan"), float("inf")])
def test_nifti_slope_zero_or_not_finite_means_no_scaling(tmp_path, slope):
    """NIfTI-1: scl_slope 0 means the voxels are not scaled; a slope that is not finite is read the same way by
    nibabel and by the standard's reference library (nifti1_io.c), whose reading the benchmark's scripts share."""
    plain = volume_io.read_volume(_nifti(tmp_path / "plain.nii.gz", {}))
    volume = volume_io.read_volume(_nifti(tmp_path / "v.nii.gz", {SCL_SLOPE: (slope,), SCL_INTER: (500.0,)}))
    assert (volume.slope, volume.inter) == (1.0, 0.0)
    assert np.array_equal(volume.scaled(volume.data), plain.scaled(plain.data))


HOSTILE_NIFTI = {  # header patches, what the message says
    "scl_slope 1e30": ({SCL_SLOPE: (1e30,)}, r"header field scl_slope is '1\.00\d*e\+30', outside the sane range"),
    "scl_inter 1e20": ({SCL_SLOPE: (1.0,), SCL_INTER: (1e20,)}, r"header field scl_inter is '1\.00\d*e\+20', outside"),
    "pixdim inf": ({PIXDIM: (0.8, float("inf"), 2.0)}, r"header field pixdim\[2\] is 'inf', not a finite number"),
    "pixdim NaN": ({PIXDIM: (float("nan"), 0.8, 2.0)}, r"header field pixdim\[1\] is 'nan', not a finite number"),
    "pixdim 1e-30": ({PIXDIM: (1e-30, 0.8, 2.0)}, r"header voxel sizes pixdim \[.*\] differ more than 100 times"),
}


@pytest.mark.parametrize("name", list(HOSTILE_NIFTI))
@pytest.mark.parametrize("reader", [volume_io.read_volume, volume_io.read_nifti_canonical])
def test_a_hostile_nifti_header_number_is_named(tmp_path, name, reader):
    patches, said = HOSTILE_NIFTI[name]
    path = _nifti(tmp_path / "v.nii.gz", patches)
    with pytest.raises(RawDataError, match=rf"^{re.escape(str(path))}: {said}.*bad input"):
        reader(path)


def test_an_affine_that_stretches_one_axis_10000_times_is_named(tmp_path):
    path = _nifti(tmp_path / "v.nii.gz", {}, affine=np.diag([0.001, 1.0, 10.0, 1.0]))
    with pytest.raises(RawDataError, match=r"v.nii.gz: header voxel sizes sform/qform voxel size \[0.001, 1.0, 10.0\]"):
        volume_io.read_volume(path)


def test_an_nrrd_spacing_that_stretches_one_axis_is_named(tmp_path):
    voxels = np.zeros((4, 4, 4), np.int16)
    lines = "type: short\ndimension: 3\nsizes: 4 4 4\nspace: left-posterior-superior\n"
    lines += "space directions: (0.001,0,0) (0,1,0) (0,0,50)\nencoding: raw\nendian: little\n"
    path = tmp_path / "v.nrrd"
    path.write_bytes(b"NRRD0004\n" + lines.encode() + b"\n" + voxels.tobytes())
    with pytest.raises(RawDataError, match=r"v.nrrd: header voxel sizes space directions voxel size .* differ more"):
        volume_io.read_volume(path)


def test_ct_rate_volume_with_an_infinite_pixdim_is_skipped_and_counted(planted):
    """Through the CLI: the volume is a named, counted skip (no slices, no DRR), the others are built."""
    volume = next((planted.raw / "CT-RATE").rglob("valid_2_a_1.nii.gz"))
    data = bytearray(gzip.decompress(volume.read_bytes()))
    struct.pack_into("<f", data, PIXDIM + 4, float("inf"))
    volume.write_bytes(gzip.compress(bytes(data)))
    code, said = planted.run("convert", "3D_Task/CT_RATE")
    assert code != 0 and f"{volume}: header field pixdim[2] is 'inf', not a finite number" in said, said[-3000:]
    code, said = planted.run("convert", "3D_Task/CT_RATE", on_bad_input="skip")
    assert code == 0, said[-3000:]
    assert re.search(r"skipped \S*valid_2_a_1.nii.gz: .*pixdim\[2\] is 'inf'", said), said[-3000:]
    built = [p.name for p in (planted.data / "3D_Images" / "CT_RATE").rglob("*.png")]
    assert built and not [name for name in built if "valid_2_a_1" in name]
