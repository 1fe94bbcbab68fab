"""`validate DATA_BASEDIR`: every image path of every task file of a tree, with a verdict."""

from __future__ import annotations

from pathlib import Path

from preprocess.cli.options import output, settings, tree_options

HELP = "check every image path of every task JSON"


def arguments(p) -> None:
    tree_options(p)
    p.add_argument("--subset", nargs="+", help="only these subsets (then 'not built' is a failure)")
    p.add_argument("--decode", choices=["quick", "full"], help="quick (default) or full image decoding")
    p.add_argument("--report", help="write the JSON report (every failing path with its reason) here")


def run(args) -> int:
    from preprocess.pipeline.validation import validate_tree

    chosen = settings(args, require_raw=False, basedir="read", raw_must_exist=False)
    if args.report:
        output(chosen, args, Path(args.report), "--report")
    return validate_tree(chosen, chosen.registry(), args.results, args.subset, args.decode, args.report)
