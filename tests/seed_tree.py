"""Parse the layout tree of the benchmark's README (vendored in tests/data)."""

from __future__ import annotations

import re
from pathlib import Path

TREE_FILE = Path(__file__).parent / "data" / "seed_layout_tree.txt"
_ENTRY = re.compile(r"^(?P<indent>(?:[│ ]   )*)[├└]── (?P<name>.+?)\s*$")


def parse_tree(text: str) -> list[str]:
    """Return every entry of a `tree`-style drawing as a path under DATA_BASEDIR."""
    stack: list[str] = []
    paths = []
    for line in text.splitlines():
        match = _ENTRY.match(line)
        if not match:
            continue
        depth = len(match["indent"]) // 4
        name = match["name"]
        del stack[depth:]
        stack.append(name.rstrip("/"))
        paths.append("/".join(stack) + ("/" if name.endswith("/") else ""))
    return paths


def seed_layout(text: str | None = None) -> dict:
    """Task JSON names per task folder and image roots, as the seed tree gives them."""
    paths = parse_tree(text if text is not None else TREE_FILE.read_text(encoding="utf-8"))
    tasks: dict[str, list[str]] = {}
    image_roots: list[str] = []
    for path in paths:
        parts = path.rstrip("/").split("/")
        if parts[0].endswith("_Task") and len(parts) == 2:
            tasks.setdefault(path.rstrip("/"), [])
        elif parts[0].endswith("_Task") and len(parts) == 3:
            tasks[f"{parts[0]}/{parts[1]}"].append(parts[2])
        elif parts[0].endswith("_Images") and len(parts) >= 2:
            image_roots.append(path)
    # A root listed inside another root is a child folder of it (CT_RATE lists two), not a subset root.
    roots = [r for r in image_roots if not any(o != r and r.startswith(o) for o in image_roots)]
    by_group = {
        "2D_Task": [r for r in roots if r.startswith("2D_Images/")],
        "3D_Task": [r for r in roots if r.startswith("3D_Images/")],
    }
    return {"tasks": tasks, "image_roots": by_group}
