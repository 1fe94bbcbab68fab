"""The file-creation floor of a conversion: write the files of a built tree again, as an atomic writer must.

Takes the files a conversion wrote (every regular file under `--tree`, in the order the pipeline wrote them:
by file name, then folder, which for MedMNIST's `{split}_{index:06d}.png` is image order) and writes the same
bytes under the same relative names into `--out` (a new folder), each the way the pipeline's writer must at
the least: create a temporary name beside it (O_EXCL | O_NOFOLLOW), write, close, rename it to the name. The
folders are made in the timed part too, as the pipeline makes them. Nothing else: no encoding, no path
formatting beyond a list made before timing, no look at the name first, no manifest or journal. What the
pipeline does beyond this is its own work; this is what any tool writing these files atomically pays the
kernel, plus the few microseconds of a Python loop around four os calls.

Prints `created N files in X s` (wall seconds of the timed part). Run it pinned to the CPU the pipeline ran
on, right after the pipeline's run, on the same disk (benchmarks/medmnist_unpack.py does).

    python benchmarks/creation_floor.py --tree DATA/2D_Images/TissueMNIST --out fresh/folder
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def tree_files(tree: Path) -> list[tuple[str, bytes]]:
    """(relative path, bytes) of every regular file under `tree`, hidden ones (locks, temporaries) left out,
    ordered by file name and then folder: the order the pipeline wrote them in."""
    found = []
    for root, folders, names in os.walk(tree):
        folders[:] = [name for name in folders if not name.startswith(".")]
        for name in names:
            if not name.startswith("."):
                full = os.path.join(root, name)
                found.append((name, os.path.relpath(full, tree), full))
    found.sort()
    return [(relative, Path(full).read_bytes()) for _, relative, full in found]


def create(out: Path, files: list[tuple[str, bytes]]) -> float:
    """Seconds to create `files` under `out` atomically (temporary name, write, close, rename)."""
    base = os.fspath(out)
    jobs = []  # (temporary, name, bytes), formatted before timing
    for relative, data in files:
        name = os.path.join(base, relative)
        folder, leaf = os.path.split(name)
        jobs.append((os.path.join(folder, f".{leaf}.floor.part"), name, data))
    folders = sorted({os.path.dirname(name) for _, name, _ in jobs})
    started = time.perf_counter()
    for folder in folders:
        os.makedirs(folder)
    for tmp, name, data in jobs:
        descriptor = os.open(tmp, _NEW_FILE, 0o666)
        written = os.write(descriptor, data)  # a few hundred bytes: one write takes them all
        os.close(descriptor)
        if written != len(data):
            raise OSError(f"short write to {tmp}: {written} of {len(data)} bytes")
        os.rename(tmp, name)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tree", type=Path, required=True, help="a built tree whose files are written again")
    parser.add_argument("--out", type=Path, required=True, help="a new folder to write them into")
    args = parser.parse_args()
    files = tree_files(args.tree)
    if not files:
        raise SystemExit(f"no files under {args.tree}")
    os.sync()  # the reading above and earlier runs' dirty pages are not written back during the timed part
    seconds = create(args.out, files)
    print(f"created {len(files)} files in {seconds:.3f} s ({seconds / len(files) * 1e6:.1f} us a file)")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
