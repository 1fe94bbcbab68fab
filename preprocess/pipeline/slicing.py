"""`slice`: one volume file to PNG slices, outside any subset: for looking at what a file holds."""

from __future__ import annotations

import os
from pathlib import Path

from preprocess.errors import PreprocessError
from preprocess.formats.fsutil import atomic_write_bytes, file_type
from preprocess.formats.pngio import encode_png
from preprocess.formats.rawroot import require_output
from preprocess.volumes import transforms
from preprocess.volumes.io import read_volume
from preprocess.volumes.recipes import Profile
from preprocess.volumes.slicer import canonical_slices, reference_slices, view_slices


def slice_volume(file, out, window=None, percentiles=(0.5, 99.5), mode="reference", plane=None, count=64) -> str:
    """Write the slices of `file` into the folder `out`: windowed (`window` level, width) or between two
    `percentiles`; the reference or canonical slicing (`mode`), or one `plane` (a canonical view). Returns
    the line that says what was written."""
    if not Path(file).is_file():  # a FIFO is named, never opened (a read would wait on it)
        mode = os.stat(file).st_mode if os.path.exists(file) else None
        what = "does not exist" if mode is None else f"is {file_type(mode)}, not a volume file"
        raise PreprocessError(f"{file} {what}: give the path of a .nii, .nii.gz, .nrrd or .npy file")
    volume = read_volume(Path(file))
    if window:
        profile = Profile("ct_window", level=window[0], width=window[1], count=count)
    else:
        profile = Profile("mr_list", low_pct=percentiles[0], high_pct=percentiles[1], count=count)
    if plane:
        if window:

            def mapping(image):
                return transforms.window_to_uint8(image, *window)
        else:
            low, high = transforms.percentile_range(volume.scaled(volume.data), *percentiles)

            def mapping(image):
                return transforms.normalise_to_uint8(image, low, high)

        slices = view_slices(volume, plane, mapping, count)
    elif mode == "canonical":
        slices = canonical_slices(volume, profile)
    else:
        slices = reference_slices(volume, profile)
    out = Path(out)
    # no config is read here: the raw root and DATA_BASEDIR are not known, links and non-files still refused
    require_output(out, "OUT", None, None, None, names=tuple(name for name, _ in slices))
    for name, image in slices:
        atomic_write_bytes(out / name, encode_png(image))
    return (
        f"{len(slices)} slices of {file} (shape {volume.data.shape}, spacing "
        f"{tuple(round(v, 3) for v in volume.spacing)}) written to {out}"
    )
