"""DICOM images to 8-bit arrays: decode (uncompressed, JPEG 2000, JPEG-LS, RLE through pydicom and the
pylibjpeg plug-ins), rescale, window, invert MONOCHROME1, mask padding.

8-bit mapping: the first VOI window of the header (Window Center/Width, multi-valued ones use the first),
linear as in DICOM PS3.3 C.11.2.1.2 with truncation; without a window, or with one narrower than 1 (which the
standard does not allow), the 0.5th and 99.5th percentiles of the non-padding pixels. Air comes out dark and
bone bright for MONOCHROME1 and MONOCHROME2 alike.

Every number taken from the header passes preprocess.formats.headervalues first: a rescale, window, padding
or bit depth that is text, inf, NaN or beyond its sane range makes the file bad input, named with the tag.
An absent or empty tag takes its default (no rescale, no window).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from preprocess.errors import RawDataError
from preprocess.formats.headervalues import Field, bad_value, number, numbers_of
from preprocess.formats.smallint import Histogram, apply_lut, every_value, is_small_int, value_counts

RESCALE_SLOPE = Field("RescaleSlope (0028,1053)", smallest=1e-12)  # 0 would flatten every pixel to one value
RESCALE_INTERCEPT = Field("RescaleIntercept (0028,1052)")
WINDOW_CENTER = Field("WindowCenter (0028,1050)")
WINDOW_WIDTH = Field("WindowWidth (0028,1051)")
PIXEL_PADDING = Field("PixelPaddingValue (0028,0120)", largest=2**32, integer=True)
BITS_ALLOCATED = Field("BitsAllocated (0028,0100)", largest=64, positive=True, integer=True)


@dataclass
class DicomImage:
    pixels: np.ndarray  # uint8, display-ready
    for_processing: bool


def _present(dataset, keyword: str, path: Path, field: Field):
    """The tag's value as pydicom gives it (a number, a list, or the text of a value it could not convert), or
    None when it is absent or empty."""
    try:
        value = dataset.get(keyword)
    except Exception as exc:  # pydicom converts a value on first access, and raises by VR what it cannot
        raise bad_value(path, field, "?", f"unreadable ({type(exc).__name__}: {exc})") from None
    return None if value is None or value == "" else value


def _value(dataset, keyword: str, path: Path, field: Field, default: float) -> float:
    value = _present(dataset, keyword, path, field)
    return default if value is None else number(value, path, field)


def _bits(dataset, path: Path) -> None:
    """Bits Allocated and Bits Stored as numbers the decoder can take (pydicom would refuse them too, later,
    in a message about the pixel data)."""
    allocated = _value(dataset, "BitsAllocated", path, BITS_ALLOCATED, 16)
    stored = Field("BitsStored (0028,0101)", largest=allocated, positive=True, integer=True)
    _value(dataset, "BitsStored", path, stored, allocated)


def read_dicom(path: Path) -> DicomImage:
    dataset, raw = _decode(path)
    slope = _value(dataset, "RescaleSlope", path, RESCALE_SLOPE, 1.0)
    rule = _Rule(
        slope,
        _value(dataset, "RescaleIntercept", path, RESCALE_INTERCEPT, 0.0),
        _padding(dataset, path),
        _window(dataset, path),
        str(dataset.get("PhotometricInterpretation", "MONOCHROME2")).strip() == "MONOCHROME1",
    )
    pixels = _by_table(raw, rule) if is_small_int(raw.dtype) else rule.to_uint8(raw, rule.bounds_of_pixels(raw))
    intent = str(dataset.get("PresentationIntentType", "")).upper()
    image_type = [str(v).upper() for v in (dataset.get("ImageType") or [])]
    for_processing = "FOR PROCESSING" in intent or "FOR PROCESSING" in " ".join(image_type)
    return DicomImage(pixels, for_processing)


@dataclass(frozen=True)
class _Rule:
    """The header's mapping of stored values to 8 bits, applied to pixels or to a table of every stored value."""

    slope: float
    intercept: float
    padding: float | None
    window: tuple[float, float] | None
    invert: bool  # MONOCHROME1

    def rescaled(self, stored: np.ndarray) -> np.ndarray:
        return stored.astype(np.float64) * self.slope + self.intercept

    def padded(self, stored: np.ndarray) -> np.ndarray | None:
        return None if self.padding is None else stored == self.padding

    def bounds_of_pixels(self, raw: np.ndarray) -> tuple[float, float]:
        """The window's bounds, else the 0.5th and 99.5th percentiles of the rescaled non-padding pixels."""
        if self.window is not None:
            return _window_bounds(self.window)
        values, padded = self.rescaled(raw), self.padded(raw)
        inside = values[~padded] if padded is not None and not padded.all() else values.ravel()
        low, high = np.percentile(inside, [0.5, 99.5])
        return float(low), float(high)

    def to_uint8(self, stored: np.ndarray, bounds: tuple[float, float]) -> np.ndarray:
        """0..255 in float64 between the bounds (all 0 when they do not increase), truncated; MONOCHROME1
        inverted; padding 0."""
        low, high = bounds
        values = self.rescaled(stored)
        scaled = np.zeros(values.shape) if high <= low else (np.clip(values, low, high) - low) / (high - low) * 255.0
        if self.invert:
            scaled = 255.0 - scaled
        padded = self.padded(stored)
        if padded is not None:
            scaled[padded] = 0
        return scaled.astype(np.uint8)


def _by_table(raw: np.ndarray, rule: _Rule) -> np.ndarray:
    """The rule on every value of an 8/16-bit dtype, looked up per pixel: the same bytes as computing it on the
    pixels, the percentiles read from the pixels' value counts (a linear rescaling keeps their order or
    reverses it)."""
    stored = every_value(raw.dtype)
    if rule.window is not None:
        bounds = _window_bounds(rule.window)
    else:
        counts = value_counts(raw)
        padded = rule.padded(stored)
        if padded is not None and counts[~padded].any():
            counts[padded] = 0
        table = rule.rescaled(stored)
        # a negative slope (the header check allows one) reverses the order of the rescaled values
        order = slice(None, None, -1 if rule.slope < 0 else 1)
        sample = Histogram.of_counts(counts[order], table[order])
        bounds = sample.percentile(0.5), sample.percentile(99.5)
    return apply_lut(rule.to_uint8(stored, bounds), raw)


def _window_bounds(window: tuple[float, float]) -> tuple[float, float]:
    """DICOM PS3.3 C.11.2.1.2's linear function: the values mapped to 0 and to 255."""
    center, width = window
    return center - 0.5 - (width - 1) / 2, center - 0.5 + (width - 1) / 2


def _padding(dataset, path: Path) -> float | None:
    padding = _present(dataset, "PixelPaddingValue", path, PIXEL_PADDING)
    return None if padding is None else number(padding, path, PIXEL_PADDING)


def _decode(path: Path):
    """The dataset and its one gray frame, or a RawDataError naming the file and the transfer syntax."""
    import pydicom
    from pydicom.errors import InvalidDicomError

    try:
        dataset = pydicom.dcmread(str(path))
    except (InvalidDicomError, OSError, EOFError, ValueError) as exc:
        raise RawDataError(f"{path}: not a readable DICOM file ({exc}); download it again") from None
    _bits(dataset, path)
    syntax = dataset.file_meta.get("TransferSyntaxUID", "unknown") if hasattr(dataset, "file_meta") else "unknown"
    try:
        raw = dataset.pixel_array
    except Exception as exc:  # pydicom raises ValueError, RuntimeError, NotImplementedError ... by codec
        name = getattr(syntax, "name", str(syntax))
        raise RawDataError(
            f"{path}: pixel data cannot be decoded (transfer syntax {name}: {type(exc).__name__}: {exc}); "
            "the file is truncated or uses a compression none of pydicom's installed decoders reads"
        ) from None
    if raw.ndim != 2:
        raise RawDataError(f"{path}: expected one grayscale frame, got pixel array of shape {raw.shape}")
    return dataset, raw


def _window(dataset, path: Path) -> tuple[float, float] | None:
    """The first (center, width) of the header's VOI windows, every value checked; None without a window."""
    centers = _present(dataset, "WindowCenter", path, WINDOW_CENTER)
    widths = _present(dataset, "WindowWidth", path, WINDOW_WIDTH)
    if centers is None or widths is None:
        return None
    center, width = numbers_of(centers, path, WINDOW_CENTER)[0], numbers_of(widths, path, WINDOW_WIDTH)[0]
    return (center, width) if width >= 1 else None
