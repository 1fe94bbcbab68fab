"""Link an image root to one shared raw copy (MIMIC-CXR-JPG for four subsets, CheXpert-Plus PNG).

params:
  source   source id of the shared copy
  links    link name (relative to the image root; '.' is the root itself) -> target relative to the
           source's raw folder (MIMIC-CXR: files and p10..p19, as the benchmark README sets it up)
"""

from __future__ import annotations

from pathlib import Path


def plan(ctx) -> list[tuple[str, Path]]:
    base = ctx.raw_dir(ctx.params["source"])
    links = ctx.params["links"]
    return sorted((name, base / target) for name, target in links.items())


def build(ctx, items) -> None:
    root = ctx.image_root
    for name, target in ctx.track(items):
        link = root if name == "." else root / name
        ctx.place_symlink(link, target.resolve())
