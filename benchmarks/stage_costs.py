"""Per-item costs of the stages besides the conversions (issue 42, item 4), for `medheb plan`:

- the raw checks: MD5 throughput of `file_digest` (what `check` runs on every download that has an MD5) on a
  file of --md5-mb MB, read cold (its pages dropped with posix_fadvise after an fsync: from the disk) and warm;
  the speed-up of hashing --md5-threads such files side by side on as many threads (what `check` does across
  a source's downloads, ChecksumCache.md5_all) over hashing them in turn, cold and warm; and the presence
  check's cost per file (glob and stat of --files empty files). The files are of real size: MedMNIST's 224 px
  npz archives, the ones `check` hashes, hold 1.2 GB (organcmnist_224) to 16 GB (pathmnist_224) of pixels
  before deflate (the registry's counts x 224 x 224 x channels), archives of hundreds of MB to GBs: 512 MB or
  more each;
- the validation and the fingerprints, per output file at real sizes: PNGs written by the pipeline's own
  encoder at the sizes the conversions write (28 px gray to 2880x2400 16-bit), each checked as `validate`
  checks a path (PathChecker, decode quick) and fingerprinted as `attest` does (fingerprint_job), one core;
  `plan` interpolates between the sizes by a file's bytes.

It writes preprocess/registry/stage_costs.yaml (the figures `preprocess/sizing/stages.py` reads) and prints
the measurements. Everything runs in one process on files under --out (default benchmarks/out/stage-costs),
deleted at the end.

    python benchmarks/stage_costs.py [--md5-mb 1024] [--md5-threads 2] [--files 20000] [--repeats 3]
    python benchmarks/stage_costs.py --md5-parallel-only [--md5-mb 512]  # that figure alone, the others kept
"""

from __future__ import annotations

import argparse
import concurrent.futures
import datetime
import glob
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from repeats import samples, scratch  # noqa: E402

from preprocess.formats.fsutil import file_digest  # noqa: E402
from preprocess.formats.pngio import encode_png  # noqa: E402
from preprocess.verify.attest import Job, fingerprint_job  # noqa: E402
from preprocess.verify.validate import PathChecker  # noqa: E402

OUT = REPO / "preprocess" / "registry" / "stage_costs.yaml"
# (name, shape, dtype, files): the output images the conversions write, smallest to largest
SIZES = [
    ("28 px gray (MedMNIST 28)", (28, 28), np.uint8, 2000),
    ("224 px RGB (MedMNIST 224)", (224, 224, 3), np.uint8, 400),
    ("512 px gray (CT slice, window)", (512, 512), np.uint8, 200),
    ("512 px 16-bit (CT slice, HU)", (512, 512), np.uint16, 100),
    ("1024 px RGB (dermoscopy)", (1024, 1024, 3), np.uint8, 30),
    ("2880x2400 16-bit (VinDr-CXR)", (2880, 2400), np.uint16, 10),
]


def field(shape, dtype, seed: int) -> np.ndarray:
    """A smooth field plus noise: what PNG's deflate sees in a medical image, not flat colour nor pure noise."""
    rng = np.random.default_rng(seed)
    height, width = shape[:2]
    y, x = np.mgrid[0:height, 0:width]
    smooth = (np.sin(x / (width / 6 + 1)) + np.cos(y / (height / 5 + 1)) + 2) / 4
    top = np.iinfo(dtype).max if dtype == np.uint16 else 255
    base = smooth * top * 0.8 + rng.normal(0, top * 0.02, smooth.shape)
    if len(shape) == 3:
        base = np.stack([base * (0.8 + 0.1 * c) for c in range(shape[2])], axis=-1)
    return np.clip(base, 0, top).astype(dtype)


def write_download(path: Path, megabytes: int, seed: int = 0) -> int:
    """A file of `megabytes` MB of random bytes on the disk (fsync'ed); its size."""
    block = np.random.default_rng(seed).integers(0, 256, 1 << 24, dtype=np.uint8).tobytes()  # 16 MiB
    with open(path, "wb") as handle:
        for _ in range(max(1, megabytes * 1_000_000 // len(block))):
            handle.write(block)
        handle.flush()
        os.fsync(handle.fileno())
    return path.stat().st_size


def drop_pages(*paths: Path) -> None:
    """These files' pages only, out of the page cache: the next read is from the disk."""
    for path in paths:
        fd = os.open(path, os.O_RDONLY)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        os.close(fd)


def md5_rate(folder: Path, megabytes: int, repeats: int) -> tuple[float, float]:
    """(cold, warm) MB/s of file_digest over one file of `megabytes`."""
    path = folder / "download.bin"
    size = write_download(path, megabytes)
    cold, warm = samples(
        repeats, lambda: file_digest(path, "md5"), lambda: file_digest(path, "md5"), before=lambda: drop_pages(path)
    )
    path.unlink()
    return statistics.median(size / 1e6 / s for s in cold), statistics.median(size / 1e6 / s for s in warm)


def md5_parallel(folder: Path, megabytes: int, threads: int, repeats: int) -> tuple[float, float]:
    """(cold, warm) speed-up of hashing `threads` files of `megabytes` each on as many threads (a pool, as
    ChecksumCache.md5_all runs them: hashlib lets go of the GIL while it digests a chunk) over hashing them one
    after another; each the median of `repeats` pairs, cold with every file's pages dropped before each run."""
    paths = [folder / f"download{n}.bin" for n in range(threads)]
    for n, path in enumerate(paths):
        write_download(path, megabytes, seed=n)

    def serial():
        for path in paths:
            file_digest(path, "md5")

    def parallel():
        with concurrent.futures.ThreadPoolExecutor(threads) as pool:
            list(pool.map(lambda path: file_digest(path, "md5"), paths))

    cold = []
    for _ in range(repeats):
        (one,) = samples(1, serial, before=lambda: drop_pages(*paths))[0]
        (many,) = samples(1, parallel, before=lambda: drop_pages(*paths))[0]
        cold.append(one / many)
    serial()  # every file in the page cache
    warm = [one / many for one, many in zip(*samples(repeats, serial, parallel), strict=True)]
    for path in paths:
        path.unlink()
    return statistics.median(cold), statistics.median(warm)


def stat_seconds(folder: Path, files: int) -> float:
    """Seconds per file of a presence check: the registry glob's matches, each stat'ed."""
    tree = folder / "presence"
    for n in range(files):
        sub = tree / f"p{n % 100:02d}"
        sub.mkdir(parents=True, exist_ok=True)
        (sub / f"f{n}.nii.gz").touch()
    started = time.perf_counter()
    for match in glob.iglob(os.path.join(glob.escape(str(tree)), "**/*.nii.gz"), recursive=True):
        os.stat(match)
    return (time.perf_counter() - started) / files


def check_seconds(root: Path, names: list[str], repeats: int) -> list[list[float]]:
    """Seconds of validate's checks (PathChecker) and of attest's fingerprints of the files `names`, a repeat."""
    real = os.path.realpath(root)
    checker = None

    def fresh_checker():  # a new one each repeat: it remembers its answers
        nonlocal checker
        checker = PathChecker(root)

    def check():
        assert all(checker.problem(n) is None for n in names)

    def fingerprint():
        for n in names:
            fingerprint_job(Job("bench", n, os.path.join(real, n), (real,)))

    return samples(repeats, check, fingerprint, before=fresh_checker)


def per_file(folder: Path, repeats: int) -> list[dict]:
    """Per size: bytes per file, validate's and attest's seconds per file (medians of `repeats`)."""
    found = []
    for index, (name, shape, dtype, count) in enumerate(SIZES):
        root = folder / f"size{index}"
        root.mkdir()
        images = [field(shape, dtype, seed) for seed in range(min(count, 8))]
        names = []
        for n in range(count):
            (root / f"{n}.png").write_bytes(encode_png(images[n % len(images)]))
            names.append(f"{n}.png")
        size = statistics.mean((root / n).stat().st_size for n in names)
        validate, attest = ([s / count for s in seconds] for seconds in check_seconds(root, names, repeats))
        found.append(
            {
                "name": name,
                "bytes": round(size),
                "validate_s": statistics.median(validate),
                "attest_s": statistics.median(attest),
            }
        )
        print(f"{name}: {size:,.0f} B; validate {found[-1]['validate_s'] * 1e6:,.0f} us, attest "
              f"{found[-1]['attest_s'] * 1e6:,.0f} us a file")  # fmt: skip
    return found


def parallel_figure(folder: Path, megabytes: int, threads: int, repeats: int) -> dict:
    """The `md5_parallel` entry of stage_costs.yaml: the speed-up at `threads`, with the machine's load."""
    cold, warm = md5_parallel(folder, megabytes, threads, repeats)
    print(f"MD5 of {threads} files of {megabytes} MB on {threads} threads: {cold:.2f}x from the disk, "
          f"{warm:.2f}x from the cache, over one after another")  # fmt: skip
    return {
        "threads": threads,
        "file_mb": megabytes,
        "speedup": round(cold, 2),  # from the disk, as md5_mb_per_s: what `plan` prices a check with
        "speedup_cached": round(warm, 2),
        "measured": datetime.date.today().isoformat(),
        "load_average": round(os.getloadavg()[0], 1),  # `uptime`'s first figure when it ended
    }


def write(document: dict) -> None:
    OUT.write_text(
        "# Written by benchmarks/stage_costs.py: the raw checks', the validation's and the fingerprints' costs\n"
        + yaml.safe_dump(document, sort_keys=False),
        encoding="utf-8",
    )
    print(f"wrote {OUT}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--md5-mb", type=int, default=1024)
    # as many files and threads as the machine has cores (at most 4): a thread beyond the cores measures nothing
    parser.add_argument("--md5-threads", type=int, default=min(4, os.cpu_count() or 1))
    parser.add_argument("--md5-parallel-only", action="store_true", help="measure the MD5 speed-up alone and "
                        "replace that entry of stage_costs.yaml, keeping the other figures")  # fmt: skip
    parser.add_argument("--files", type=int, default=20000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "out" / "stage-costs")
    args = parser.parse_args()
    if args.md5_parallel_only:
        document = yaml.safe_load(OUT.read_text(encoding="utf-8"))
        with scratch(args.out) as folder:
            figure = parallel_figure(folder, args.md5_mb, args.md5_threads, args.repeats)
        document["md5_parallel"] = figure  # in its place when there, else at the end
        write(document)
        return
    with scratch(args.out) as folder:
        cold, warm = md5_rate(folder, args.md5_mb, args.repeats)
        print(f"MD5 of a {args.md5_mb} MB file: {cold:,.0f} MB/s from the disk, {warm:,.0f} MB/s from the cache")
        parallel = parallel_figure(folder, args.md5_mb, args.md5_threads, args.repeats)
        stat = stat_seconds(folder, args.files)
        print(f"presence check: {stat * 1e6:.1f} us a file (glob and stat of {args.files:,})")
        sizes = per_file(folder, args.repeats)
    write(
        {
            "measured": datetime.date.today().isoformat(),
            "basis": "benchmarks/stage_costs.py, one core of the shared 2-core machine, files on its ext4 disk",
            "md5_mb_per_s": round(cold, 1),
            "md5_mb_per_s_cached": round(warm, 1),
            "md5_parallel": parallel,
            "presence_seconds_per_file": float(f"{stat:.3g}"),
            "load_average": round(os.getloadavg()[0], 1),  # a shared machine: the figures are as slow as it was
            "sizes": [
                {**s, "validate_s": float(f"{s['validate_s']:.3g}"), "attest_s": float(f"{s['attest_s']:.3g}")}
                for s in sizes
            ],
        }
    )


if __name__ == "__main__":
    main()
