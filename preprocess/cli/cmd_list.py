"""`list`: every subset of the registry, as a table, JSON, or the README's tables."""

from __future__ import annotations

HELP = "every subset: kind, sources, access, image root"


def arguments(p) -> None:
    p.add_argument("--json", action="store_true", help="one object per subset (the table's columns) instead")
    p.add_argument("--markdown", action="store_true", help="the table of the README")
    p.add_argument("--naming", action="store_true", help="the README's table of output-name templates")


def run(args) -> int:
    from preprocess.pipeline.info import list_text

    shown = "json" if args.json else "markdown" if args.markdown else "naming" if args.naming else None
    print(list_text(shown))
    return 0
