"""`status DATA_BASEDIR`: one line per subset: built, not built and why, failed; what to do next."""

from __future__ import annotations

from preprocess.cli.options import settings, tree_options

HELP = "one line per subset: built, not built and why, failed; what next"


def arguments(p) -> None:
    tree_options(p)
    p.add_argument("--json", action="store_true", help="the same as JSON: one object per subset, and the counts")


def run(args) -> int:
    from preprocess.pipeline.status import print_status

    chosen = settings(args, require_raw=False, basedir="read")
    return print_status(chosen, chosen.registry(), args.results, as_json=args.json)
