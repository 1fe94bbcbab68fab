"""CT volumes to X-ray projections: `<out>/<sub>/drr_ap.png` (CT-RATE: valid_fixed_drr/).

params:
  dataset   the volume recipe whose discovery lists the CTs (ct_rate)
  folder    output folder under the subset folder (default valid_fixed_drr)
The config's `drr:` mapping chooses the mode: `mode: reference` (default, the benchmark's rule) or
`mode: physical` with the fields of preprocess.volumes.drr.DrrParams (view, geometry, sod, sid, ...);
physical DRRs get a JSON sidecar with every parameter next to the PNG.
"""

from __future__ import annotations

import json

from preprocess.convert.base import for_each_item, write_output
from preprocess.pngio import encode_png
from preprocess.volumes.drr import DrrParams, physical_drr, reference_drr
from preprocess.volumes.io import read_volume
from preprocess.volumes.recipes import DATASETS


def plan(ctx):
    return DATASETS[ctx.params["dataset"]](ctx.raw_dir(ctx.params.get("source")), ctx.params)


def build(ctx, items) -> None:
    for_each_item(ctx, items, _project)


def _project(ctx, case):
    options = dict(ctx.settings.drr)
    mode = options.pop("mode", "reference")
    folder = ctx.subset_dir / ctx.params.get("folder", "valid_fixed_drr") / case.source.parent.name
    volume = read_volume(case.source)
    data_basedir, overwrite = ctx.settings.data_basedir, ctx.settings.overwrite_existing
    if mode == "reference":
        return [write_output(folder / "drr_ap.png", encode_png(reference_drr(volume)), data_basedir, overwrite)]
    params = DrrParams(**{k: tuple(v) if isinstance(v, list) else v for k, v in options.items()})
    image, sidecar = physical_drr(volume, params)
    name = f"drr_{params.view.lower()}"
    sidecar["source"] = str(case.source)
    return [
        write_output(folder / f"{name}.png", encode_png(image), data_basedir, overwrite),
        write_output(
            folder / f"{name}.json",
            (json.dumps(sidecar, indent=2, sort_keys=True) + "\n").encode(),
            data_basedir,
            overwrite,
        ),
    ]
