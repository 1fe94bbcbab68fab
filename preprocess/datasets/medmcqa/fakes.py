"""MedMCQA: the demo's tiny copy of its download (`demo`); preprocess/demo/folders.py finds it."""

from __future__ import annotations

import json
from pathlib import Path

from preprocess.demo.files import put


def demo(base: Path) -> None:
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
    put(base / "dev.json", "".join(json.dumps(r) + "\n" for r in rows))  # JSON Lines despite the name
