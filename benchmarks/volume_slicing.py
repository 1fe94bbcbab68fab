"""Slice fake CT-RATE volumes with this pipeline and with a straightforward per-volume baseline; print s/volume.

Volumes: 512x512x300 int16 HU with an LPS affine, gzip level 6, in the CT-RATE tree. The baseline does what
the benchmark's script describes, plainly: nibabel `dataobj`, 64 evenly spaced axial slices, the lung window
in float64, Pillow's default PNG settings, one process. The pipeline runs `python -m preprocess convert
CT_RATE` with 1 and 2 workers. All commands run as whole processes, interleaved, medians reported.

    python benchmarks/volume_slicing.py [--volumes 4] [--repeats 3] [--out benchmarks/out/volumes]
"""

from __future__ import annotations

import argparse
import gzip
import shutil
import statistics
import sys
from pathlib import Path

import nibabel as nib
import numpy as np
import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from timing import fresh_folders, pinned, timed  # noqa: E402

from preprocess.register import observed_files  # noqa: E402
from preprocess.registry import load_registry  # noqa: E402

BASELINE = """
import sys
from pathlib import Path
import nibabel as nib
import numpy as np
from PIL import Image
out = Path(sys.argv[1])
for path in sys.argv[2:]:
    data = np.asarray(nib.load(path).dataobj)
    picks = np.floor(np.linspace(0, data.shape[2] - 1, 64)).astype(int)
    folder = out / Path(path).parent.name
    folder.mkdir(parents=True, exist_ok=True)
    for k, i in enumerate(picks):
        plane = np.clip(data[:, :, i].astype(np.float64), -1350, 150)
        Image.fromarray(((plane + 1350) / 1500 * 255).astype(np.uint8)).save(folder / f"slice_{k:03d}.png")
"""


def phantom(seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x, y = np.meshgrid(np.linspace(-1, 1, 512), np.linspace(-1, 1, 512), indexing="ij")
    body = (x / 0.85) ** 2 + (y / 0.65) ** 2 < 1
    lungs = (((np.abs(x) - 0.4) / 0.3) ** 2 + (y / 0.45) ** 2) < 1
    plane = np.where(body, np.where(lungs, -820, 40), -1000).astype(np.int16)
    volume = np.repeat(plane[:, :, None], 300, axis=2)
    volume += rng.normal(0, 15, size=volume.shape).astype(np.int16)
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
        nib.save(nib.Nifti1Image(phantom(n), affine), str(path.with_suffix("")))
        with open(path.with_suffix(""), "rb") as raw, gzip.open(path, "wb", compresslevel=6) as packed:
            shutil.copyfileobj(raw, packed, 1 << 20)
        path.with_suffix("").unlink()
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--volumes", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "out" / "volumes")
    args = parser.parse_args()
    root = args.out / f"{args.volumes}-volumes"  # the pipeline converts every volume of its raw tree
    paths = make_raw(root, args.volumes)

    def ours(out: Path, workers: int) -> list[str]:
        return [
            *(sys.executable, "-m", "preprocess", "convert", "CT_RATE", "--conversion", "slices"),
            *("--config", str(root / "config.yaml"), "--data-basedir", str(out / "DATA")),
            *("--results", str(root / "results"), "--workers", str(workers)),
        ]

    runs = {
        "baseline: nibabel dataobj + Pillow, 1 process (1 core)": lambda out: pinned(
            [sys.executable, "-c", BASELINE, str(out), *map(str, paths)], "0"
        ),
        "pipeline, 1 worker (1 core)": lambda out: pinned(ours(out, 1), "0"),
        "pipeline, 2 workers (2 cores)": lambda out: pinned(ours(out, 2), "0,1"),
    }
    seconds = {name: [] for name in runs}
    with fresh_folders(args.out / "outputs") as folders:
        timed(runs["pipeline, 1 worker (1 core)"](next(folders)))  # untimed: the raw check's MD5s get cached
        for _ in range(args.repeats):
            for name, command in runs.items():
                seconds[name].append(timed(command(next(folders)))[0])
    medians = {name: statistics.median(values) for name, values in seconds.items()}
    base = medians[next(iter(runs))]
    one = medians["pipeline, 1 worker (1 core)"]
    title = f"{args.volumes} volumes 512x512x300 int16, gzip 6"
    print(f"| {title} | seconds (median) | s/volume | vs baseline | vs 1 worker |")
    print("|---|---:|---:|---:|---:|")
    for name, median in medians.items():
        print(f"| {name} | {median:.2f} | {median / args.volumes:.2f} | {base / median:.1f}x | {one / median:.2f}x |")


if __name__ == "__main__":
    main()
