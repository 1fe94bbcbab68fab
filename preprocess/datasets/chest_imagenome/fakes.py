"""Chest ImaGenome 1.0.0: the demo's tiny copy of its download (`demo`) and real-size items (`real_size`, `SIZE`,
`REAL_SEED`); preprocess/demo/folders.py finds them."""

from __future__ import annotations

import json
from pathlib import Path

from preprocess.datasets.mimic_cxr_jpg.fakes import MIMIC_IMAGES, MIMIC_SHAPE, mimic_images
from preprocess.demo import dicoms, fields
from preprocess.demo.files import put
from preprocess.demo.real_sizes import Size

GOLD_HEADER = (
    "image_id,x1,y1,x2,y2,width,height,bbox_name,annot_id,original_x1,original_x2,original_y1,"
    "original_y2,original_width,original_height,annotator,coord224,coord_original"
)


UNPLACED = "0c0c0c0c-11111111-22222222-33333333-44444444"  # a gold image the sentences file does not list


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


def demo(base: Path) -> None:
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
    dicoms._write(
        base / "gold_dataset" / "gold_bbox_coordinate_annotations_1000images.csv",
        GOLD_HEADER + "\n" + "\n".join(rows) + "\n",
    )
    sentences = ["patient_id\tstudy_id\timage_id\tsentence"]  # [I]: the columns the script reads, tab-separated
    for _, patient, study, dicom in MIMIC_IMAGES[:2]:
        for sentence in ("Lungs are clear.", "Heart size is normal."):
            sentences.append(f"{patient[1:]}\t{study[1:]}\t{dicom}.dcm\t{sentence}")
    dicoms._write(base / "gold_dataset" / "gold_all_sentences_500pts_1000studies.txt", "\n".join(sentences) + "\n")


# --- real size ----------------------------------------------------------------------------------------------

SIZE = Size(
    "gold CSV (10 boxes per image), scene_graph.zip of one JSON per image (10 objects), on the MIMIC images",
    "Chest ImaGenome 1.0.0 (PhysioNet): 1,000 gold images, about 240k silver scene graphs; 2d-images.md 7",
)
REAL_SEED = 0  # the run's own: Chest ImaGenome's boxes lie on the images MIMIC-CXR-JPG writes with it


REAL_ITEMS_OF = "mimic_cxr_jpg"  # as many items as the MIMIC images its boxes lie on


REGIONS = [
    "right lung", "left lung", "cardiac silhouette", "trachea", "right hilar structures", "left hilar structures",
    "mediastinum", "spine", "right clavicle", "left clavicle",
]  # fmt: skip


def _silver_records(n: int, seed: int) -> list[dict]:
    """Train_Data records naming every silver crop (class ids number the sorted region names)."""
    records = []
    for _, patient, study, dicom in mimic_images(n, seed):
        for class_id, region in enumerate(sorted(REGIONS)):
            records.append({
                "messages": [{"role": "user", "content": f"<image>Locate the region. {region}"}],
                "images": [f"./2D_Images/ChestImagrome/files/{patient[:3]}/{patient}/{study}/{dicom}.jpg"],
                "positive_messages": [[{"role": "user", "content": "<image>Match the target"}]],
                "positive_images": [f"./2D_Images/ChestImagrome/silver_sample_crop/{dicom}_{class_id}_0.png"],
            })  # fmt: skip
    return records


def real_size(base: Path, n: int, seed: int) -> dict:
    """Gold boxes and silver scene graphs on the images mimic_cxr_jpg writes (same n and seed)."""
    import zipfile

    height, width = MIMIC_SHAPE
    gold, sentences = [], ["patient_id\tstudy_id\timage_id\tsentence"]
    (base / "silver_dataset").mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(base / "silver_dataset" / "scene_graph.zip", "w", zipfile.ZIP_DEFLATED) as archive:
        for k, (_, patient, study, dicom) in enumerate(mimic_images(n, seed)):
            objects = []
            for part, region in enumerate(REGIONS):
                x0, y0, x1, y1 = fields.box(seed + k, height, width, part)
                gold.append(
                    f"{dicom}.dcm,0,0,0,0,224,224,{region},{k * 10 + part},{x0},{x1},{y0},{y1},{width},{height},1,,"
                )
                objects.append({"object_id": f"{dicom}_{region}", "bbox_name": region, "name": region,
                                "original_x1": x0, "original_y1": y0, "original_x2": x1, "original_y2": y1,
                                "original_width": width, "original_height": height})  # fmt: skip
            sentences.append(f"{patient[1:]}\t{study[1:]}\t{dicom}.dcm\tLungs are clear.")
            graph = {"image_id": dicom, "viewpoint": "PA", "patient_id": int(patient[1:]), "study_id": int(study[1:]),
                     "objects": objects, "attributes": [], "relationships": []}  # fmt: skip
            member = zipfile.ZipInfo(f"scene_graph/{dicom}_SceneGraph.json", date_time=(2021, 7, 1, 0, 0, 0))
            archive.writestr(member, json.dumps(graph, indent=2), zipfile.ZIP_DEFLATED)
    put(
        base / "gold_dataset" / "gold_bbox_coordinate_annotations_1000images.csv",
        GOLD_HEADER + "\n" + "\n".join(gold) + "\n",
    )
    put(base / "gold_dataset" / "gold_all_sentences_500pts_1000studies.txt", "\n".join(sentences) + "\n")
    return {"Train_Data/2D_Task/ChestImagrome/Chest_imagenome_train.jsonl": _silver_records(n, seed)}
