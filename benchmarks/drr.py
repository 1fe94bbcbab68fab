"""Seconds per 512x512x300 CT volume for the DRR modes, next to a reference-style baseline, in one run.

The baseline does the reference steps plainly: nibabel get_fdata (float64, whole volume), the body mask slice
by slice with skimage, numpy sums, skimage resize. Each command is a whole process (reading included), run
interleaved; medians of the repeats. Volumes come from benchmarks/volume_slicing.py (run it first).

    python benchmarks/drr.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
VOLUMES = REPO / "benchmarks" / "out" / "volumes" / "raw" / "CT-RATE" / "dataset" / "valid_fixed"

BASELINE = """
import sys
import nibabel as nib, numpy as np
from skimage.morphology import closing, opening
from skimage.transform import resize
image = nib.load(sys.argv[1])
hu = np.clip(image.get_fdata(), -1000, 1200)
mu = np.maximum(0.0025 * (hu / 1000 + 1), 0)
mask = np.stack([opening(closing(hu[:, :, k] > -700, np.ones((5, 5), bool)), np.ones((5, 5), bool))
                 for k in range(hu.shape[2])], axis=2)
sx, sy, sz = (float(np.linalg.norm(image.affine[:3, i])) for i in range(3))
p = np.exp(-(mu * mask).sum(axis=1) * sy)
lo, hi = np.percentile(p, [0.5, 99.5])
p = (1 - (np.clip(p, lo, hi) - lo) / (hi - lo)).T[::-1]
small = min(sx, sz)
p = resize(p, (round(p.shape[0] * sz / small), round(p.shape[1] * sx / small)), order=1, preserve_range=True)
"""

PIPELINE = """
import sys
from preprocess.volumes.io import read_volume
from preprocess.volumes.drr import DrrParams, physical_drr, reference_drr
volume = read_volume(__import__("pathlib").Path(sys.argv[1]))
mode = sys.argv[2]
if mode == "reference":
    reference_drr(volume)
else:
    physical_drr(volume, DrrParams(geometry=mode, detector_size=(512, 512) if mode == "cone" else None))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    volume = next(iter(sorted(VOLUMES.glob("*/*/*.nii.gz"))))
    runs = {
        "baseline: reference steps with get_fdata (float64)": [sys.executable, "-c", BASELINE, str(volume)],
        "pipeline, reference mode": [sys.executable, "-c", PIPELINE, str(volume), "reference"],
        "pipeline, physical parallel beam": [sys.executable, "-c", PIPELINE, str(volume), "parallel"],
        "pipeline, physical cone beam (512x512 detector)": [sys.executable, "-c", PIPELINE, str(volume), "cone"],
    }
    seconds = {name: [] for name in runs}
    for _ in range(args.repeats):
        for name, command in runs.items():
            started = time.perf_counter()
            subprocess.run(command, check=True, capture_output=True, cwd=REPO)
            seconds[name].append(time.perf_counter() - started)
    base = statistics.median(seconds[next(iter(runs))])
    print("| one 512x512x300 volume, whole process | seconds (median) | vs baseline |")
    print("|---|---:|---:|")
    for name, values in seconds.items():
        median = statistics.median(values)
        print(f"| {name} | {median:.2f} | {base / median:.1f}x |")


if __name__ == "__main__":
    main()
