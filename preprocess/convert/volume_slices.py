"""3D volumes to 8-bit PNGs: a slice series and/or an X-ray projection (DRR) per volume (CT-RATE, RadGenome,
CirrMRI600, BraTS, HaN-Seg, SynthRAD, MRNet, MMDental).

Every output of a volume comes from one read of it (one inflate, one voxel array), in the job of its shard.

params:
  dataset            a recipe (the kind's `recipes` in a dataset folder's recipes.yaml, whose code is a function of
                     preprocess/volumes/recipes.py): discovery, the fields it supplies, value mapping
  folder             slice series folder under the subset folder: a template of the recipe's fields, or
                     role -> template
  name               slice file name template: {k}, {index}, {view}
  drr_folder         DRR folder under the subset folder: a template of the recipe's fields
  drr_name           file name of a reference-mode DRR (the recipe's fields)
  drr_physical_name  file name of a physical-mode DRR: {view} (ap, pa, lateral) and the recipe's fields; its JSON
                     sidecar takes the same name with the suffix .json
  splits             the recipe's {split} values sliced (default every one it finds; ct_rate, radgenome_chestct
                     and mrnet read only these raw folders, default valid); train_splits: the train conversion's
  sequence           CirrMRI600 only: T1 or T2
  cases_file         BraTS-MEN only, optional: a file (under the raw folder) listing the case ids to slice
A series needs folder and name, a DRR drr_folder, drr_name and drr_physical_name; a subset asks for either or
both. The config chooses the modes: `orientation: reference` (default) or `canonical` for the slices,
`drr: {mode: reference}` (default, the benchmark's rule) or `mode: physical` with the fields of
preprocess.volumes.drr.DrrParams (view, geometry, sod, sid, ...).
"""

from __future__ import annotations

import json
import os
from pathlib import PurePosixPath

from preprocess.convert.outputs import Data, Png, Result
from preprocess.errors import RawDataError
from preprocess.registry.layout import fill
from preprocess.volumes.drr import DrrParams, physical_drr, reference_drr
from preprocess.volumes.io import Limits
from preprocess.volumes.recipes import resolve
from preprocess.volumes.slicer import canonical_slices, read_for, reference_slices


def plan(ctx):
    """The recipe's cases under the source's raw folder, each with its series folder (else its DRR folder)."""
    raw = ctx.raw_dir(ctx.params.get("source"))
    cases = ctx.recipe["code"](raw, ctx.params, ctx.log)
    if "splits" in ctx.params:
        cases = [case for case in cases if case.fields.get("split") in ctx.params["splits"]]
    if not cases:
        raise RawDataError(
            f"{ctx.subset.key}: no volumes found under {raw}; check the layout with `python -m preprocess check`"
        )
    _log_uncompressed(ctx, raw, cases)
    folder = ctx.params["folder"] if "folder" in ctx.params else ctx.params["drr_folder"]
    return resolve(cases, folder, f"{ctx.subset.key}/{ctx.conversion.name}")


def _log_uncompressed(ctx, raw, cases) -> None:
    """A recipe that reads .nii.gz files does not see a volume saved as .nii (gunzipped by hand): each one
    left out is named in the log and counted."""
    if any(str(case.source).lower().endswith(".nii") for case in cases):
        return  # this recipe reads .nii files too
    # os.walk: pathlib's rglob took seconds per conversion on a full CT-RATE tree (`plan` runs every plan)
    left = sorted(
        path
        for root, _, names in os.walk(raw)
        for path in (os.path.join(root, name) for name in names if name.endswith(".nii"))
        if os.path.isfile(path)
    )
    if left:
        shown = ", ".join(left[:5]) + (", ..." if len(left) > 5 else "")
        ctx.log(
            f"{ctx.subset.key}: {len(left)} .nii files left out, the {ctx.params['dataset']} recipe reads "
            f".nii.gz (gzip them to include them): {shown}"
        )


def produce(ctx, items):
    for case in items:
        yield Result(str(case.source), _outputs(ctx, case), (case.source,))


def _outputs(ctx, case):
    limits = Limits(ctx.settings.max_volume_voxels, ctx.raw_dir(ctx.params.get("source")))
    volume = read_for(case.profile, ctx.raw_file(case.source), limits)
    if "folder" in ctx.params:
        yield from _series(ctx, case, volume)
    if "drr_folder" in ctx.params:
        yield from _drr(ctx, case, volume)


def _series(ctx, case, volume):
    mode = ctx.settings.orientation_for(ctx.subset.key)
    slicer = canonical_slices if mode == "canonical" else reference_slices
    folder = ctx.subset_dir / case.out_dir
    for name, image in slicer(volume, case.profile, ctx.params["name"]):
        yield Png(folder / name, image)


def _drr(ctx, case, volume):
    where = f"{ctx.subset.key}/{ctx.conversion.name}"
    folder = ctx.subset_dir / fill(ctx.params["drr_folder"], case.fields, where)
    options = dict(ctx.settings.drr)
    if options.pop("mode", "reference") == "reference":
        yield Png(folder / fill(ctx.params["drr_name"], case.fields, where), reference_drr(volume))
        return
    params = DrrParams(**{k: tuple(v) if isinstance(v, list) else v for k, v in options.items()})
    image, sidecar = physical_drr(volume, params)
    fields = {**case.fields, "view": params.view.lower()}
    name = PurePosixPath(fill(ctx.params["drr_physical_name"], fields, where))
    sidecar["source"] = str(case.source)
    yield Png(folder / name, image)
    yield Data(folder / name.with_suffix(".json"), (json.dumps(sidecar, indent=2, sort_keys=True) + "\n").encode())
