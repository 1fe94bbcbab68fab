"""`slice FILE OUT`: one volume file to PNG slices, outside any subset (debugging one volume)."""

from __future__ import annotations

HELP = "slice one volume file into PNGs (debugging one volume)"


def arguments(p) -> None:
    p.add_argument("file", help=".nii, .nii.gz, .nrrd or .npy")
    p.add_argument("out", help="folder for the PNGs")
    p.add_argument("--window", nargs=2, type=float, metavar=("LEVEL", "WIDTH"), help="CT window (default: MR)")
    p.add_argument("--percentiles", nargs=2, type=float, default=[0.5, 99.5], metavar=("LOW", "HIGH"))
    p.add_argument("--mode", choices=["reference", "canonical"], default="reference")
    p.add_argument("--plane", choices=["axial", "coronal", "sagittal"], help="a canonical view instead")
    p.add_argument("--count", type=int, default=64, help="slices (default 64)")


def run(args) -> int:
    from preprocess.pipeline.slicing import slice_volume

    print(slice_volume(args.file, args.out, args.window, args.percentiles, args.mode, args.plane, args.count))
    return 0
