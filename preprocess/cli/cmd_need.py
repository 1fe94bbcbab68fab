"""`need SOURCE...`: the raw files the build reads of a source, from the release's records."""

from __future__ import annotations

from preprocess.cli.options import data_options, settings

HELP = "the raw files the build reads of a source, from the release's records"


def arguments(p) -> None:
    p.add_argument("source", nargs="+", help="source ids (see `list`)")
    data_options(p)
    shown = p.add_mutually_exclusive_group()
    shown.add_argument("--urls", action="store_true", help="download URLs (for wget -i / aria2c -i) instead of paths")
    shown.add_argument("--hf", action="store_true", help="the `hf download --include` command of a Hugging Face source")


def run(args) -> int:
    from preprocess.pipeline.rawdata import print_needs

    chosen = settings(args, require_raw=False, raw_must_exist=False)
    shown = "urls" if args.urls else "hf" if args.hf else None
    print_needs(chosen, chosen.registry(), args.source, args.results, shown)
    return 0
