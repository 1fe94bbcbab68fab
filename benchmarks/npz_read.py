"""Read one MedMNIST-sized npz member three ways and print CPU seconds and MB/s of pixels for each: numpy's
`np.load` (stdlib zlib, the whole array), `NpzFile.array` (ISA-L, the whole array in one call) and
`NpzFile.rows` (ISA-L in 1 MiB pieces, batches of items: what the conversions use, memory flat).

    python benchmarks/npz_read.py [--items 4000] [--rgb] [--repeats 5]

The member is an OrganAMNIST-like test split at 224 px (smooth fields plus noise, uint8), deflated by
`np.savez_compressed`; every way is run `repeats` times, interleaved, and the best CPU time is kept.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from peak_memory import smooth_images  # noqa: E402

from preprocess.formats.npzio import NpzFile  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=4000)
    parser.add_argument("--rgb", action="store_true", help="224 px RGB instead of gray")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    shape = (224, 224, 3) if args.rgb else (224, 224)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "organamnist_224.npz"
        np.savez_compressed(path, test_images=smooth_images(args.items, shape, 1))
        batches = [list(range(start, min(start + 256, args.items))) for start in range(0, args.items, 256)]

        def numpy_load():
            with np.load(path) as archive:
                return archive["test_images"]

        def whole():
            with NpzFile(path) as archive:
                return archive.array("test_images")

        def in_batches():
            with NpzFile(path) as archive:
                return list(archive.rows("test_images", batches))

        reference = numpy_load()  # untimed: every way reads the same pixels
        assert np.array_equal(whole(), reference) and np.array_equal(np.concatenate(in_batches()), reference)
        del reference
        ways = {"np.load": numpy_load, "NpzFile.array": whole, "NpzFile.rows (256-item batches)": in_batches}
        best = dict.fromkeys(ways, float("inf"))
        for _ in range(args.repeats):
            for name, way in ways.items():
                started = time.process_time()
                way()
                best[name] = min(best[name], time.process_time() - started)
        megabytes = args.items * int(np.prod(shape)) / 1e6
        print(
            f"{args.items} images {'x'.join(map(str, shape))}, {megabytes:.0f} MB of pixels, "
            f"{path.stat().st_size / 1e6:.0f} MB deflated"
        )
        for name, seconds in best.items():
            print(f"  {name}: {seconds:.2f} s CPU, {megabytes / seconds:.0f} MB/s")


if __name__ == "__main__":
    main()
