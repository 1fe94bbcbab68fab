"""Seconds per 512x512x300 CT volume for the opt-in physical DRR modes, next to the reference mode, in one run.

The reference mode against the authors' own recipe and the inflate floor, within the whole CT-RATE
conversion, is benchmarks/volume_path.py. Each command here is a whole process (reading included), run
interleaved; medians of the repeats. Volumes come from benchmarks/volume_path.py (run it first).

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
VOLUMES = REPO / "benchmarks" / "out" / "volume_path" / "4-volumes" / "raw" / "CT-RATE" / "dataset" / "valid_fixed"

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
        "pipeline, reference mode": [sys.executable, "-c", PIPELINE, str(volume), "reference"],
        "pipeline, physical parallel beam": [sys.executable, "-c", PIPELINE, str(volume), "parallel"],
        "pipeline, physical cone beam (512x512 detector)": [sys.executable, "-c", PIPELINE, str(volume), "cone"],
    }
    seconds = {name: [] for name in runs}
    for _ in range(args.repeats):
        for name, command in runs.items():
            started = time.perf_counter()
            subprocess.run(["taskset", "-c", "0", *command], check=True, capture_output=True, cwd=REPO)
            seconds[name].append(time.perf_counter() - started)
    print("| one 512x512x300 volume, whole process, 1 core | seconds (median) | min-max |")
    print("|---|---:|---:|")
    for name, values in seconds.items():
        print(f"| {name} | {statistics.median(values):.2f} | {min(values):.2f}-{max(values):.2f} |")


if __name__ == "__main__":
    main()
