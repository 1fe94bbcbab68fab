"""`info NAME`: one subset or source, with how to download what the benchmark uses of it."""

from __future__ import annotations

HELP = "one subset or source, with download instructions"


def arguments(p) -> None:
    p.add_argument("name", help="a subset (e.g. 2D_Task/APTOS or APTOS) or a source id (see `list`)")
    p.add_argument("--json", action="store_true", help="the registry's record of it as JSON")
    p.add_argument("--config", help="a source's needed files are counted for this config (as `need`)")


def run(args) -> int:
    from preprocess.pipeline.info import info_text

    print(info_text(args.name, as_json=args.json, config=args.config))
    return 0
