"""Link an image root to one shared raw copy (MIMIC-CXR-JPG for four subsets, CheXpert-Plus PNG).

params:
  source   source id of the shared copy
  links    link name (relative to the image root; '.' is the root itself) -> target relative to the
           source's raw folder (MIMIC-CXR: files and p10..p19, as the benchmark README sets it up)
A target whose content the source's file specs declare (`holds`: CheXpert Plus's PNG/ holds train/ or valid/)
is the level of it that holds that content: the folder, or the folder of its own name inside it where the
chunks were unpacked one level deeper (PNG/PNG/train/...), so that the records' paths resolve through the
link; a target holding neither stops the item, naming the folder expected.
"""

from __future__ import annotations

import os
from pathlib import Path

from preprocess.convert.outputs import Result, SymLink


def plan(ctx) -> list[tuple[str, Path]]:
    base = ctx.raw_dir(ctx.params["source"])
    links = ctx.params["links"]
    return sorted((name, base / target) for name, target in links.items())


def produce(ctx, items):
    for name, target in items:
        yield Result(name, _link(ctx, name, target))


def _link(ctx, name: str, target: Path):
    """The link, to a folder that resolves inside the raw root (a missing one has place_symlink's message)."""
    if os.path.lexists(target):
        ctx.raw_file(target, folder=True)
        base = ctx.raw_dir(ctx.params["source"])
        holds = ctx.source(ctx.params["source"]).holds(target.relative_to(base).as_posix())
        if holds:
            target = ctx.raw_content(target, holds)
    yield SymLink(ctx.output_path(name), target.resolve())
