"""MMDental's conversion end to end: the pipeline against the authors' recipe and the floor, in one interleaved
run; prints seconds per volume, the ratios, each command's peak RSS and the load average beside each run.

Volumes: the registry's real-size MMDental fakes (preprocess/datasets/mmdental/fakes.py, the basis of its
costs.yaml entry): int16 CBCT .nii.gz 400x400x300 at 0.3 mm, stored LPS (the closest canonical flips two
axes), one per case folder of the MMDental raw tree.

Commands, each a whole process (start-up included), interleaved over the repeats, medians reported, core 0:
  authors' recipe   the MMDental rule of ../shared/REFERENCE.md re-stated plainly: nibabel's closest canonical,
                    get_fdata(float32), one window from the 0.5/99.5 percentiles of the finite non-zero voxels
                    stretched by 1.2, 20 slices per view over the central 90 % of each axis, transposed,
                    Pillow's default PNG
  pipeline          `python -m preprocess convert 3D_Task/MMDental`, 1 worker, into a new DATA_BASEDIR with one
                    results folder for all (a job of a workflow run)
  inflate           one ISA-L inflate of each file, nothing else
  floor             one ISA-L inflate of each file, then the 60 output PNGs of each volume encoded as the
                    pipeline encodes them (preprocess.formats.pngio) and written; their pixels are loaded from an
                    uncompressed .npz made before the timed runs
Every PNG of the pipeline is checked against the recipe's pixels (the last repeat's outputs).

    python benchmarks/mmdental_path.py [--volumes 3] [--repeats 3] [--out benchmarks/out/mmdental_path]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

import numpy as np
import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from timing import fresh_folders, pinned  # noqa: E402
from volume_path import run, same_pixels  # noqa: E402

from preprocess.datasets.mmdental import fakes  # noqa: E402
from preprocess.rawdata.register import observed_files  # noqa: E402
from preprocess.registry.loader import load_registry  # noqa: E402

SUBSET = "3D_Task/MMDental"

AUTHORS = """
import sys
from pathlib import Path
import nibabel as nib, numpy as np
from PIL import Image

def window(volume):
    values = volume[np.isfinite(volume)]
    if (values != 0).any():
        values = values[values != 0]
    if values.size == 0:
        return 0.0, 1.0
    lo, hi = float(np.percentile(values, 0.5)), float(np.percentile(values, 99.5))
    if not (np.isfinite(lo) and np.isfinite(hi)) or hi <= lo:
        lo, hi = float(values.min()), float(values.max())
    if hi <= lo:
        hi = lo + 1.0
    return lo, lo + (hi - lo) * 1.2

def slices(path, folder):
    volume = nib.as_closest_canonical(nib.load(path)).get_fdata(dtype=np.float32)
    volume = np.nan_to_num(volume, nan=0.0, posinf=0.0, neginf=0.0)
    if volume.ndim == 4 and volume.shape[3] == 1:
        volume = volume[..., 0]
    lo, hi = window(volume)
    folder.mkdir(parents=True, exist_ok=True)
    for view, axis in (("axial", 2), ("coronal", 1), ("sagittal", 0)):
        n = volume.shape[axis]
        a = max(0, min(round(0.05 * n), n - 1))
        b = max(a + 1, min(round(0.95 * n), n))
        for k, i in enumerate(np.linspace(a, b - 1, 20).astype(int)):
            plane = (volume[i] if axis == 0 else volume[:, i] if axis == 1 else volume[:, :, i]).T
            pixels = (np.clip((plane - lo) / (hi - lo), 0, 1) * 255).astype(np.uint8)
            Image.fromarray(pixels).save(folder / f"{view}_slice_{k:03d}.png")

out = Path(sys.argv[1])
for path in sys.argv[2:]:
    slices(path, out / "cbct_png" / Path(path).parent.name)
"""

INFLATE = """
import sys
from isal import igzip_lib
for path in sys.argv[1:]:
    with open(path, "rb") as handle:
        igzip_lib.decompress(handle.read(), flag=igzip_lib.DECOMP_GZIP)
"""

FLOOR = """
import sys
from pathlib import Path
import numpy as np
from isal import igzip_lib
from preprocess.formats.pngio import encode_png

out, pixels = Path(sys.argv[1]), Path(sys.argv[2])
for path in sys.argv[3:]:
    with open(path, "rb") as handle:
        igzip_lib.decompress(handle.read(), flag=igzip_lib.DECOMP_GZIP)
    case = Path(path).parent.name
    folder = out / case
    folder.mkdir(parents=True)
    with np.load(pixels / f"{case}.npz") as images:
        for name in images.files:
            (folder / name).write_bytes(encode_png(images[name]))
"""


def make_raw(root: Path, count: int) -> list[Path]:
    """The real-size fakes under root/raw/MMDental (written once), the registry overrides and the config."""
    base = root / "raw" / "MMDental"
    paths = [base / f"A{k + 1:03d}" / f"A{k + 1:03d}.nii.gz" for k in range(count)]
    if not all(path.exists() for path in paths):
        fakes.real_size(base, count, fakes.REAL_SEED)
    files, _ = observed_files(load_registry().source("mmdental"), root / "raw")
    (root / "overrides.yaml").write_text(yaml.safe_dump({"sources": {"mmdental": {"files": files}}}))
    config = {
        "raw_root": str(root / "raw"),
        "data_basedir": str(root / "DATA"),
        "subsets": [SUBSET],
        "registry_overrides": str(root / "overrides.yaml"),
    }
    (root / "config.yaml").write_text(yaml.safe_dump(config))
    return paths


def save_pixels(tree: Path, folder: Path) -> None:
    """Each case's PNG pixels (the pipeline's, checked against the recipe's at the end) as one uncompressed
    .npz, what the floor encodes."""
    from PIL import Image

    folder.mkdir(parents=True, exist_ok=True)
    for case in sorted(p for p in tree.iterdir() if p.is_dir()):
        images = {}
        for png in sorted(case.glob("*.png")):
            with Image.open(png) as image:
                images[png.name] = np.asarray(image)
        np.savez(folder / f"{case.name}.npz", **images)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--volumes", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "out" / "mmdental_path")
    args = parser.parse_args()
    root = args.out / f"{args.volumes}-volumes"  # the pipeline converts every volume of its raw tree
    paths = [str(p) for p in make_raw(root, args.volumes)]

    def pipeline(out: Path) -> list[str]:
        (out / "DATA").mkdir(parents=True, exist_ok=True)  # the CLI asks for an existing DATA_BASEDIR
        return [
            *(sys.executable, "-m", "preprocess", "convert", SUBSET, "--config", str(root / "config.yaml")),
            *("--data-basedir", str(out / "DATA"), "--results", str(root / "results"), "--workers", "1"),
        ]

    runs = {
        "authors' recipe (nibabel, float32, Pillow), 1 core": lambda out: [
            *(sys.executable, "-c", AUTHORS, str(out), *paths)
        ],
        "pipeline, 1 worker, 1 core": pipeline,
        "floor: one ISA-L inflate + the 60 PNGs encoded, 1 core": lambda out: [
            *(sys.executable, "-c", FLOOR, str(out), str(root / "pixels"), *paths)
        ],
        "one ISA-L inflate per file, 1 core": lambda out: [sys.executable, "-c", INFLATE, *paths],
    }
    seconds = {name: [] for name in runs}
    cpu = {name: [] for name in runs}
    peaks = {name: [] for name in runs}
    loads = []
    env_path = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = str(REPO) + (os.pathsep + env_path if env_path else "")  # the floor imports pngio
    with fresh_folders(args.out / "outputs") as folders:
        warm = next(folders)  # untimed: the results folder gets the checks a workflow run's first job makes
        run(pinned(pipeline(warm), "0"))
        save_pixels(warm / "DATA" / "3D_Images" / "MMDental" / "cbct_png", root / "pixels")
        for repeat in range(args.repeats):
            outs = {}
            for name, command in runs.items():
                outs[name] = next(folders)
                wall, busy, peak, _ = run(pinned(command(outs[name]), "0"))
                seconds[name].append(wall / args.volumes)
                cpu[name].append(busy / args.volumes)
                peaks[name].append(peak)
                loads.append(os.getloadavg()[0])
                line = f"{wall / args.volumes:.2f} s/volume, CPU {busy / args.volumes:.2f} s/volume, {peak:.0f} MiB"
                print(f"{repeat + 1}: {name}: {line}, load {loads[-1]:.1f}", file=sys.stderr)
        authors, ours, *_ = outs.values()
        checked = same_pixels(authors, ours / "DATA" / "3D_Images" / "MMDental")
    report(seconds, cpu, peaks, args.volumes)
    print(f"- load average (1 min) after each run: {min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} CPUs")
    print(f"- outputs: {checked} PNGs, each with the authors' recipe's pixels")


def report(seconds: dict, cpu: dict, peaks: dict, volumes: int) -> None:
    title = f"{volumes} volumes 400x400x300 int16 .nii.gz"
    print(f"| {title} | s/volume (median) | min-max | CPU s/volume (median) | peak RSS MiB |")
    print("|---|---:|---:|---:|---:|")
    for name, values in seconds.items():
        spread = f"{min(values):.2f}-{max(values):.2f}"
        busy = statistics.median(cpu[name])
        print(f"| {name} | {statistics.median(values):.2f} | {spread} | {busy:.2f} | {max(peaks[name]):.0f} |")
    print()
    for label, pick in (("wall, median", statistics.median), ("wall, best", min), ("CPU, median", None)):
        figures = cpu if pick is None else seconds
        authors, one, floor, inflate = (statistics.median(v) if pick is None else pick(v) for v in figures.values())
        print(
            f"- {label}: {authors / one:.2f}x faster than the authors' recipe, {one / floor:.2f}x the floor "
            f"(inflate + PNGs), {one / inflate:.2f}x one inflate"
        )


if __name__ == "__main__":
    main()
