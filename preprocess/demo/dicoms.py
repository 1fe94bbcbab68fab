"""What the fakes of the annotated-box downloads share (the dataset folders' fakes.py: VinDr-CXR, VinDr-Mammo,
Chest ImaGenome): a DICOM writer, an X-ray phantom, a text file written with its folders. Trees, file names,
headers and quirks follow /work/shared/raw-formats/2d-images.md."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from preprocess.demo import fields


def _dicom(
    path: Path,
    pixels: np.ndarray,
    photometric: str = "MONOCHROME2",
    compress=None,
    window=None,
    for_processing: bool = False,
    bits: int = 12,
) -> None:
    from pydicom.dataset import Dataset, FileMetaDataset
    from pydicom.uid import ExplicitVRLittleEndian, generate_uid

    meta = FileMetaDataset()
    meta.TransferSyntaxUID = ExplicitVRLittleEndian
    meta.MediaStorageSOPClassUID = "1.2.840.10008.5.1.4.1.1.1.1"  # digital X-ray
    meta.MediaStorageSOPInstanceUID = generate_uid(entropy_srcs=[str(path.name)])
    dataset = Dataset()
    dataset.file_meta = meta
    dataset.SOPClassUID, dataset.SOPInstanceUID = meta.MediaStorageSOPClassUID, meta.MediaStorageSOPInstanceUID
    dataset.Rows, dataset.Columns = pixels.shape
    dataset.SamplesPerPixel, dataset.PhotometricInterpretation = 1, photometric
    dataset.BitsAllocated, dataset.BitsStored, dataset.HighBit, dataset.PixelRepresentation = 16, bits, bits - 1, 0
    dataset.RescaleSlope, dataset.RescaleIntercept = 1, 0
    if window:
        dataset.WindowCenter, dataset.WindowWidth = window
    if for_processing:
        dataset.PresentationIntentType = "FOR PROCESSING"
    dataset.PixelData = pixels.astype(np.uint16).tobytes()
    if compress is not None:
        dataset.compress(compress, pixels.astype(np.uint16), generate_instance_uid=False)  # keep the demo byte-stable
    path.parent.mkdir(parents=True, exist_ok=True)
    dataset.save_as(path, enforce_file_format=True)


def xray(seed: int, shape=(96, 80)) -> np.ndarray:
    """12-bit stored values, high where X-rays were absorbed (bone), as MONOCHROME2 shows them bright."""
    rows, cols = np.mgrid[0 : shape[0], 0 : shape[1]]
    body = ((rows - shape[0] / 2) / (shape[0] * 0.45)) ** 2 + ((cols - shape[1] / 2) / (shape[1] * 0.4)) ** 2 < 1
    values = np.where(body, 1500, 200) + 100 * np.sin(rows / 7 + seed)
    values[30:40, 20:30] = 3500  # a dense finding
    return values.astype(np.uint16)


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def xray_dicom(path: Path, k: int, shape: tuple[int, int]) -> None:
    """Even items 12 bits uncompressed, odd ones 14 bits JPEG 2000 lossless (both occur upstream)."""
    from pydicom.uid import JPEG2000Lossless

    bits = 12 if k % 2 == 0 else 14
    _dicom(path, fields.xray(shape, k, bits), compress=None if k % 2 == 0 else JPEG2000Lossless, bits=bits)
