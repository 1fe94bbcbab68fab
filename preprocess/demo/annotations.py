"""Demo and test fakes of the annotated-box downloads: VinDr-CXR (PhysioNet DICOMs), VinDr-Mammo (the
Mammo-CLIP PNG copy, and the PhysioNet DICOMs for the optional route), Chest ImaGenome gold boxes (on the
demo's MIMIC-CXR-JPG images). Trees, file names, headers and quirks follow /work/shared/raw-formats/2d-images.md;
where the real header is not confirmed ([I] there) the columns the benchmark's scripts read are present."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from preprocess.demo.images import encode, pattern
from preprocess.demo.mimic import MIMIC_IMAGES


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


# --- VinDr-CXR ------------------------------------------------------------------------------------------------

CXR_TEST = ["0a6fd1c1a33ba8b6cafe3aa5ef0e5c9a", "9f8e7d6c5b4a39281706f5e4d3c2b1a0"]
CXR_TRAIN = ["1b2c3d4e5f60718293a4b5c6d7e8f901"]


def vindr_cxr(base: Path) -> None:
    """Test: a MONOCHROME1 image with a two-valued window and a JPEG 2000 one; train: one image with a class
    the test split lacks (Calcification, which moves the sorted class ids). The test image's three Nodule/Mass
    boxes merge in an order that matters: the first two merge and their union goes to the END of the list."""
    from pydicom.uid import JPEG2000Lossless

    first, second = CXR_TEST
    _dicom(base / "test" / f"{first}.dicom", 4095 - xray(1), "MONOCHROME1", window=([1900, 2000], [3800, 4000]))
    _dicom(base / "test" / f"{second}.dicom", xray(2), compress=JPEG2000Lossless)
    _dicom(base / "train" / f"{CXR_TRAIN[0]}.dicom", xray(3), window=([2000], [4000]))
    test_rows = [
        f"{first},Nodule/Mass,20.4,30.9,30.2,40.7",
        f"{first},Nodule/Mass,21.0,31.0,31.8,41.0",  # IoU with the first 0.68: merged, union appended
        f"{first},Nodule/Mass,50.0,60.0,62.0,70.0",  # alone: it becomes crop 0
        f"{first},Aortic enlargement,40.0,10.0,60.0,30.0",
        f"{first},Aortic enlargement,45.7,15.2,50.9,20.8",  # inside the first: merged
        f"{second},Cardiomegaly,10.0,50.0,70.0,80.0",
        f"{second},Nodule/Mass,-3.5,2.0,8.0,9.0",  # floored at 0, grown to 28 px
        f"{second},No finding,,,,",
    ]
    train_rows = [
        f"{CXR_TRAIN[0]},R8,Calcification,12.0,14.0,30.0,33.0",
        f"{CXR_TRAIN[0]},R9,Aortic enlargement,41.0,11.0,59.0,29.0",
        f"{CXR_TRAIN[0]},R10,No finding,,,,",
    ]
    annotations = base / "annotations"
    _write(
        annotations / "annotations_test.csv",  # the test file has no rad_id
        "image_id,class_name,x_min,y_min,x_max,y_max\n" + "\n".join(test_rows) + "\n",
    )
    _write(
        annotations / "annotations_train.csv",
        "image_id,rad_id,class_name,x_min,y_min,x_max,y_max\n" + "\n".join(train_rows) + "\n",
    )
    _write(annotations / "image_labels_test.csv", f"image_id,Nodule/Mass,Other disease\n{first},1,0\n{second},1,0\n")
    _write(
        annotations / "image_labels_train.csv", f"image_id,rad_id,Calcification,Other diseases\n{CXR_TRAIN[0]},R8,1,0\n"
    )


# --- VinDr-Mammo ----------------------------------------------------------------------------------------------

# The Mammo-CLIP copy's table: PhysioNet's finding columns, then patient_id, fold and the boxes in the
# resized PNGs' pixels (column order [I]: the benchmark's script reads them by name).
MAMMO_HEADER = (
    "study_id,series_id,image_id,laterality,view_position,height,width,breast_birads,breast_density,"
    "finding_categories,finding_birads,xmin,ymin,xmax,ymax,split,patient_id,fold,"
    "resized_xmin,resized_ymin,resized_xmax,resized_ymax"
)
MAMMO_PATIENT = "4e3ac9a1d2f1b0c7e5a6d8f9b1c2d3e4"
MAMMO_IMAGES = [
    "2f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c",
    "8c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f",
    "c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8",
]


def vindr_mammo(base: Path) -> None:
    """The derived copy: 8-bit PNGs under images_png/<patient_id>/ and vindr_detection_v1_folds.csv. A row
    lists several categories (one crop each), a 'No Finding' row has no box, and a training-only category
    (Architectural Distortion) moves the sorted category ids."""
    study = "a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6"
    for n, image_id in enumerate(MAMMO_IMAGES):
        path = base / "images_png" / MAMMO_PATIENT / f"{image_id}.png"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(encode(pattern(300 + n, (120, 72), channels=1), "PNG"))
    first, second, third = MAMMO_IMAGES
    common = f"{study},s1"
    rows = [
        f"{common},{first},L,CC,3518,2800,BI-RADS 4,DENSITY C,\"['Mass', 'Suspicious Calcification']\",BI-RADS 4,"
        f"1200.5,1500.2,1800.9,2100.4,test,{MAMMO_PATIENT},0,10.6,20.2,40.9,50.5",
        f"{common},{first},L,CC,3518,2800,BI-RADS 4,DENSITY C,\"['Mass']\",BI-RADS 4,"
        f"100.0,2600.0,300.0,3000.0,test,{MAMMO_PATIENT},0,50.0,90.0,66.0,118.0",
        f"{common},{second},R,MLO,3518,2800,BI-RADS 1,DENSITY B,\"['No Finding']\",,,,,,test,{MAMMO_PATIENT},0,,,,",
        f"{common},{third},R,CC,3518,2800,BI-RADS 3,DENSITY B,\"['Architectural Distortion']\",BI-RADS 3,"
        f"400.0,400.0,900.0,900.0,training,{MAMMO_PATIENT},1,5.0,5.0,20.0,20.0",
    ]
    _write(base / "vindr_detection_v1_folds.csv", MAMMO_HEADER + "\n" + "\n".join(rows) + "\n")


def vindr_mammo_physionet(base: Path) -> None:
    """The PhysioNet download (the optional DICOM route): images/<study_id>/<image_id>.dicom and
    finding_annotations.csv; one FOR PROCESSING image, one MONOCHROME1."""
    study = "a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6"
    first, second, third = MAMMO_IMAGES
    _dicom(base / "images" / study / f"{first}.dicom", xray(3), window=([2000], [4000]))
    _dicom(base / "images" / study / f"{second}.dicom", xray(4), "MONOCHROME1")
    _dicom(base / "images" / study / f"{third}.dicom", xray(5), for_processing=True)
    header = (
        "study_id,series_id,image_id,laterality,view_position,height,width,breast_birads,breast_density,"
        "finding_categories,finding_birads,xmin,ymin,xmax,ymax,split"
    )
    rows = [
        f"{study},s1,{first},L,CC,96,80,BI-RADS 4,DENSITY C,\"['Mass', 'Suspicious Calcification']\",BI-RADS 4,"
        "10.5,20.5,40.2,50.9,test",
        f"{study},s1,{second},R,MLO,96,80,BI-RADS 1,DENSITY B,\"['No Finding']\",,,,,,test",
        f"{study},s1,{third},R,CC,96,80,BI-RADS 3,DENSITY B,\"['Mass']\",BI-RADS 3,5,5,20,20,training",
    ]
    _write(base / "finding_annotations.csv", header + "\n" + "\n".join(rows) + "\n")


# --- Chest ImaGenome ------------------------------------------------------------------------------------------

GOLD_HEADER = (
    "image_id,x1,y1,x2,y2,width,height,bbox_name,annot_id,original_x1,original_x2,original_y1,"
    "original_y2,original_width,original_height,annotator,coord224,coord_original"
)
UNPLACED = "0c0c0c0c-11111111-22222222-33333333-44444444"  # a gold image the sentences file does not list


def chest_imagenome(base: Path) -> None:
    """Gold boxes on the first two demo MIMIC-CXR-JPG images (32x32); 'right lung' is annotated twice on the
    first (the later box is the crop), one gold image is absent from the sentences file (no crop)."""
    scene_graphs(base / "silver_dataset" / "scene_graph.zip")
    boxes = [  # dicom, region, original x1, x2, y1, y2 (the file's column order)
        (MIMIC_IMAGES[0][3], "right lung", 2.7, 14.2, 4.9, 19.6),
        (MIMIC_IMAGES[0][3], "left lung", 16.0, 30.0, 3.0, 29.0),
        (MIMIC_IMAGES[0][3], "right lung", 3.0, 13.0, 5.0, 20.0),  # the same region again: this one counts
        (MIMIC_IMAGES[1][3], "cardiac silhouette", 8.0, 20.0, 8.0, 23.0),
        (MIMIC_IMAGES[1][3], "left lung", -2.0, 40.0, 1.0, 31.5),  # past the image: floored, cut at the edge
        (UNPLACED, "trachea", 10.0, 20.0, 0.0, 12.0),
    ]
    rows = [
        f"{d}.dcm,0,0,0,0,224,224,{name},{n},{x1},{x2},{y1},{y2},32,32,1,,"
        for n, (d, name, x1, x2, y1, y2) in enumerate(boxes)
    ]
    _write(
        base / "gold_dataset" / "gold_bbox_coordinate_annotations_1000images.csv",
        GOLD_HEADER + "\n" + "\n".join(rows) + "\n",
    )
    sentences = ["patient_id\tstudy_id\timage_id\tsentence"]  # [I]: the columns the script reads, tab-separated
    for _, patient, study, dicom in MIMIC_IMAGES[:2]:
        for sentence in ("Lungs are clear.", "Heart size is normal."):
            sentences.append(f"{patient[1:]}\t{study[1:]}\t{dicom}.dcm\t{sentence}")
    _write(base / "gold_dataset" / "gold_all_sentences_500pts_1000studies.txt", "\n".join(sentences) + "\n")


# Silver scene graphs of the first and third demo MIMIC-CXR-JPG images (32x32); the second has none. Regions
# with a box: cardiac silhouette, left lung, right lung (class ids 0, 1, 2); trachea is located in neither.
SILVER_OBJECTS = {
    0: [
        ("right lung", (2, 5, 14, 20)),
        ("left lung", (16.0, 3.0, 30.0, 29.0)),
        ("trachea", (None, None, None, None)),  # a region the graph names without a box
        ("right lung", (3, 4, 12, 21)),  # the same region again: the later object counts
    ],
    2: [
        ("cardiac silhouette", (8, 8, 20, 23)),
        ("left lung", (-2, 1, 40, 31)),  # past the image: floored, cut at the edge
    ],
}


def scene_graphs(path: Path) -> None:
    """scene_graph.zip as PhysioNet ships it: one <dicom_id>_SceneGraph.json per image under scene_graph/."""
    import json
    import zipfile

    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for number, objects in SILVER_OBJECTS.items():
            _, patient, study, dicom = MIMIC_IMAGES[number]
            graph = {
                "image_id": dicom,
                "viewpoint": "PA",
                "patient_id": int(patient[1:]),
                "study_id": int(study[1:]),
                "gender": "F",
                "age_decile": "50-60",
                "reason_for_exam": "___F with chest pain",
                "StudyOrder": 1,
                "StudyDateTime": "2180-05-06 22:00:00",
                "objects": [_scene_object(dicom, name, box) for name, box in objects],
                "attributes": [],
                "relationships": [],
            }
            member = zipfile.ZipInfo(f"scene_graph/{dicom}_SceneGraph.json", date_time=(2021, 7, 1, 0, 0, 0))
            archive.writestr(member, json.dumps(graph, indent=2), zipfile.ZIP_DEFLATED)


def _scene_object(dicom: str, name: str, box) -> dict:
    x1, y1, x2, y2 = box
    scaled = [None if v is None else round(v * 7) for v in box]  # the 224 x 224 copy's box
    return {
        "object_id": f"{dicom}_{name}",
        "x1": scaled[0],
        "y1": scaled[1],
        "x2": scaled[2],
        "y2": scaled[3],
        "width": None if x1 is None else scaled[2] - scaled[0],
        "height": None if y1 is None else scaled[3] - scaled[1],
        "bbox_name": name,
        "synsets": ["C0225730"],
        "name": name.capitalize(),
        "original_x1": x1,
        "original_y1": y1,
        "original_x2": x2,
        "original_y2": y2,
        "original_width": 32,
        "original_height": 32,
    }


WRITERS = {
    "vindr_cxr": vindr_cxr,
    "vindr_mammo": vindr_mammo,
    "chest_imagenome": chest_imagenome,
}
