"""MedicalQARetrieval (mteb/medical_qa): the demo's tiny copy of its download (`demo`); preprocess/demo/folders.py
finds it."""

from __future__ import annotations

from pathlib import Path

from preprocess.demo.files import put


def demo(base: Path) -> None:
    put(base / "corpus.jsonl", '{"_id": "d1", "title": "", "text": "Drink water."}\n')
    put(base / "queries.jsonl", '{"_id": "q1", "text": "What helps dehydration?"}\n')
    put(base / "qrels" / "default.jsonl", '{"query-id": "q1", "corpus-id": "d1", "score": 1}\n')
