"""DICOM images to 8-bit arrays: decode (uncompressed, JPEG 2000, JPEG-LS, RLE through pydicom and the
pylibjpeg plug-ins), rescale, window, invert MONOCHROME1, mask padding.

8-bit mapping: the first VOI window of the header (Window Center/Width, multi-valued ones use the first),
linear as in DICOM PS3.3 C.11.2.1.2 with truncation; without a window, the 0.5th and 99.5th percentiles of
the non-padding pixels. Air comes out dark and bone bright for MONOCHROME1 and MONOCHROME2 alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from preprocess.errors import RawDataError


@dataclass
class DicomImage:
    pixels: np.ndarray  # uint8, display-ready
    for_processing: bool


def _first(value):
    if value is None:
        return None
    try:
        return float(value[0]) if hasattr(value, "__len__") and not isinstance(value, str) else float(value)
    except (TypeError, ValueError, IndexError):
        return None


def read_dicom(path: Path) -> DicomImage:
    dataset, raw = _decode(path)
    values = raw.astype(np.float64) * float(dataset.get("RescaleSlope", 1) or 1) + float(
        dataset.get("RescaleIntercept", 0) or 0
    )
    padding = dataset.get("PixelPaddingValue")
    valid = np.ones(raw.shape, bool) if padding is None else raw != padding
    scaled = _to_display(values, valid, dataset)
    if str(dataset.get("PhotometricInterpretation", "MONOCHROME2")).strip() == "MONOCHROME1":
        scaled = 255.0 - scaled
    scaled[~valid] = 0
    intent = str(dataset.get("PresentationIntentType", "")).upper()
    image_type = [str(v).upper() for v in (dataset.get("ImageType") or [])]
    for_processing = "FOR PROCESSING" in intent or "FOR PROCESSING" in " ".join(image_type)
    return DicomImage(scaled.astype(np.uint8), for_processing)


def _decode(path: Path):
    """The dataset and its one gray frame, or a RawDataError naming the file and the transfer syntax."""
    import pydicom
    from pydicom.errors import InvalidDicomError

    try:
        dataset = pydicom.dcmread(str(path))
    except (InvalidDicomError, OSError, EOFError, ValueError) as exc:
        raise RawDataError(f"{path}: not a readable DICOM file ({exc}); download it again") from None
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


def _to_display(values: np.ndarray, valid: np.ndarray, dataset) -> np.ndarray:
    """0..255 (float) through the header's first VOI window, else the 0.5-99.5 percentiles of valid pixels."""
    center, width = _first(dataset.get("WindowCenter")), _first(dataset.get("WindowWidth"))
    if center is not None and width is not None and width >= 1:
        low, high = center - 0.5 - (width - 1) / 2, center - 0.5 + (width - 1) / 2
    else:
        inside = values[valid] if valid.any() else values.ravel()
        low, high = np.percentile(inside, [0.5, 99.5])
    if high <= low:
        return np.zeros(values.shape)
    return (np.clip(values, low, high) - low) / (high - low) * 255.0
