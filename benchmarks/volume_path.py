"""The CT volume path end to end: CT-RATE slices + reference DRR per volume, against the authors' recipe and two
floors, in one interleaved run; prints seconds per volume, the ratios and each command's peak RSS.

Volumes: 512x512x300 int16 HU (a chest-like phantom with Gaussian noise, so that gzip sees realistic entropy),
voxels 0.7 x 0.7 x 1.0 mm with an LPS affine, gzip level 6 (about 89 MB each), in the CT-RATE raw tree.

Commands, each a whole process (start-up included), interleaved over the repeats, medians reported:
  authors' recipe   the two CT-RATE scripts' steps re-stated plainly (3D_Task/CT-RATE/cut_slides.py, then
                    CT2Xray.py): each reads the volume with nibabel `dataobj`, slices in float32, the DRR with
                    a float32 whole volume and OpenCV morphology, Pillow's default PNG; one process, core 0
  pipeline          `python -m preprocess convert 3D_Task/CT_RATE` with 1 worker (core 0) and 2 (cores 0,1),
                    each into a new DATA_BASEDIR with one results folder for all (a job of a workflow run;
                    --first-job: a new results folder each time, the first job of a run)
  floors            one ISA-L inflate of each file into memory (core 0); and that inflate followed by the
                    volume's 65 PNGs (its 64 slices and its DRR, the pixels of the untimed first pipeline run)
                    encoded and written as the pipeline encodes them (core 0): what no conversion can go under
Peak RSS is each command's ru_maxrss (os.wait4: the process and the workers it waited for); CPU seconds are
its user + system time (with its workers), which other processes on a busy machine disturb less than wall time.

    python benchmarks/volume_path.py [--volumes 4] [--repeats 3] [--first-job] [--out benchmarks/out/volume_path]
"""

from __future__ import annotations

import argparse
import gzip
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import nibabel as nib
import numpy as np
import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from timing import build_seconds, fresh_folders, pinned  # noqa: E402

from preprocess.rawdata.register import observed_files  # noqa: E402
from preprocess.registry.loader import load_registry  # noqa: E402

SHAPE = (512, 512, 300)

# The authors' recipe, re-stated: what cut_slides.py and CT2Xray.py do per volume, one script after the other.
AUTHORS = """
import sys
from pathlib import Path
import cv2, nibabel as nib, numpy as np
from PIL import Image

def slices(path, folder):
    volume = np.asarray(nib.load(path).dataobj)
    folder.mkdir(parents=True, exist_ok=True)
    for k, z in enumerate(np.linspace(0, volume.shape[2] - 1, 64, dtype=int)):
        plane = (volume[:, :, z].astype(np.float32) + 1350.0) / 1500.0 * 255.0
        Image.fromarray(np.clip(plane, 0, 255).astype(np.uint8)).save(folder / f"slice_{k:03d}.png")

def drr(path, folder):
    image = nib.load(path)
    hu = np.asarray(image.dataobj).astype(np.float32)
    zooms = image.header.get_zooms()[:3]
    mu = np.clip(0.0025 * (np.clip(hu, -1000, 1200) / 1000.0 + 1.0), 0, None).astype(np.float32)
    body = (hu > -700).astype(np.uint8)
    square = np.ones((5, 5), np.uint8)
    for z in range(body.shape[2]):
        closed = cv2.morphologyEx(body[:, :, z], cv2.MORPH_CLOSE, square)
        body[:, :, z] = cv2.morphologyEx(closed, cv2.MORPH_OPEN, square)
    mu = mu * body.astype(np.float32)
    del body, hu
    p = np.exp(-(mu.sum(axis=1) * float(zooms[1])))
    low, high = np.percentile(p, (0.5, 99.5))
    p = np.clip(1.0 - (np.clip(p, low, high) - low) / (high - low + 1e-8), 0, 1).astype(np.float32)
    p = np.flipud(p.T)
    rows, cols = float(zooms[2]), float(zooms[0])
    if abs(rows - cols) > 0.01:
        small = min(rows, cols)
        size = (round(p.shape[1] * cols / small), round(p.shape[0] * rows / small))
        p = cv2.resize(p, size, interpolation=cv2.INTER_LINEAR)
    ys, xs = np.nonzero(p > np.percentile(p, 3))
    p = p[max(0, ys.min() - 8) : min(p.shape[0], ys.max() + 8), max(0, xs.min() - 8) : min(p.shape[1], xs.max() + 8)]
    folder.mkdir(parents=True, exist_ok=True)
    Image.fromarray((p * 255).astype(np.uint8)).save(folder / "drr_ap.png")

out = Path(sys.argv[1])
for path in sys.argv[2:]:
    slices(path, out / "valid_fixed_sliced" / Path(path).parent.name)
for path in sys.argv[2:]:
    drr(path, out / "valid_fixed_drr" / Path(path).parent.name)
"""

FLOOR = """
import sys
from isal import igzip_lib
for path in sys.argv[1:]:
    with open(path, "rb") as handle:
        igzip_lib.decompress(handle.read(), flag=igzip_lib.DECOMP_GZIP)
"""

# The same inflate, then the volume's outputs encoded by the pipeline's PNG writer and written.
FLOOR_ENCODE = """
import sys
from pathlib import Path
import numpy as np
from isal import igzip_lib
from preprocess.formats.pngio import encode_png

out, pixels = Path(sys.argv[1]), Path(sys.argv[2])
for path in sys.argv[3:]:
    with open(path, "rb") as handle:
        igzip_lib.decompress(handle.read(), flag=igzip_lib.DECOMP_GZIP)
    with np.load(pixels / f"{Path(path).parent.name}.npz") as images:
        for name in images.files:
            target = out / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(encode_png(images[name]))
"""


def phantom(seed: int) -> np.ndarray:
    """int16 HU: air, a body ellipse that narrows towards both ends, two lungs, a spine, noise (sd 15 HU)."""
    rng = np.random.default_rng(seed)
    x, y = np.meshgrid(np.linspace(-1, 1, SHAPE[0]), np.linspace(-1, 1, SHAPE[1]), indexing="ij")
    volume = np.empty(SHAPE, dtype=np.int16)
    for k, z in enumerate(np.linspace(-1, 1, SHAPE[2])):
        scale = 1 - 0.15 * z * z
        body = (x / (0.85 * scale)) ** 2 + (y / (0.65 * scale)) ** 2 < 1
        lungs = (((np.abs(x) - 0.4) / (0.3 * scale)) ** 2 + (y / (0.45 * scale)) ** 2) < 1
        spine = (x / 0.1) ** 2 + ((y - 0.45) / 0.1) ** 2 < 1
        plane = np.where(body, np.where(lungs, -820, np.where(spine, 700, 40)), -1000)
        volume[:, :, k] = plane + rng.normal(0, 15, size=plane.shape)
    return volume


def make_raw(root: Path, count: int) -> list[Path]:
    affine = np.diag([-0.7, -0.7, 1.0, 1.0])
    paths = []
    for n in range(count):
        sub = f"valid_{n + 1}_a"
        path = root / "raw" / "CT-RATE" / "dataset" / "valid_fixed" / f"valid_{n + 1}" / sub / f"{sub}_1.nii.gz"
        paths.append(path)
        if path.exists():
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        plain = path.with_suffix("")
        image = nib.Nifti1Image(phantom(n), affine)
        image.header.set_xyzt_units("mm")
        nib.save(image, str(plain))
        with open(plain, "rb") as raw, gzip.open(path, "wb", compresslevel=6) as packed:
            shutil.copyfileobj(raw, packed, 1 << 20)
        plain.unlink()
    metadata = root / "raw" / "CT-RATE" / "dataset" / "metadata" / "validation_metadata.csv"
    metadata.parent.mkdir(parents=True, exist_ok=True)
    metadata.write_text("VolumeName\n")
    files, _ = observed_files(load_registry().source("ct_rate"), root / "raw")
    (root / "overrides.yaml").write_text(yaml.safe_dump({"sources": {"ct_rate": {"files": files}}}))
    config = {
        "raw_root": str(root / "raw"),
        "data_basedir": str(root / "DATA"),
        "subsets": ["CT_RATE"],
        "registry_overrides": str(root / "overrides.yaml"),
    }
    (root / "config.yaml").write_text(yaml.safe_dump(config))
    return paths


def run(command: list[str]) -> tuple[float, float, float, str]:
    """Wall seconds, CPU seconds, peak RSS (MiB) and output of one whole process, after writing back
    earlier runs' files."""
    os.sync()
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)  # a few lines
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    error = process.stdout.read().decode()
    process.stdout.close()
    if process.returncode:
        raise SystemExit(f"{' '.join(command)} failed ({process.returncode}):\n{error}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, error


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--volumes", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "out" / "volume_path")
    parser.add_argument(
        "--first-job",
        action="store_true",
        help="a new results folder for every pipeline run: each pays for the checks only a run's first job makes",
    )
    args = parser.parse_args()
    root = args.out / f"{args.volumes}-volumes"  # the pipeline converts every volume of its raw tree
    paths = [str(p) for p in make_raw(root, args.volumes)]

    def pipeline(out: Path, workers: int) -> list[str]:
        (out / "DATA").mkdir(parents=True, exist_ok=True)  # the CLI asks for an existing DATA_BASEDIR
        return [
            *(sys.executable, "-m", "preprocess", "convert", "3D_Task/CT_RATE"),
            *("--config", str(root / "config.yaml"), "--data-basedir", str(out / "DATA")),
            *("--results", str((out if args.first_job else root) / "results"), "--workers", str(workers)),
        ]

    runs = {
        "authors' recipe (nibabel, float32, OpenCV, Pillow), 1 core": lambda out: pinned(
            [sys.executable, "-c", AUTHORS, str(out), *paths], "0"
        ),
        "pipeline, 1 worker, 1 core": lambda out: pinned(pipeline(out, 1), "0"),
        "pipeline, 2 workers, 2 cores": lambda out: pinned(pipeline(out, 2), "0,1"),
        "floor: one ISA-L inflate per file, 1 core": lambda out: pinned([sys.executable, "-c", FLOOR, *paths], "0"),
        "floor: one ISA-L inflate + the 65 PNGs encoded as the pipeline encodes them, 1 core": lambda out: pinned(
            [sys.executable, "-c", FLOOR_ENCODE, str(out), str(root / "pixels"), *paths], "0"
        ),
    }
    env_path = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = str(REPO) + (os.pathsep + env_path if env_path else "")  # the floor imports pngio
    seconds: dict[str, list[float]] = {name: [] for name in runs}
    cpu: dict[str, list[float]] = {name: [] for name in runs}
    peaks: dict[str, list[float]] = {name: [] for name in runs}
    phases: dict[str, list[float]] = {name: [] for name in runs if name.startswith("pipeline")}
    loads = [os.getloadavg()[0]]
    with fresh_folders(args.out / "outputs") as folders:
        # Untimed: the results folder gets the checks every later job of a run finds there (the configuration's
        # schema checks, the raw check's MD5s), as in a workflow run, where the first job pays for them.
        warm = next(folders)
        run(runs["pipeline, 1 worker, 1 core"](warm))
        save_pixels(warm / "DATA" / "3D_Images" / "CT_RATE", root / "pixels")
        for repeat in range(args.repeats):
            outs = {}
            for name, command in runs.items():
                outs[name] = next(folders)
                wall, busy, peak, log = run(command(outs[name]))
                if name in phases:
                    phases[name].append(build_seconds(log) / args.volumes)
                seconds[name].append(wall / args.volumes)
                cpu[name].append(busy / args.volumes)
                peaks[name].append(peak)
                loads.append(os.getloadavg()[0])
                line = f"{wall / args.volumes:.2f} s/volume, CPU {busy / args.volumes:.2f} s/volume, {peak:.0f} MiB"
                print(f"{repeat + 1}: {name}: {line}, load {loads[-1]:.1f}", file=sys.stderr)
        authors, *pipelines = list(outs.values())[:3]
        checked = [same_pixels(authors, out / "DATA" / "3D_Images" / "CT_RATE") for out in pipelines]
    report(seconds, cpu, peaks, phases, args.volumes)
    print(f"- load average (1 min) during the runs: {min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} CPUs")
    print(f"- outputs: {checked[0]} PNGs, each with the authors' recipe's pixels (1 and 2 workers)")


def save_pixels(tree: Path, folder: Path) -> None:
    """Each volume's PNG pixels (the pipeline's, checked against the recipe's at the end) as one uncompressed
    .npz named after its folder, keyed by path under the subset folder: what the second floor encodes."""
    from PIL import Image

    folder.mkdir(parents=True, exist_ok=True)
    images: dict[str, dict[str, np.ndarray]] = {}
    for png in sorted(tree.rglob("*.png")):
        with Image.open(png) as image:
            images.setdefault(png.parent.name, {})[png.relative_to(tree).as_posix()] = np.asarray(image)
    for volume, pixels in images.items():
        np.savez(folder / f"{volume}.npz", **pixels)


def same_pixels(authors: Path, ours: Path) -> int:
    """Every PNG the recipe wrote exists in our tree under the same name with the same pixels; their count."""
    from PIL import Image

    names = sorted(p.relative_to(authors) for p in authors.rglob("*.png"))
    for name in names:
        with Image.open(authors / name) as theirs, Image.open(ours / name) as mine:
            if not np.array_equal(np.asarray(theirs), np.asarray(mine)):
                raise SystemExit(f"{name}: the pipeline's pixels differ from the authors' recipe")
    if len(names) != len(list(ours.rglob("*.png"))):
        raise SystemExit(f"the recipe wrote {len(names)} PNGs, the pipeline {len(list(ours.rglob('*.png')))}")
    return len(names)


def report(seconds: dict, cpu: dict, peaks: dict, phases: dict, volumes: int) -> None:
    voxel_mb = np.prod(SHAPE) * 2 / 2**20
    title = f"{volumes} volumes 512x512x300 int16, gzip 6"
    print(f"| {title} | s/volume (median) | min-max | CPU s/volume (median) | peak RSS MiB |")
    print("|---|---:|---:|---:|---:|")
    for name, values in seconds.items():
        spread = f"{min(values):.2f}-{max(values):.2f}"
        busy = statistics.median(cpu[name])
        print(f"| {name} | {statistics.median(values):.2f} | {spread} | {busy:.2f} | {max(peaks[name]):.0f} |")
    print()
    for label, values in (("median", statistics.median), ("best", min)):
        authors, one, two, floor, encoded = (values(v) for v in seconds.values())
        print(
            f"- wall, {label}: {authors / one:.2f}x faster than the authors' recipe, {one / floor:.2f}x the "
            f"inflate floor, {one / encoded:.2f}x the inflate + encode floor, 2 workers {one / two:.2f}x one worker"
        )
    one, two = (statistics.median(v) for v in phases.values())
    print(
        f"- the conversion alone (the job's 'wrote N entries' timing, start-up excluded), median: 1 worker "
        f"{one:.2f} s/volume, 2 workers {two:.2f} s/volume, {one / two:.2f}x"
    )
    authors, one, _, floor, encoded = (statistics.median(v) for v in cpu.values())
    print(
        f"- CPU, median: {authors / one:.2f}x less than the authors' recipe, {one / floor:.2f}x the inflate floor, "
        f"{one / encoded:.2f}x the inflate + encode floor"
    )
    one, two = (max(peaks[f"pipeline, {n}"]) / voxel_mb for n in ("1 worker, 1 core", "2 workers, 2 cores"))
    print(f"- peak RSS in one volume's voxel bytes: 1-worker process {one:.2f}x, 2-worker run (any process) {two:.2f}x")


if __name__ == "__main__":
    main()
