"""Demo and test fakes of the downloads that annotation crops are cut from: VinDr-CXR, VinDr-Mammo, Chest
ImaGenome (on the demo's MIMIC-CXR-JPG images). The mask crops' fakes are in masks.py."""

from __future__ import annotations

from pathlib import Path

import numpy as np


def _dicom(path: Path, pixels: np.ndarray, photometric: str = "MONOCHROME2", compress=None, window=None,
           for_processing: bool = False) -> None:
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
    dataset.BitsAllocated, dataset.BitsStored, dataset.HighBit, dataset.PixelRepresentation = 16, 12, 11, 0
    dataset.RescaleSlope, dataset.RescaleIntercept = 1, 0
    if window:
        dataset.WindowCenter, dataset.WindowWidth = window
    if for_processing:
        dataset.PresentationIntentType = "FOR PROCESSING"
    dataset.PixelData = pixels.astype(np.uint16).tobytes()
    if compress is not None:
        dataset.compress(compress, pixels.astype(np.uint16))
    path.parent.mkdir(parents=True, exist_ok=True)
    dataset.save_as(path, enforce_file_format=True)


def xray(seed: int, shape=(96, 80)) -> np.ndarray:
    """12-bit stored values, high where X-rays were absorbed (bone), as MONOCHROME2 shows them bright."""
    rows, cols = np.mgrid[0 : shape[0], 0 : shape[1]]
    body = ((rows - shape[0] / 2) / (shape[0] * 0.45)) ** 2 + ((cols - shape[1] / 2) / (shape[1] * 0.4)) ** 2 < 1
    values = np.where(body, 1500, 200) + 100 * np.sin(rows / 7 + seed)
    values[30:40, 20:30] = 3500  # a dense finding
    return values.astype(np.uint16)


def vindr_cxr(base: Path) -> dict:
    from pydicom.uid import JPEG2000Lossless

    ids = ["0a6fd1c1a33ba8b6cafe3aa5ef0e5c9a", "9f8e7d6c5b4a39281706f5e4d3c2b1a0"]
    pixels = xray(1)
    _dicom(base / "test" / f"{ids[0]}.dicom", 4095 - pixels, "MONOCHROME1", window=([1900, 2000], [3800, 4000]))
    _dicom(base / "test" / f"{ids[1]}.dicom", xray(2), compress=JPEG2000Lossless)
    rows = [f"{ids[0]},Nodule/Mass,20,30,30,40", f"{ids[0]},Nodule/Mass,21,31,31,41",  # merged (IoU >= 0.5)
            f"{ids[0]},Aortic enlargement,40,10,60,30", f"{ids[1]},Cardiomegaly,10,50,70,80",
            f"{ids[1]},No finding,,,,"]
    (base / "annotations").mkdir(parents=True, exist_ok=True)
    (base / "annotations" / "annotations_test.csv").write_text(  # the test file has no rad_id
        "image_id,class_name,x_min,y_min,x_max,y_max\n" + "\n".join(rows) + "\n")
    (base / "annotations" / "image_labels_test.csv").write_text(
        f"image_id,Nodule/Mass,Other disease\n{ids[0]},1,0\n{ids[1]},0,0\n")
    classes = sorted(["Nodule/Mass", "Aortic enlargement", "Cardiomegaly"])
    crops = [f"crop/{ids[0]}_{classes.index('Nodule/Mass')}_0.png", f"crop/{ids[0]}_{classes.index('Aortic enlargement')}_0.png",
             f"crop/{ids[1]}_{classes.index('Cardiomegaly')}_0.png"]
    return {"2D_Task/VindrCXR": [f"images/{i}.png" for i in ids] + crops}


def vindr_mammo(base: Path) -> dict:
    study, images = "a1b2c3d4", ["m0001", "m0002", "m0003"]
    _dicom(base / "images" / study / "m0001.dicom", xray(3), window=([2000], [4000]))
    _dicom(base / "images" / study / "m0002.dicom", xray(4), "MONOCHROME1")
    _dicom(base / "images" / study / "m0003.dicom", xray(5), for_processing=True)
    header = "study_id,series_id,image_id,laterality,view_position,height,width,breast_birads,breast_density,"
    rows = [f"{study},s1,m0001,L,CC,96,80,BI-RADS 4,DENSITY C,\"['Mass', 'Suspicious Calcification']\",BI-RADS 4,10,20,40,50,test",
            f"{study},s1,m0002,R,MLO,96,80,BI-RADS 1,DENSITY B,\"['No Finding']\",,,,,,test",
            f"{study},s1,m0003,R,CC,96,80,BI-RADS 3,DENSITY B,\"['Mass']\",BI-RADS 3,5,5,20,20,test",
            f"{study},s1,m0002,R,MLO,96,80,BI-RADS 3,DENSITY B,\"['Mass']\",BI-RADS 3,5,5,20,20,training"]
    base.mkdir(parents=True, exist_ok=True)
    (base / "finding_annotations.csv").write_text(
        header + "finding_categories,finding_birads,xmin,ymin,xmax,ymax,split\n" + "\n".join(rows) + "\n")
    (base / "breast-level_annotations.csv").write_text(header + "split\n" + "".join(
        f"{study},s1,{i},L,CC,96,80,BI-RADS 1,DENSITY B,test\n" for i in images))
    (base / "metadata.csv").write_text("SOP Instance UID,Photometric Interpretation\n")
    return {"2D_Task/VindrMammo": ["images/m0001.png", "crop/m0001_0_0.png", "crop/m0001_1_0.png"]}


def chest_imagenome(base: Path) -> dict:
    from preprocess.demo.sources import MIMIC_IMAGES

    (base / "gold_dataset").mkdir(parents=True, exist_ok=True)
    (base / "silver_dataset").mkdir(parents=True, exist_ok=True)
    (base / "silver_dataset" / "scene_graph.zip").write_bytes(b"PK\x05\x06" + b"\x00" * 18)  # an empty zip
    regions = ["right lung", "left lung", "cardiac silhouette"]
    header = ("image_id,x1,y1,x2,y2,width,height,bbox_name,annot_id,original_x1,original_x2,original_y1,"
              "original_y2,original_width,original_height,annotator,coord224,coord_original\n")
    rows, referenced = [], []
    for n, (_, _, _, dicom) in enumerate(MIMIC_IMAGES[:2]):
        for k, region in enumerate(regions[: 2 + n]):
            x1, y1 = 2 + 3 * k, 4 + 2 * k
            rows.append(f"{dicom}.dcm,0,0,0,0,0,0,{region},{n}{k},{x1},{x1 + 12},{y1},{y1 + 15},32,32,1,,")
            referenced.append(f"gold_crop/{dicom}_{sorted(regions).index(region)}_0.png")
        referenced.append(f"{MIMIC_IMAGES[n][0]}/{MIMIC_IMAGES[n][1]}/{MIMIC_IMAGES[n][2]}/{dicom}.jpg")
    (base / "gold_dataset" / "gold_bbox_coordinate_annotations_1000images.csv").write_text(header + "\n".join(rows) + "\n")
    return {"2D_Task/ChestImagrome": referenced}


WRITERS = {
    "vindr_cxr": vindr_cxr,
    "vindr_mammo": vindr_mammo,
    "chest_imagenome": chest_imagenome,
}
