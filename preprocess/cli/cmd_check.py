"""`check`: the raw downloads a build reads: present, missing, incomplete, corrupt; what is still to fetch."""

from __future__ import annotations

from pathlib import Path

from preprocess.cli.options import data_options, settings

HELP = "check raw downloads: present, missing, incomplete, corrupt"


def arguments(p) -> None:
    data_options(p)
    p.add_argument("--source", nargs="+", help="sources to check (default: those of the selected subsets)")
    p.add_argument("--report-dir", help="write one JSON report per source here")
    p.add_argument("--strict", action="store_true", help="exit 1 when a source is not present")
    p.add_argument("--quiet", action="store_true", help="do not print instructions")


def run(args) -> int:
    from preprocess.pipeline import readiness

    chosen = settings(args, basedir="read")  # the release's task files are read there
    registry = chosen.registry()
    report_dir = Path(args.report_dir) if args.report_dir else None
    checks = readiness.check(chosen, registry, args.results, args.source, report_dir)
    readiness.print_check(chosen, registry, checks, args.results, quiet=args.quiet)
    not_present = [c for c in checks.values() if c.status != "present"]
    return 1 if (args.strict and not_present) else 0
