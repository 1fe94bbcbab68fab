"""`register SOURCE --out FILE`: the MD5s of your own raw copy of a source, as an override file."""

from __future__ import annotations

from pathlib import Path

from preprocess.cli.options import data_options, output, settings

HELP = "record MD5s of your own raw copy of a source (an override file)"


def arguments(p) -> None:
    p.add_argument("source")
    data_options(p)
    p.add_argument("--out", required=True, help="override YAML to write (use as registry_overrides)")


def run(args) -> int:
    from preprocess.pipeline.rawdata import register

    chosen = settings(args)
    output(chosen, args, Path(args.out), "--out")
    print(register(chosen, args.source, Path(args.out)))
    return 0
