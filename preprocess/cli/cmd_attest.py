"""`attest`: the pixel fingerprints of a built tree, or their comparison with another lab's (--compare)."""

from __future__ import annotations

import sys
from pathlib import Path

from preprocess.cli.options import at_least_zero, data_options, output, positive, settings
from preprocess.errors import PreprocessError

HELP = "pixel fingerprints of the built tree, or --compare them with another's"


def arguments(p) -> None:
    p.add_argument(
        "target", nargs="?", metavar="DATA_BASEDIR | MINE", help="the tree (default: the config's), or with "
        "--compare a fingerprint file of yours",
    )  # fmt: skip
    data_options(p, basedir_positional=True)
    p.add_argument(
        "--out", help="the fingerprint file to write (with --compare and a tree: default RESULTS/attest/mine.tsv)"
    )
    p.add_argument(
        "--compare", metavar="THEIRS", help="fingerprint file to compare with (or a pipe: -, <(command)); exit 1 "
        "on any difference",
    )  # fmt: skip
    p.add_argument("--subset", nargs="+", help="only these subsets (default: the config's that are built)")
    p.add_argument("--workers", type=positive, default=1, help="worker processes decoding images (default 1)")
    p.add_argument("--limit", type=at_least_zero, default=20, help="differing paths listed per kind (default 20)")
    p.add_argument("--json", action="store_true", help="the comparison as JSON, every differing path")


def run(args) -> int:
    """Write the pixel fingerprints of a tree, or compare them with another lab's."""
    from preprocess.pipeline.fingerprints import print_comparison

    target = Path(args.target) if args.target else None
    if args.compare is None:
        if args.out is None:
            raise PreprocessError("attest needs --out FILE (where to write the fingerprints), or --compare THEIRS")
        _attest_tree(args, target, Path(args.out))
        return 0
    mine = target
    if target is None or target.is_dir():  # a tree: fingerprinted now, into --out or the results folder
        mine = Path(args.out) if args.out else args.results / "attest" / "mine.tsv"
        _attest_tree(args, target, mine, report=sys.stderr)  # standard output holds the comparison alone
    return print_comparison(Path(args.compare), mine, as_json=args.json, limit=args.limit)


def _attest_tree(args, data_basedir: Path | None, out: Path, report=None):
    from preprocess.pipeline.fingerprints import attest_tree

    args.data_basedir = str(data_basedir) if data_basedir is not None else None
    chosen = settings(args, require_raw=False, basedir="read", raw_must_exist=False)
    output(chosen, args, out, "--out")
    return attest_tree(chosen, chosen.registry(), args.subset, out, workers=args.workers, report=report)
