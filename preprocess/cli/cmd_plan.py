"""`plan`: the estimate of a build, items, files, size, core-hours and jobs per subset and split."""

from __future__ import annotations

from preprocess.cli.options import data_options, positive, settings

HELP = "estimate items, files, size, core-hours and jobs per subset and split"


def arguments(p) -> None:
    data_options(p)
    p.add_argument(
        "--json", action="store_true", help="one object per conversion (and per raw check) instead of the table"
    )
    p.add_argument(
        "--cores",
        type=positive,
        nargs="+",
        default=[32, 256, 1024],
        metavar="N",
        help="wall time on N cores (default 32 256 1024)",
    )


def run(args) -> int:
    import time

    from preprocess.pipeline.settings import checked_registry
    from preprocess.pipeline.sizing import print_plan

    started = time.monotonic()
    chosen = settings(args, basedir="read")  # the release's task files name the items of some subsets
    registry = checked_registry(chosen)  # as a build would: a misspelt `shards` key is not ignored
    print_plan(chosen, registry, args.results, args.cores, as_json=args.json, started=started)
    return 0
