"""Where one CT-RATE volume's conversion spends its time, stage by stage, in one process (one core).

Runs the pipeline's own functions on one fake of benchmarks/volume_path.py (make them first: run that benchmark,
or pass any 512x512x300 int16 .nii.gz), each stage `--repeats` times on the same volume, and prints the median
seconds of each stage. The reference DRR's parts come from cProfile's own-time of the calls inside it (the
mu lookups, the morphology, ...), scaled to the DRR's unprofiled median. The process's start-up (interpreter,
registry, configuration, raw check, plan) is not here: volume_path.py gives it, as a whole process's wall
minus the job's own timing.

    python benchmarks/volume_profile.py [--repeats 5] [PATH.nii.gz]
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from preprocess.convert.outputs import Png, write  # noqa: E402
from preprocess.formats.pngio import encode_png  # noqa: E402
from preprocess.volumes.drr import reference_drr  # noqa: E402
from preprocess.volumes.io import read_volume  # noqa: E402
from preprocess.volumes.recipes import LUNG  # noqa: E402  (CT-RATE's window, the ct_rate recipe's)
from preprocess.volumes.slicer import reference_slices  # noqa: E402

FAKE = "benchmarks/out/volume_path/4-volumes/raw/CT-RATE/dataset/valid_fixed/valid_1/valid_1_a/valid_1_a_1.nii.gz"

# The DRR's calls by cProfile's names, with the row they are reported under; the rest is "exp, percentiles, ...".
DRR_PARTS = {
    "take": "mu looked up per voxel of the body box (np.take)",
    "morphologyEx": "body mask: close then open (cv2.morphologyEx)",
    "add_slice": "body test, box copy, mu times the mask (NumPy operators)",
    "reduce": "sums over y (and the percentiles' reductions)",
    "boundingRect": "the body test's box (cv2.boundingRect)",
}


def median_seconds(work, repeats: int):
    """Median wall seconds of `work()` over `repeats` runs after one untimed run, and its last result."""
    result, times = work(), []
    for _ in range(repeats):
        started = time.perf_counter()
        result = work()
        times.append(time.perf_counter() - started)
    return statistics.median(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("path", nargs="?", type=Path, default=REPO / FAKE)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    from isal import igzip_lib

    rows: list[tuple[str, float]] = []

    def stage(name: str, work):
        seconds, result = median_seconds(work, args.repeats)
        rows.append((name, seconds))
        return result

    stage("one ISA-L inflate of the whole file (the floor's)", lambda: _inflate(args.path, igzip_lib))
    volume = stage("read: nibabel's header + one ISA-L inflate of the voxels", lambda: read_volume(args.path))
    slices = stage("64 slices windowed through the table", lambda: reference_slices(volume, LUNG))
    stage("64 slice PNG encodes (libdeflate level 1)", lambda: [encode_png(image) for _, image in slices])
    drr = stage("reference DRR", lambda: reference_drr(volume))
    drr_seconds = rows[-1][1]
    for name, seconds in _drr_parts(volume, drr_seconds):
        rows.append((f"  DRR: {name}", seconds))
    stage("DRR PNG encode", lambda: encode_png(drr))
    with tempfile.TemporaryDirectory() as base:
        outputs = [Png(Path(base) / "sliced" / name, image) for name, image in slices]
        outputs.append(Png(Path(base) / "drr" / "drr_ap.png", drr))
        encode = sum(seconds for name, seconds in rows if "encode" in name)
        written = stage("65 PNGs written (encode, SHA-256, atomic write)", lambda: _write_all(outputs, Path(base)))
        rows.append(("  of which not the encodes", rows[-1][1] - encode))
    print(f"| one volume {'x'.join(map(str, volume.data.shape))} {volume.data.dtype}, 1 core | seconds (median) |")
    print("|---|---:|")
    for name, seconds in rows:
        print(f"| {name} | {seconds:.3f} |")
    conversion = rows[1][1] + rows[2][1] + drr_seconds + rows[-2][1]
    print(f"\n- one volume's conversion (read, slices, DRR, 65 PNGs written): {conversion:.3f} s; {written} outputs")


def _inflate(path: Path, igzip_lib) -> bytes:
    with open(path, "rb") as handle:
        return igzip_lib.decompress(handle.read(), flag=igzip_lib.DECOMP_GZIP)


def _write_all(outputs: list[Png], base: Path) -> int:
    """Every output through the pipeline's writer into a fresh folder (a file already there is not written)."""
    folder = Path(tempfile.mkdtemp(dir=base))
    for output in outputs:
        write(Png(folder / output.path.relative_to(base), output.pixels), folder, overwrite=False)
    return len(outputs)


def _drr_parts(volume, drr_seconds: float) -> list[tuple[str, float]]:
    """The DRR's parts by cProfile's own time of each call, scaled so that they add up to its wall median."""
    profiler = cProfile.Profile()
    profiler.runcall(reference_drr, volume)
    stats = pstats.Stats(profiler).stats
    parts = dict.fromkeys(DRR_PARTS.values(), 0.0)
    total = rest = 0.0
    for (_, _, function), (_, _, own, _, _) in stats.items():
        total += own
        label = next((row for key, row in DRR_PARTS.items() if key in function), None)
        if label is None:
            rest += own
        else:
            parts[label] += own
    parts["exp, percentiles, window, resize, crop, the rest"] = rest
    return [(name, own / total * drr_seconds) for name, own in parts.items()]


if __name__ == "__main__":
    main()
