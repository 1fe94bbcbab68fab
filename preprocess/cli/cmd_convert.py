"""`convert SUBSET`: build one subset (or one shard of one conversion), as a workflow job does."""

from __future__ import annotations

from pathlib import Path

from preprocess.cli.options import data_options, output, positive, settings
from preprocess.errors import PreprocessError, quoted

HELP = "build one subset (or one shard of one conversion)"


def arguments(p) -> None:
    p.add_argument("subset")
    data_options(p)
    p.add_argument("--conversion", help="only this conversion of the subset")
    p.add_argument("--shard", default="1/1", help="I/N: build the I-th of N shards (default 1/1)")
    p.add_argument("--manifest", help="where to write the manifest (default under --results)")
    p.add_argument("--workers", type=positive, default=1, help="worker processes (default 1)")


def run(args) -> int:
    from preprocess.pipeline import names, steps

    chosen = settings(args, basedir="write")
    shard, shards = parse_shard(args.shard)
    manifest = Path(args.manifest) if args.manifest else None
    if manifest is not None:
        output(chosen, args, manifest, "--manifest")
    registry = chosen.registry()
    steps.Build(chosen, registry, args.results).convert(
        subset=names.subset(registry, args.subset).key,
        conversion=args.conversion,
        shard=shard,
        shards=shards,
        manifest=manifest,
        workers=args.workers,
        progress_bar=True,  # drawn only when standard error is a terminal; plain lines otherwise
    )
    return 0


def parse_shard(text: str) -> tuple[int, int]:
    """--shard I/N: (I - 1, N)."""
    try:
        index, count = (int(x) for x in text.split("/"))
        if not 1 <= index <= count:
            raise ValueError
    except ValueError:
        raise PreprocessError(f"--shard takes I/N with 1 <= I <= N, got {quoted(text)}") from None
    return index - 1, count
