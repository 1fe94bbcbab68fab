"""Time the ways of reading one 512x512x300 int16 .nii.gz (gzip level 6) into memory; medians of 5 reads.

python benchmarks/volume_readers.py [--volume PATH]   (default: the first volume volume_path.py made)
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import nibabel as nib
import numpy as np
import SimpleITK as sitk

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from preprocess.volumes.io import read_nifti  # noqa: E402


def readers(path: Path) -> dict:
    return {
        "nibabel get_fdata (float64)": lambda: nib.load(str(path)).get_fdata(),
        "nibabel dataobj (int16)": lambda: np.asarray(nib.load(str(path)).dataobj),
        "SimpleITK ReadImage + array": lambda: sitk.GetArrayFromImage(sitk.ReadImage(str(path))),
        "pipeline: header parse + ISA-L inflate (int16)": lambda: read_nifti(path).data,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    default = REPO / "benchmarks" / "out" / "volume_path" / "4-volumes" / "raw" / "CT-RATE" / "dataset" / "valid_fixed"
    parser.add_argument("--volume", type=Path, default=next(iter(sorted(default.glob("*/*/*.nii.gz"))), None))
    args = parser.parse_args()
    sitk.ProcessObject.SetGlobalDefaultNumberOfThreads(1)
    rows = []
    for name, read in readers(args.volume).items():
        seconds = []
        for _ in range(5):
            started = time.perf_counter()
            array = read()
            seconds.append(time.perf_counter() - started)
            del array
        rows.append((name, statistics.median(seconds)))
    print("| reader (one thread) | seconds (median of 5) |")
    print("|---|---:|")
    for name, value in rows:
        print(f"| {name} | {value:.2f} |")


if __name__ == "__main__":
    main()
