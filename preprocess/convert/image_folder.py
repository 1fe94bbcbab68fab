"""Place plain image files of a raw download into the image root (hard link, else copy).

params:
  sources   glob patterns relative to the source's raw folder, tried in order; the first that matches
            anything is used (archives unpack under varying root folders)
  target    name template relative to the image root: {name} file name, {parent} its folder's name,
            {grandparent} the folder above that
  folder    optional: a folder under the subset's top folder that `target` is relative to instead of the
            image root (a train split beside the test root, e.g. Brain-Tumor-MRI datasets/Training)
  source    source id, when the subset has several
"""

from __future__ import annotations

import glob as globlib
import os
from pathlib import Path

from preprocess.convert.outputs import HardLink, Result
from preprocess.errors import RawDataError


def plan(ctx) -> list[tuple[Path, str]]:
    base = ctx.raw_dir(ctx.params.get("source"))
    patterns = ctx.params["sources"]
    for pattern in patterns:
        matches = sorted(
            Path(p) for p in globlib.glob(os.path.join(globlib.escape(str(base)), pattern), recursive=True)
        )
        if matches:  # every match is an item: one that is not a readable raw file is named when it is built
            break
    else:
        raise RawDataError(
            f"{ctx.subset.key}: no file under {base} matches any of {patterns}; "
            "check the layout with `python -m preprocess check`"
        )
    template = ctx.params.get("target", "{name}")
    items, seen = [], {}
    for path in matches:
        relative = template.format(
            name=path.name, parent=path.parent.name, grandparent=path.parent.parent.name, stem=path.stem
        )
        if relative in seen:
            raise RawDataError(
                f"{ctx.subset.key}: {seen[relative]} and {path} would both become {relative!r}; "
                "the raw folder holds duplicates (an archive extracted twice?)"
            )
        seen[relative] = path
        items.append((path, relative))
    return items


def produce(ctx, items):
    folder = ctx.params.get("folder")
    for source_file, relative in items:
        target = ctx.subset_path(f"{folder}/{relative}") if folder else ctx.output_path(relative)
        yield Result(str(source_file), _place(ctx, source_file, target))


def _place(ctx, source_file: Path, target: Path):
    """The item's one output, looked at when it is written: a FIFO, a folder, an unreadable file or a link out
    of the raw root is bad input of this item (on_bad_input), and nothing is linked."""
    yield HardLink(target, ctx.raw_file(source_file))
