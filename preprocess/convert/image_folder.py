"""Place plain image files of a raw download into the image root (hard link, else copy).

params:
  sources   glob patterns relative to the source's raw folder, tried in order; the first that matches
            anything is used (archives unpack under varying root folders)
  target    name template relative to the image root: {name} file name, {parent} its folder's name,
            {grandparent} the folder above that
  folder    optional: a folder under the subset's top folder that `target` is relative to instead of the
            image root (a train split beside the test root, e.g. Brain-Tumor-MRI datasets/Training)
  source    source id, when the subset has several
  records   test or train: the outputs are instead the paths the subset's records name (its task JSONs, or
            its Train_Data JSONLs; preprocess/release/releasenames.py), each linked to the matched raw file with the
            longest common relative tail (at least the file name); no match, or several equally long, is a
            bad item naming the file and record (ISIC-2019 and Kvasir train: the benchmark's own split)
"""

from __future__ import annotations

import glob as globlib
import os
from pathlib import Path

from preprocess.convert.outputs import HardLink, Result
from preprocess.errors import RawDataError


def plan(ctx) -> list[tuple[Path, str]]:
    matches = _matches(ctx)
    if "records" in ctx.params:
        return _named_by_records(ctx, matches)
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


def _matches(ctx) -> list[Path]:
    """The files of the first pattern that matches any."""
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
    return matches


def _tail(a: tuple[str, ...], b: tuple[str, ...]) -> int:
    """How many trailing path parts a and b share."""
    n = 0
    while n < min(len(a), len(b)) and a[-1 - n] == b[-1 - n]:
        n += 1
    return n


def _named_by_records(ctx, matches: list[Path]) -> list[tuple[Path, str]]:
    """(raw file, path under the subset folder) per path the records name; bad items listed and counted."""
    from preprocess.release import releasenames

    side, data_basedir = ctx.params["records"], Path(ctx.settings.data_basedir)
    named = releasenames.named_records(data_basedir, ctx.registry, ctx.subset, side)
    if not named:
        raise RawDataError("; ".join(releasenames.missing(data_basedir, ctx.registry, ctx.subset, side)))
    base = ctx.raw_dir(ctx.params.get("source"))
    by_name: dict[str, list[tuple[str, ...]]] = {}
    for path in matches:
        by_name.setdefault(path.name, []).append(path.relative_to(base).parts)
    first: dict[str, object] = {}
    for record in named:
        for path in record.paths:
            first.setdefault(path, record)
    subset_dir = Path(os.path.normpath(ctx.subset_dir))
    items, bad = [], releasenames.unsafe_items(named)
    for path, record in sorted(first.items()):
        where = f"{record.file} record {record.number}"
        relative = os.path.relpath(data_basedir / path, subset_dir)
        parts = tuple(Path(path).parts)
        scored = sorted(((_tail(parts, raw), raw) for raw in by_name.get(parts[-1], ())), reverse=True)
        if relative.startswith(".."):
            bad.append((path, f"{where}: path {path!r} is outside {subset_dir}"))
        elif not scored:
            bad.append(
                (path, f"{where}: {path}: no raw file named {parts[-1]!r} under {base} ({ctx.params['sources']})")
            )
        elif len(scored) > 1 and scored[0][0] == scored[1][0]:
            tied = ", ".join("/".join(raw) for n, raw in scored if n == scored[0][0])
            bad.append((path, f"{where}: {path}: several raw files end alike ({tied}); which one is not known"))
        else:
            items.append((base.joinpath(*scored[0][1]), relative))
    ctx.bad_items(bad, "the release's records")
    return items


def produce(ctx, items):
    folder = None if "records" in ctx.params else ctx.params.get("folder")
    for source_file, relative in items:
        if "records" in ctx.params:
            target = ctx.subset_path(relative)
        else:
            target = ctx.subset_path(f"{folder}/{relative}") if folder else ctx.output_path(relative)
        yield Result(str(source_file), _place(ctx, source_file, target), (source_file,))


def _place(ctx, source_file: Path, target: Path):
    """The item's one output, looked at when it is written: a FIFO, a folder, an unreadable file or a link out
    of the raw root is bad input of this item (on_bad_input), and nothing is linked."""
    yield HardLink(target, ctx.raw_file(source_file))
