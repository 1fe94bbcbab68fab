"""Per-path costs of the validation's and the fingerprints' shards and merges (issue 42, item 4), for `medheb
plan` and the workflow's cut (preprocess/sizing/verifyjobs.py):

- validate_list_s: a validation shard's walk over the subset's records, listing its paths without checking one
  (verify/validateshards.py, Listing), per path;
- validate_merge_s: the merge's reading of the shards' answers and its walk over the records with them, per path;
- attest_list_s: a fingerprint shard's listing of the subset's images (attest.named_images), per path;
- attest_merge_s: the merge of a subset's shard files into its fingerprint file (fingerprintfile.merge), per line.

The subset is the shipped registry's APTOS, its test task file of --paths records, one image each (the most
records a path: a CT volume's records name a series of slices each, so its walk costs less a path). The checks
themselves (a path's lstat and header, an image's decode) are stage_costs.py's. It writes
preprocess/registry/shard_costs.yaml and prints the figures; everything runs in one process on files under
--out (default benchmarks/out/verify-shards), deleted at the end.

    python benchmarks/verify_shards.py [--paths 100000] [--shards 4] [--repeats 3]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import sys
from pathlib import Path

import numpy as np
import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from repeats import samples, scratch  # noqa: E402

from preprocess.formats.pngio import encode_png  # noqa: E402
from preprocess.registry import layout  # noqa: E402
from preprocess.registry.loader import load_registry  # noqa: E402
from preprocess.verify import validateshards  # noqa: E402
from preprocess.verify.attest import named_images  # noqa: E402
from preprocess.verify.fingerprintfile import OK, Entry, merge, write_entries  # noqa: E402
from preprocess.verify.validate import validate_subset  # noqa: E402

OUT = REPO / "preprocess" / "registry" / "shard_costs.yaml"
SUBSET = "2D_Task/APTOS"


def tree(folder: Path, paths: int):
    """DATA_BASEDIR with the subset's first task file naming `paths` images (one 28 px PNG's bytes each)."""
    registry = load_registry(extras=False)
    subset = registry.subset(SUBSET)
    task = subset.tasks[0]  # image_cls: one image a record
    root = layout.task_image_root(folder, task)
    root.mkdir(parents=True)
    png = encode_png(np.arange(28 * 28, dtype=np.uint8).reshape(28, 28))
    names = [f"{n:07d}.png" for n in range(paths)]
    for name in names:
        (root / name).write_bytes(png)
    records = [{"qry_text": "which grade?", "qry_img_path": name, "tgt_text": ["grade 0"]} for name in names]
    task_dir = layout.task_dir(folder, subset)
    task_dir.mkdir(parents=True)
    (task_dir / task.file).write_text(json.dumps(records, indent=1), encoding="utf-8")
    return registry, subset


def measure(folder: Path, paths: int, shards: int, repeats: int) -> dict:
    registry, subset = tree(folder, paths)
    answers = []
    for shard in range(shards):  # the shards' files, each checking its slice
        answers.append(folder / f"answers-{shard}.json")
        rows = validateshards.shard_answers(
            lambda make: validate_subset(registry, subset, folder, checker_class=make), folder, shard, shards
        )
        validateshards.write_shard(answers[-1], subset.key, shard, shards, rows)
    entries = [Entry(subset.key, f"x/{n:07d}.png", OK, "L", "uint8", "28x28", f"{n:064x}") for n in range(paths)]
    parts = [folder / f"part-{shard}.tsv" for shard in range(shards)]
    for shard, part in enumerate(parts):
        write_entries(part, entries[shard::shards])
    made: list = []  # the listings of a repeat's shard walk

    def listing(*args, **kwargs):
        made.append(validateshards.Listing(*args, **kwargs))
        return made[-1]

    def list_walk():  # a shard's walk: the records read, their paths listed (Listing), none checked
        validate_subset(registry, subset, folder, checker_class=listing)

    def merge_walk():
        known = validateshards.read_answers(answers)
        validate_subset(registry, subset, folder, checker_class=validateshards.answering(folder, known))

    listed, merged, attest_listed, attest_merged = samples(
        repeats,
        list_walk,
        merge_walk,
        lambda: named_images(registry, subset, folder, None, False),
        lambda: merge(parts, folder / "merged.tsv"),
        before=made.clear,
    )
    assert sum(len(m.asked) for m in made) == paths  # the last walk listed every path
    return {
        "validate_list_s": statistics.median(listed) / paths,
        "validate_merge_s": statistics.median(merged) / paths,
        "attest_list_s": statistics.median(attest_listed) / paths,
        "attest_merge_s": statistics.median(attest_merged) / paths,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--paths", type=int, default=100_000)
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "out" / "verify-shards")
    args = parser.parse_args()
    with scratch(args.out) as folder:
        found = measure(folder, args.paths, args.shards, args.repeats)
    for key, value in found.items():
        print(f"{key}: {value * 1e6:,.1f} us a path")
    document = {
        "measured": datetime.date.today().isoformat(),
        "basis": f"benchmarks/verify_shards.py, {SUBSET}'s task file of {args.paths:,} records of one image, "
        f"{args.shards} shards, medians of {args.repeats}, one core of the shared 2-core machine",
        "load_average": round(os.getloadavg()[0], 1),  # a shared machine: the figures are as slow as it was
        **{key: float(f"{value:.3g}") for key, value in found.items()},
    }
    OUT.write_text(
        "# Written by benchmarks/verify_shards.py: the validation's and the fingerprints' shards and merges, a path\n"
        + yaml.safe_dump(document, sort_keys=False),
        encoding="utf-8",
    )
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
