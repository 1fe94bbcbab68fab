"""`eval-config DATA_BASEDIR --out DIR`: the evaluation's config files for the task files built there."""

from __future__ import annotations

import sys
from pathlib import Path

from preprocess.cli.options import output, settings, tree_options

HELP = "the evaluation's 2D/3D/Text_Task.yaml for the built task files"


def arguments(p) -> None:
    tree_options(p)
    p.add_argument("--out", required=True, help="folder for 2D_Task.yaml, 3D_Task.yaml, Text_Task.yaml")


def run(args) -> int:
    """The evaluation's config files for the task files built under DATA_BASEDIR."""
    from preprocess.pipeline import steps
    from preprocess.pipeline.evalconfig import NAMES

    chosen = settings(args, require_raw=False, basedir="read", raw_must_exist=False)
    output(chosen, args, Path(args.out), "--out", names=NAMES)
    counts = steps.Build(chosen).eval_config(out=Path(args.out))
    for name, count in counts.items():
        print(f"{Path(args.out) / name}: {count} task files")
    if not any(counts.values()):
        print(f"error: no built task file under {chosen.data_basedir}", file=sys.stderr)
        return 1
    return 0
