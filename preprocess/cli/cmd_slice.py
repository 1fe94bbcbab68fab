"""`slice FILE OUT`: one volume file to PNG slices, outside any subset (debugging one volume)."""

from __future__ import annotations

from preprocess.cli.options import finite_number, percentile, positive
from preprocess.errors import PreprocessError

HELP = "slice one volume file into PNGs (debugging one volume)"


def arguments(p) -> None:
    p.add_argument("file", help=".nii, .nii.gz, .nrrd or .npy")
    p.add_argument("out", help="folder for the PNGs")
    p.add_argument("--window", nargs=2, type=finite_number, metavar=("LEVEL", "WIDTH"), help="CT window (default: MR)")
    p.add_argument("--percentiles", nargs=2, type=percentile, default=[0.5, 99.5], metavar=("LOW", "HIGH"))
    p.add_argument("--mode", choices=["reference", "canonical"], default="reference")
    p.add_argument("--plane", choices=["axial", "coronal", "sagittal"], help="a canonical view instead")
    p.add_argument("--count", type=positive, default=64, help="slices (default 64)")


def run(args) -> int:
    from preprocess.pipeline.slicing import slice_volume

    if args.window and args.window[1] <= 0:  # each value is checked by its type; the pair here
        raise PreprocessError(f"--window LEVEL WIDTH: WIDTH must be more than 0 (got {args.window[1]:g})")
    if args.percentiles[0] >= args.percentiles[1]:
        low, high = args.percentiles
        raise PreprocessError(f"--percentiles LOW HIGH: LOW must be less than HIGH (got {low:g} and {high:g})")
    print(slice_volume(args.file, args.out, args.window, args.percentiles, args.mode, args.plane, args.count))
    return 0
