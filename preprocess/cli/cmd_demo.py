"""`demo DIR`: the embedded demo, a tiny raw root and release tree (or, with --real-sizes, real-size fakes)."""

from __future__ import annotations

import argparse

from preprocess.cli.options import positive

HELP = "write the embedded demo: a tiny raw root and release tree"


def arguments(p) -> None:
    p.add_argument("directory")
    p.add_argument("--force", action="store_true", help="rewrite an existing demo")
    p.add_argument(
        "--release-images",
        action=argparse.BooleanOptionalAction,
        default=False,
        help="DATA_BASEDIR also gets what the release ships: the images of the open subsets (made by the reference"
        " rules, not by the conversions) and a LICENSE_NOTICE.md in each restricted image folder (default: off)",
    )
    p.add_argument(
        "--restricted-raw-only",
        action="store_true",
        help="the raw root keeps only the downloads of the ten subsets the release does not redistribute: with "
        "--release-images, a user who downloaded the release and fetched only what it lacks",
    )
    p.add_argument(
        "--real-sizes", action="store_true", help="the demo plus N items a source at the upstream's real sizes"
    )
    p.add_argument("--items", type=positive, default=4, help="--real-sizes: items a source (default 4)")
    p.add_argument("--sources", nargs="+", help="--real-sizes: only these sources (default all it knows)")
    p.add_argument("--full-counts", action="store_true", help="--real-sizes: also dermamnist_224 at full counts")


def run(args) -> int:
    from preprocess.pipeline import demo

    if args.real_sizes:
        print(demo.write_real_sizes(args.directory, args.items, args.sources, full_counts=args.full_counts))
    else:
        print(demo.write(args.directory, args.force, args.release_images, args.restricted_raw_only))
    return 0
