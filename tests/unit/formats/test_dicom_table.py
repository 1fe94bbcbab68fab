"""DICOM to 8 bits by a table over the stored values (8/16-bit pixel data): the same bytes as the rule computed
on every pixel. The rule is restated here from the module's statement (DICOM PS3.3 C.11.2.1.2 with
truncation): rescale in float64, the first VOI window, else np.percentile 0.5/99.5 of the non-padding
pixels; 255 - x for MONOCHROME1; padding 0."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from preprocess.formats import smallint
from preprocess.formats.dicomio import read_dicom


def write(path: Path, pixels: np.ndarray, bits: int, **header) -> Path:
    from pydicom.dataset import Dataset, FileMetaDataset
    from pydicom.uid import ExplicitVRLittleEndian, generate_uid

    meta = FileMetaDataset()
    meta.TransferSyntaxUID = ExplicitVRLittleEndian
    meta.MediaStorageSOPClassUID = "1.2.840.10008.5.1.4.1.1.1.1"
    meta.MediaStorageSOPInstanceUID = generate_uid(entropy_srcs=[path.name])
    ds = Dataset()
    ds.file_meta = meta
    ds.Rows, ds.Columns = pixels.shape
    ds.SamplesPerPixel, ds.PhotometricInterpretation = 1, header.pop("photometric", "MONOCHROME2")
    allocated = pixels.dtype.itemsize * 8
    ds.BitsAllocated, ds.BitsStored, ds.HighBit = allocated, bits, bits - 1
    ds.PixelRepresentation = 1 if pixels.dtype.kind == "i" else 0
    for keyword, value in header.items():
        setattr(ds, keyword, value)
    ds.PixelData = pixels.tobytes()
    ds.save_as(str(path), enforce_file_format=True)
    return path


def rule(pixels: np.ndarray, slope=1.0, intercept=0.0, window=None, padding=None, mono1=False) -> np.ndarray:
    values = pixels.astype(np.float64) * slope + intercept
    valid = np.ones(pixels.shape, bool) if padding is None else pixels != padding
    if window is not None and window[1] >= 1:
        c, w = window
        lo, hi = c - 0.5 - (w - 1) / 2, c - 0.5 + (w - 1) / 2
    else:
        lo, hi = np.percentile(values[valid] if valid.any() else values.ravel(), [0.5, 99.5])
    out = np.zeros(values.shape) if hi <= lo else (np.clip(values, lo, hi) - lo) / (hi - lo) * 255.0
    if mono1:
        out = 255.0 - out
    out[~valid] = 0
    return out.astype(np.uint8)


RNG = np.random.default_rng(50)
U12 = RNG.integers(0, 4096, (61, 47)).astype(np.uint16)
U12[10:20, 5:9] = 4095
S16 = RNG.integers(-2000, 3000, (33, 40)).astype(np.int16)
U8 = RNG.integers(0, 256, (29, 31)).astype(np.uint8)
U32 = RNG.integers(0, 70000, (20, 18)).astype(np.uint32)
PADDED = U12.copy()
PADDED[:, :7] = 0

CASES = {
    "12-bit, no window": (U12, 12, {}, {}),
    "12-bit MONOCHROME1": (U12, 12, {"photometric": "MONOCHROME1"}, {"mono1": True}),
    "window": (U12, 12, {"WindowCenter": 2047, "WindowWidth": 1500}, {"window": (2047, 1500)}),
    "multi-valued window": (U12, 12, {"WindowCenter": [900, 40], "WindowWidth": [700, 80]}, {"window": (900, 700)}),
    "window narrower than 1": (U12, 12, {"WindowCenter": 100, "WindowWidth": 0.5}, {"window": (100, 0.5)}),
    "rescaled": (U12, 12, {"RescaleSlope": 0.37, "RescaleIntercept": -1024.3}, {"slope": 0.37, "intercept": -1024.3}),
    "negative slope": (U12, 12, {"RescaleSlope": -1.5, "RescaleIntercept": 4095}, {"slope": -1.5, "intercept": 4095}),
    "padding": (PADDED, 12, {"PixelPaddingValue": 0}, {"padding": 0}),
    "padding, MONOCHROME1": (
        PADDED,
        12,
        {"PixelPaddingValue": 0, "photometric": "MONOCHROME1"},
        {"padding": 0, "mono1": True},
    ),
    "every pixel padding": (np.full((9, 7), 5, np.uint16), 12, {"PixelPaddingValue": 5}, {"padding": 5}),
    "padding outside the data": (U12, 12, {"PixelPaddingValue": 60000}, {"padding": 60000}),
    "flat image": (np.full((9, 7), 1234, np.uint16), 12, {}, {}),
    "signed 16-bit": (S16, 16, {"RescaleIntercept": 7}, {"intercept": 7}),
    "8-bit": (U8, 8, {}, {}),
    "32-bit (computed per pixel)": (U32, 32, {"RescaleSlope": 2}, {"slope": 2}),
}


@pytest.mark.parametrize("name", list(CASES))
def test_the_table_gives_the_rules_bytes(name, tmp_path):
    pixels, bits, header, restated = CASES[name]
    image = read_dicom(write(tmp_path / "x.dcm", pixels, bits, **header))
    assert image.pixels.dtype == np.uint8 and image.pixels.shape == pixels.shape
    assert np.array_equal(image.pixels, rule(pixels, **restated))


@pytest.mark.parametrize("n", [1, 2, 3, 7, 200, 1001])
def test_float64_percentiles_from_counts_are_numpys(n):
    rng = np.random.default_rng(n)
    stored = rng.integers(-300, 300, n).astype(np.int16)
    for slope, intercept in [(1.0, 0.0), (0.1, -7.3), (3.7, 1e4)]:
        table = smallint.every_value(np.int16).astype(np.float64) * slope + intercept
        sample = smallint.Histogram.of_counts(smallint.value_counts(stored), table)
        values = stored.astype(np.float64) * slope + intercept
        for q in (0.0, 0.5, 33.3, 50.0, 99.5, 100.0):
            want = np.percentile(values, q)
            assert np.float64(sample.percentile(q)).tobytes() == np.float64(want).tobytes(), (slope, q)
