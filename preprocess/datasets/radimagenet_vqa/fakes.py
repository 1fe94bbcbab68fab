"""RadImageNet-VQA (Hugging Face raidium/RadImageNet-VQA, benchmark and alignment configs): the demo's tiny copy of
its download (`demo`) and real-size items (`real_size`, `SIZE`, `REAL_SEED`); preprocess/demo/folders.py finds them."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from preprocess.demo import archives, qa_parquets
from preprocess.demo.real_sizes import Size

# RadImageNet-VQA's benchmark config: per image (modality, location, abnormal) and three questions, an open,
# a closed (yes/no, shared by every image) and a multiple-choice one (answer a letter of `choices`).
RADIMAGENET_IMAGES = [("CT", "abdomen", True), ("MRI", "brain", False), ("CT", "knee", True)]


RADIMAGENET_REGIONS = ["abdomen", "brain", "knee", "spine"]


RADIMAGENET_CAPTIONS = [
    "Axial CT image of the abdomen without abnormality.",
    "MRI of the brain showing a glioma.",
    "CT of the lung with a solid nodule.",
]


def demo(base: Path) -> None:
    images = qa_parquets.demo_images(240, 3, 1, jpeg=[2])
    rows, questions = [], []
    for k, (modality, location, abnormal) in enumerate(RADIMAGENET_IMAGES):
        letter = "ABCD"[RADIMAGENET_REGIONS.index(location)]
        questions += [
            ("What is the imaging modality of this image?", None, modality, "open", "modality", modality),
            ("Is this image abnormal?", None, "yes" if abnormal else "no", "closed", "abnormality", None),
            ("Which anatomical region is shown?", RADIMAGENET_REGIONS, letter, "mcq", "anatomy", location),
        ]
        rows += [k] * 3
    metadata = [
        {"content_type": content, "correct_text": correct, "is_abnormal": RADIMAGENET_IMAGES[k][2],
         "location": RADIMAGENET_IMAGES[k][1], "modality": RADIMAGENET_IMAGES[k][0], "pathology": "normal",
         "question_id": f"{content}_{n % 3}"}
        for n, (k, (_, _, _, _, content, correct)) in enumerate(zip(rows, questions, strict=True))
    ]  # fmt: skip
    columns = {
        "image": [images[k] for k in rows],
        "question": [q[0] for q in questions],
        "choices": pa.array([q[1] for q in questions], pa.list_(pa.string())),
        "answer": [q[2] for q in questions],
        "question_type": [q[3] for q in questions],
        "metadata": pa.array(metadata),
    }
    qa_parquets.write(base / "benchmark" / "test-00000-of-00001.parquet", columns, rows_per_group=4)
    # the alignment config (train): one caption per image, the same prompt for all
    captions = qa_parquets.demo_images(250, 3, 1)
    turn = pa.struct([("from", pa.string()), ("value", pa.string())])
    conversations = [
        [{"from": "human", "value": "<image>\nDescribe this medical image."}, {"from": "gpt", "value": text}]
        for text in RADIMAGENET_CAPTIONS
    ]
    alignment = {
        "image": captions,
        "conversations": pa.array(conversations, pa.list_(turn)),
        "metadata": pa.array([{**m, "correct_text": None} for m in metadata[::3]]),
    }
    qa_parquets.write(base / "alignment" / "train-00000-of-00001.parquet", alignment)


# --- real size ----------------------------------------------------------------------------------------------

SIZE = Size(
    "parquet rows of a grey PNG 224x224 (3 questions per image)",
    "RadImageNet (Mei et al. 2022): 224x224 images; the VQA card: 9,000 QAs on 1,000 images",
)
REAL_SEED = 20  # added to the run's seed: each source its own, whichever others are written


def real_size(base: Path, n: int, seed: int) -> dict:
    """n images, three questions each (open, closed, multiple choice), as the benchmark config has them."""
    images = qa_parquets.real_images(range(n), seed, (224, 224), 1, "PNG")
    rows, records = [], []
    for k in range(n):
        for kind, question, choices, answer in (
            ("open", f"Which finding is in image {k}?", None, f"finding {k}"),
            ("closed", f"Is image {k} abnormal?", None, "yes"),
            ("mcq", f"Which region is in image {k}?", ["abdomen", "brain", "knee", "spine"], "B"),
        ):
            rows.append((k, question, choices, answer, kind))
            target = ["brain", "abdomen", "knee", "spine"] if choices else [answer]
            records.append(qa_parquets.record(question, f"real/{k:05d}.png", target))
    metadata = [{"content_type": kind, "correct_text": "brain" if choices else answer, "is_abnormal": True,
                 "location": "brain", "modality": "MRI", "pathology": "normal", "question_id": f"{kind}_{k}"}
                for k, _, choices, answer, kind in rows]  # fmt: skip
    columns = {
        "image": [images[k] for k, *_ in rows], "question": [r[1] for r in rows],
        "choices": pa.array([r[2] for r in rows], pa.list_(pa.string())), "answer": [r[3] for r in rows],
        "question_type": [r[4] for r in rows], "metadata": pa.array(metadata),
    }  # fmt: skip
    qa_parquets.write(base / "benchmark" / "test-00000-of-00001.parquet", columns, rows_per_group=archives.ROW_GROUP)
    return {"2D_Task/RadImageNet-VQA/RadLmageNet_test.json": records}
