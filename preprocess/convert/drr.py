"""CT volumes to X-ray projections (CT-RATE: valid_fixed_drr/<scan>/drr_ap.png).

params:
  dataset        the volume recipe whose discovery lists the CTs (ct_rate) and supplies the folder fields
  folder         output folder template under the subset folder (the recipe's fields)
  name           file name of a reference-mode DRR
  physical_name  file name template of a physical-mode DRR: {view} (ap, pa, lateral); its JSON sidecar
                 takes the same name with the suffix .json
The config's `drr:` mapping chooses the mode: `mode: reference` (default, the benchmark's rule) or
`mode: physical` with the fields of preprocess.volumes.drr.DrrParams (view, geometry, sod, sid, ...).
"""

from __future__ import annotations

import json
from pathlib import PurePosixPath

from preprocess.convert.base import for_each_item, write_output
from preprocess.convert.volume_slices import discover
from preprocess.pngio import encode_png
from preprocess.volumes.drr import DrrParams, physical_drr, reference_drr
from preprocess.volumes.io import read_volume
from preprocess.volumes.recipes import fill


def plan(ctx):
    return discover(ctx, ctx.params["folder"])


def build(ctx, items) -> None:
    for_each_item(ctx, items, _project)


def _project(ctx, case):
    options = dict(ctx.settings.drr)
    mode = options.pop("mode", "reference")
    folder = ctx.subset_dir / case.out_dir
    volume = read_volume(case.source)
    data_basedir, overwrite = ctx.settings.data_basedir, ctx.settings.overwrite_existing
    if mode == "reference":
        image = encode_png(reference_drr(volume))
        return [write_output(folder / ctx.params["name"], image, data_basedir, overwrite)]
    params = DrrParams(**{k: tuple(v) if isinstance(v, list) else v for k, v in options.items()})
    image, sidecar = physical_drr(volume, params)
    name = PurePosixPath(fill(ctx.params["physical_name"], {"view": params.view.lower()}, ctx.subset.key))
    sidecar["source"] = str(case.source)
    return [
        write_output(folder / name, encode_png(image), data_basedir, overwrite),
        write_output(
            folder / name.with_suffix(".json"),
            (json.dumps(sidecar, indent=2, sort_keys=True) + "\n").encode(),
            data_basedir,
            overwrite,
        ),
    ]
