"""OmniMedVQA: the demo's tiny copy of its download (`demo`) and real-size items (`real_size`, `SIZE`, `REAL_SEED`);
preprocess/demo/folders.py finds them."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

from preprocess.demo import archives, fields
from preprocess.demo.files import encoded
from preprocess.demo.images import encode, pattern
from preprocess.demo.real_sizes import Size
from preprocess.demo.release_images import folders

# The subsets whose images the demo's release ships, each with the oracle that makes them from the demo's raw
# files (preprocess/demo/release_images: the reference rule stated apart from the conversions).
RELEASE_IMAGES = {
    "2D_Task/OmniMedVQA_vqa": folders.omnimedvqa,
}


def demo(base: Path) -> None:
    base.mkdir(parents=True, exist_ok=True)
    paths = ["Images/ACRIMA/Im001_ACRIMA.png", "Images/ACRIMA/Im002_ACRIMA.png"]
    records = [
        {
            "question_id": f"q{i}",
            "dataset": "ACRIMA",
            "question_type": "Disease Diagnosis",
            "question": "Is this glaucoma?",
            "gt_answer": "Yes",
            "image_path": p,
            "option_A": "Yes",
            "option_B": "No",
            "modality_type": "Fundus Photography",
        }
        for i, p in enumerate(paths)
    ]
    with zipfile.ZipFile(base / "OmniMedVQA.zip", "w") as archive:
        archives.zip_add(archive, "OmniMedVQA/QA_information/Open-access/ACRIMA.json", json.dumps(records).encode())
        for i, path in enumerate(paths):
            archives.zip_add(archive, f"OmniMedVQA/{path}", encode(pattern(320 + i, (32, 32)), "PNG"))


# --- real size ----------------------------------------------------------------------------------------------

SIZE = Size(
    "OmniMedVQA.zip of RGB PNG 512x512 images and their QA JSON",
    "OmniMedVQA (Hu et al. 2024): 73 datasets of mixed sizes [assumed 512 px]",
)
REAL_SEED = 22  # added to the run's seed: each source its own, whichever others are written


def real_size(base: Path, n: int, seed: int) -> dict:
    import zipfile

    paths = [f"Images/ACRIMA/Im{k:04d}_ACRIMA.png" for k in range(n)]
    records = [{"question_id": f"q{k}", "dataset": "ACRIMA", "question_type": "Disease Diagnosis",
                "question": "Is this glaucoma?", "gt_answer": "Yes", "image_path": p, "option_A": "Yes",
                "option_B": "No", "modality_type": "Fundus Photography"} for k, p in enumerate(paths)]  # fmt: skip
    base.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(base / "OmniMedVQA.zip", "w", zipfile.ZIP_DEFLATED) as archive:
        archives.zip_add(archive, "OmniMedVQA/QA_information/Open-access/ACRIMA.json", json.dumps(records).encode())
        for k, path in enumerate(paths):
            archives.zip_add(archive, f"OmniMedVQA/{path}", encoded(fields.photo((512, 512), seed + k), "PNG"))
    return {}
