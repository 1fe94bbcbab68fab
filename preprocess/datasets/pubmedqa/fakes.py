"""PubMedQA: the demo's tiny copy of its download (`demo`); preprocess/demo/folders.py finds it."""

from __future__ import annotations

import json
from pathlib import Path

from preprocess.demo.files import put


def demo(base: Path) -> None:
    entry = {
        "QUESTION": "Does the demo work?",
        "CONTEXTS": ["It runs."],
        "LABELS": ["RESULTS"],
        "MESHES": [],
        "YEAR": "2024",
        "final_decision": "yes",
        "LONG_ANSWER": "Yes.",
    }
    put(base / "ori_pqal.json", json.dumps({"12345678": entry}))
    put(base / "test_ground_truth.json", json.dumps({"12345678": "yes"}))
