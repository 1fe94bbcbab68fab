"""PublicHealthQA: the demo's tiny copy of its download (`demo`); preprocess/demo/folders.py finds it."""

from __future__ import annotations

from pathlib import Path

from preprocess.demo.files import put


def demo(base: Path) -> None:
    for language in ["arabic", "chinese", "english", "french", "korean", "russian", "spanish", "vietnamese"]:
        answer = "None" if language == "arabic" else "Wash your hands."
        put(base / "data" / f"{language}.csv", f"question,answer\nHow to avoid flu?,{answer}\n")
