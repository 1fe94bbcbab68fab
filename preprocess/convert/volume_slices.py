"""3D volumes to folders of 8-bit PNG slices (CT-RATE, RadGenome, CirrMRI600, BraTS, HaN-Seg, SynthRAD, MRNet,
MMDental).

params:
  dataset    recipe name (preprocess/volumes/recipes.py): discovery, output folders, value mapping
  sequence   CirrMRI600 only: T1 or T2
  cases_file BraTS-MEN only, optional: a file (under the raw folder) listing the case ids to slice
The orientation mode comes from the config (`orientation: reference` by default, or `canonical`).
"""

from __future__ import annotations

from preprocess.convert.base import for_each_item, write_output
from preprocess.errors import RawDataError
from preprocess.pngio import encode_png
from preprocess.volumes.io import read_volume
from preprocess.volumes.recipes import DATASETS
from preprocess.volumes.slicer import canonical_slices, reference_slices


def plan(ctx):
    dataset = ctx.params["dataset"]
    if dataset not in DATASETS:
        raise RawDataError(f"{ctx.subset.key}: no slicing recipe {dataset!r} (known: {', '.join(DATASETS)})")
    cases = DATASETS[dataset](ctx.raw_dir(ctx.params.get("source")), ctx.params)
    if not cases:
        raise RawDataError(
            f"{ctx.subset.key}: no volumes found under {ctx.raw_dir(ctx.params.get('source'))}; "
            "check the layout with `python -m preprocess check`"
        )
    return cases


def build(ctx, items) -> None:
    for_each_item(ctx, items, _slice_case)


def _slice_case(ctx, case) -> list[tuple[str, str, str]]:
    volume = read_volume(case.source)
    mode = ctx.settings.orientation_for(ctx.subset.key)
    slices = canonical_slices(volume, case.profile) if mode == "canonical" else reference_slices(volume, case.profile)
    folder = ctx.subset_dir / case.out_dir
    data_basedir, overwrite = ctx.settings.data_basedir, ctx.settings.overwrite_existing
    return [write_output(folder / name, encode_png(image), data_basedir, overwrite) for name, image in slices]
