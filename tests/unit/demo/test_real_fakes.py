"""The real-size fakes (`python -m preprocess demo DIR --real-sizes`): items at the upstream's dimensions,
dtypes, bit depths and compression, in a tree `check` accepts.

The expected values are the upstream facts, written out here (VinDr-CXR paper and /work/shared/raw-formats:
12-16 bits stored, about 2,000-3,500 px a side, uncompressed and JPEG 2000; MRNet: (slices, 256, 256) uint8;
BraTS 2023: 240x240x155 per sequence), not read from the generator.
"""

from __future__ import annotations

import numpy as np
import pytest

from preprocess.cli import main

EXPLICIT_VR_LITTLE_ENDIAN = "1.2.840.10008.1.2.1"
JPEG_2000_LOSSLESS = "1.2.840.10008.1.2.4.90"


@pytest.fixture(scope="module")
def fakes(tmp_path_factory):
    folder = tmp_path_factory.mktemp("real") / "fakes"
    code = main(["demo", str(folder), "--real-sizes", "--items", "2", "--sources", "vindr_cxr", "mrnet", "brats_men"])
    assert code == 0
    return folder


def test_vindr_cxr_dicoms_are_full_size_12_to_16_bits_uncompressed_and_jpeg2000(fakes):
    import pydicom

    paths = sorted((fakes / "raw" / "vindr-cxr" / "test").glob("*.dicom"))
    assert len(paths) == 2
    syntaxes = set()
    for path in paths:
        dataset = pydicom.dcmread(path)
        assert 2000 <= dataset.Rows <= 3500 and 2000 <= dataset.Columns <= 3500
        assert 12 <= dataset.BitsStored <= 16 and dataset.BitsAllocated == 16
        pixels = dataset.pixel_array
        assert pixels.shape == (dataset.Rows, dataset.Columns) and pixels.dtype == np.uint16
        assert len(np.unique(pixels[::16, ::16])) > 500  # not a constant or a few-level picture
        syntaxes.add(str(dataset.file_meta.TransferSyntaxUID))
    assert syntaxes == {EXPLICIT_VR_LITTLE_ENDIAN, JPEG_2000_LOSSLESS}
    rows = (fakes / "raw" / "vindr-cxr" / "annotations" / "annotations_test.csv").read_text().splitlines()
    assert {row.split(",")[0] for row in rows[1:]} == {p.stem for p in paths}  # every image has its boxes


def test_volumes_have_the_upstream_shapes_and_dtypes(fakes):
    import nibabel as nib

    npys = sorted((fakes / "raw" / "MRNet" / "MRNet-v1.0" / "valid").glob("*/*.npy"))
    assert len(npys) == 6  # two cases, three planes
    for path in npys:
        series = np.load(path)
        assert series.dtype == np.uint8 and series.shape[1:] == (256, 256) and 17 <= series.shape[0] <= 61
    sequences = sorted((fakes / "raw" / "BraTS2023-MEN").rglob("*.nii.gz"))
    assert len(sequences) == 8  # two cases, four sequences
    for path in sequences:
        image = nib.load(path)
        assert image.shape == (240, 240, 155) and image.get_data_dtype() == np.int16
        assert path.read_bytes()[:2] == b"\x1f\x8b"  # gzip
    assert np.asarray(nib.load(sequences[0]).dataobj).std() > 10


def test_check_accepts_the_generated_sources(fakes, tmp_path, capsys):
    arguments = ["check", "--config", str(fakes / "config.yaml"), "--results", str(tmp_path), "--quiet", "--strict"]
    assert main([*arguments, "--source", "vindr_cxr", "mrnet", "brats_men"]) == 0
    table = capsys.readouterr().out
    assert table.count("present") >= 3
