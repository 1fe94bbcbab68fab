"""Demo raw downloads: tiny copies with the trees, names and quirks of the real ones.

Each writer fills one source's raw folder and returns, per subset, the image paths the subset's task
JSONs will reference (relative to the subset's image root).
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np

from preprocess.demo.annotations import WRITERS as ANNOTATION_WRITERS
from preprocess.demo.archives import WRITERS as ARCHIVE_WRITERS
from preprocess.demo.images import encode, pattern
from preprocess.demo.masks import WRITERS as MASK_WRITERS
from preprocess.demo.mimic import MIMIC_IMAGES
from preprocess.demo.volumes import WRITERS as VOLUME_WRITERS


def _put(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def _text(path: Path, text: str) -> None:
    _put(path, text.encode("utf-8"))


def aptos(base: Path) -> None:
    ids = ["000c1434d8d7", "0024cdab0c1e", "6cd606dc52e9", "82bb8a01935f"]
    _text(base / "train.csv", "id_code,diagnosis\n" + "".join(f"{i},{n % 5}\n" for n, i in enumerate(ids)))
    for n, image_id in enumerate(ids):
        _put(base / "train_images" / f"{image_id}.png", encode(pattern(n, (40, 48)), "PNG"))


def isic2019(base: Path) -> None:
    names = [f"ISIC_00{34321 + n}.jpg" for n in range(3)]
    for n, name in enumerate(names):
        _put(base / "ISIC_2019_Test_Input" / name, encode(pattern(10 + n), "JPEG"))
    _text(base / "ISIC_2019_Test_Input" / "LICENSE.txt", "CC BY-NC 4.0\n")
    for n in range(3):  # ISIC_2019_Training_Input.zip, for the train split
        _put(base / "ISIC_2019_Training_Input" / f"ISIC_000000{n}.jpg", encode(pattern(15 + n), "JPEG"))


def brain_tumor_mri(base: Path) -> None:
    names = {
        "glioma": ["Te-gl_0010.jpg", "Te-glTr_0007.jpg"],
        "meningioma": ["Te-me_0018.jpg"],
        "notumor": ["Te-no_0011.jpg"],
        "pituitary": ["Te-pi_0012.jpg"],
    }
    for n, (label, files) in enumerate(sorted(names.items())):
        for k, name in enumerate(files):
            _put(base / "Testing" / label / name, encode(pattern(20 + n + k, channels=1), "JPEG"))
        _put(base / "Training" / label / f"Tr-{label[:2]}_0001.jpg", encode(pattern(30 + n, channels=1), "JPEG"))


KVASIR_CLASSES = [
    "dyed-lifted-polyps",
    "dyed-resection-margins",
    "esophagitis",
    "normal-cecum",
    "normal-pylorus",
    "normal-z-line",
    "polyps",
    "ulcerative-colitis",
]


def kvasir(base: Path) -> None:
    for n, label in enumerate(KVASIR_CLASSES):
        name = f"{n:02d}a3b9e0-{label[:4]}-4c1d.jpg"
        _put(base / "kvasir-dataset-v2" / label / name, encode(pattern(40 + n), "JPEG"))


def lc25000(base: Path) -> None:
    sets = {"colon_image_sets": ["colon_aca", "colon_n"], "lung_image_sets": ["lung_aca", "lung_n", "lung_scc"]}
    for group, labels in sets.items():
        for n, label in enumerate(labels):
            name = f"{label.replace('_', '')}{n + 1}.jpeg"
            _put(base / "lung_colon_image_set" / group / label / name, encode(pattern(50 + n), "JPEG"))


def rfmid(base: Path) -> None:
    header = "ID,Disease_Risk,DR,ARMD,MH\n"
    for split, folder, seed in (("Test_Set", "Test", 60), ("Training_Set", "Training", 70)):
        for n in range(1, 4):  # ids restart per split: the names collide across splits upstream
            _put(base / split / split / folder / f"{n}.png", encode(pattern(seed + n), "PNG"))
    _text(
        base / "Test_Set" / "Test_Set" / "RFMiD_Testing_Labels.csv",
        header + "".join(f"{n},1,{n % 2},0,0\n" for n in range(1, 4)),
    )


def mimic_cxr_jpg(base: Path) -> None:
    for n in range(10, 20):
        (base / "files" / f"p{n}").mkdir(parents=True, exist_ok=True)
    for n, (group, patient, study, dicom) in enumerate(MIMIC_IMAGES):
        _put(base / "files" / group / patient / study / f"{dicom}.jpg", encode(pattern(80 + n, channels=1), "JPEG"))
    rows = "".join(f"{d},{s[1:]},{p[1:]},test\n" for _, p, s, d in MIMIC_IMAGES)
    _put(
        base / "mimic-cxr-2.0.0-split.csv.gz",
        gzip.compress(f"dicom_id,study_id,subject_id,split\n{rows}".encode(), mtime=0),
    )


def chexpert_plus(base: Path) -> None:
    referenced = []
    for n, (patient, study, view) in enumerate(
        [("patient00001", "study1", "view1_frontal"), ("patient00002", "study2", "view2_lateral")]
    ):
        relative = f"train/{patient}/{study}/{view}.png"
        _put(base / "PNG" / relative, encode(pattern(90 + n, (48, 40), channels=1), "PNG"))
        referenced.append(relative)
    _text(
        base / "df_chexpert_plus_240401.csv",
        "path_to_image,section_findings,section_impression\n"
        f"{referenced[0].replace('.png', '.jpg')},Clear lungs.,No acute process.\n"
        f"{referenced[1].replace('.png', '.jpg')},Small effusion.,Left effusion.\n",
    )


def medmcqa(base: Path) -> None:
    rows = [
        {
            "id": f"q{n}",
            "question": f"Demo question {n}?",
            "opa": "A",
            "opb": "B",
            "opc": "C",
            "opd": "D",
            "cop": 1 + n % 4,
            "choice_type": "single",
            "exp": "",
            "subject_name": "Anatomy",
            "topic_name": None,
        }
        for n in range(3)
    ]
    _text(base / "dev.json", "".join(json.dumps(r) + "\n" for r in rows))  # JSON Lines despite the name


def pubmedqa(base: Path) -> None:
    entry = {
        "QUESTION": "Does the demo work?",
        "CONTEXTS": ["It runs."],
        "LABELS": ["RESULTS"],
        "MESHES": [],
        "YEAR": "2024",
        "final_decision": "yes",
        "LONG_ANSWER": "Yes.",
    }
    _text(base / "ori_pqal.json", json.dumps({"12345678": entry}))
    _text(base / "test_ground_truth.json", json.dumps({"12345678": "yes"}))


def medical_qa(base: Path) -> None:
    _text(base / "corpus.jsonl", '{"_id": "d1", "title": "", "text": "Drink water."}\n')
    _text(base / "queries.jsonl", '{"_id": "q1", "text": "What helps dehydration?"}\n')
    _text(base / "qrels" / "default.jsonl", '{"query-id": "q1", "corpus-id": "d1", "score": 1}\n')


def publichealthqa(base: Path) -> None:
    for language in ["arabic", "chinese", "english", "french", "korean", "russian", "spanish", "vietnamese"]:
        answer = "None" if language == "arabic" else "Wash your hands."
        _text(base / "data" / f"{language}.csv", f"question,answer\nHow to avoid flu?,{answer}\n")


def _npz(path: Path, arrays: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as handle:
        np.savez_compressed(handle, **arrays)


# ChestMNIST test labels, written out: none, atelectasis + effusion, cardiomegaly, hernia.
CHEST_TEST_LABELS = [[0] * 14, [1, 0, 1] + [0] * 11, [0, 1] + [0] * 12, [0] * 13 + [1]]


def _medmnist_2d(base: Path, flag: str, size: int, channels: int, labels: list[str], multi: bool, seed: int):
    """An npz with MedMNIST's keys, dtypes and shapes; 3 train, 2 val and 4 test images.

    Single-label rows are 0, 1, 2, ... in each split; ChestMNIST's test rows are CHEST_TEST_LABELS.
    """
    rng = np.random.default_rng(seed)
    arrays = {}
    for split, count in (("train", 3), ("val", 2), ("test", 4)):
        images = np.stack([pattern(seed + i, (size, size), channels) for i in range(count)]).astype(np.uint8)
        if multi and split == "test":
            rows = np.array(CHEST_TEST_LABELS, np.uint8)
        elif multi:
            rows = rng.integers(0, 2, size=(count, len(labels)), dtype=np.uint8)
        else:
            rows = (np.arange(count) % len(labels)).reshape(-1, 1).astype(np.uint8)
        arrays[f"{split}_images"], arrays[f"{split}_labels"] = images, rows
    _npz(base / f"{flag}_{size}.npz", arrays)


def medmnist(base: Path) -> None:
    from preprocess.registry.loader import load_registry

    registry = load_registry()
    for number, (key, flag, channels, multi) in enumerate(
        (
            ("2D_Task/BloodMNIST", "bloodmnist", 3, False),
            ("2D_Task/ChestMNIST", "chestmnist", 1, True),
            ("2D_Task/OrganAMNIST", "organamnist", 1, False),
        )
    ):
        labels = next(c for c in registry.subset(key).conversions).params["labels"]
        _medmnist_2d(base, flag, 224, channels, labels, multi, seed=number * 10)


def medmnist3d(base: Path) -> None:
    """organmnist3d_64.npz with 2 train, 1 val and 3 test volumes of 64^3 (labels 0, 1, 2, ... per split)."""
    arrays = {}
    for split, count in (("train", 2), ("val", 1), ("test", 3)):
        volumes = np.stack([np.stack([pattern(i * 64 + k, (64, 64), 1) for k in range(64)]) for i in range(count)])
        arrays[f"{split}_images"] = volumes.astype(np.uint8)
        arrays[f"{split}_labels"] = (np.arange(count) % 11).reshape(-1, 1).astype(np.uint8)
    _npz(base / "organmnist3d_64.npz", arrays)


WRITERS = {
    **VOLUME_WRITERS,
    **ARCHIVE_WRITERS,
    **ANNOTATION_WRITERS,
    **MASK_WRITERS,
    "medmnist": medmnist,
    "medmnist3d": medmnist3d,
    "aptos2019": aptos,
    "isic2019": isic2019,
    "brain_tumor_mri": brain_tumor_mri,
    "kvasir_v2": kvasir,
    "lc25000": lc25000,
    "rfmid": rfmid,
    "mimic_cxr_jpg": mimic_cxr_jpg,
    "chexpert_plus": chexpert_plus,
    "medmcqa": medmcqa,
    "pubmedqa": pubmedqa,
    "medical_qa_retrieval": medical_qa,
    "publichealthqa": publichealthqa,
}
