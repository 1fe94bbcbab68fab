"""3D volumes to folders of 8-bit PNG slices (CT-RATE, RadGenome, CirrMRI600, BraTS, HaN-Seg, SynthRAD, MRNet,
MMDental).

params:
  dataset    recipe name (preprocess/volumes/recipes.py): discovery, the fields it supplies, value mapping
  folder     series folder under the subset folder: a template of the recipe's fields, or role -> template
  name       slice file name template: {k}, {index}, {view}
  sequence   CirrMRI600 only: T1 or T2
  cases_file BraTS-MEN only, optional: a file (under the raw folder) listing the case ids to slice
The orientation mode comes from the config (`orientation: reference` by default, or `canonical`).
"""

from __future__ import annotations

from preprocess.convert.base import for_each_item, write_output
from preprocess.errors import RawDataError
from preprocess.pngio import encode_png
from preprocess.volumes.recipes import DATASETS, resolve
from preprocess.volumes.slicer import canonical_slices, read_for, reference_slices


def plan(ctx):
    return discover(ctx, ctx.params["folder"])


def discover(ctx, folder):
    """The recipe's cases under the source's raw folder, each with its output folder from `folder`."""
    dataset = ctx.params["dataset"]
    if dataset not in DATASETS:
        raise RawDataError(f"{ctx.subset.key}: no slicing recipe {dataset!r} (known: {', '.join(DATASETS)})")
    raw = ctx.raw_dir(ctx.params.get("source"))
    cases = DATASETS[dataset](raw, ctx.params, ctx.log)
    if not cases:
        raise RawDataError(
            f"{ctx.subset.key}: no volumes found under {raw}; check the layout with `python -m preprocess check`"
        )
    return resolve(cases, folder, f"{ctx.subset.key}/{ctx.conversion.name}")


def build(ctx, items) -> None:
    for_each_item(ctx, items, _slice_case)


def _slice_case(ctx, case) -> list[tuple[str, str, str]]:
    volume = read_for(case.profile, case.source)
    mode = ctx.settings.orientation_for(ctx.subset.key)
    slicer = canonical_slices if mode == "canonical" else reference_slices
    folder = ctx.subset_dir / case.out_dir
    data_basedir, overwrite = ctx.settings.data_basedir, ctx.settings.overwrite_existing
    return [
        write_output(folder / name, encode_png(image), data_basedir, overwrite)
        for name, image in slicer(volume, case.profile, ctx.params["name"])
    ]
