"""`attest`: the pixel fingerprints of a built tree, and their comparison with another lab's
(preprocess/verify/attest.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from preprocess.convert.progress import terminal_stream
from preprocess.errors import PreprocessError
from preprocess.pipeline import names
from preprocess.verify import attest, fingerprintcompare


def attest_tree(settings, registry, subsets: list[str] | None, out: Path, workers: int = 1, report=None):
    """The fingerprints of `subsets` (default: the config's that are built) into `out`; its line on `report`
    (default standard output)."""
    raw_root = settings.raw_root if settings.raw_root_given and settings.raw_root.is_dir() else None
    chosen = [names.subset(registry, name) for name in subsets] if subsets else registry.select(settings.subsets)
    found = attest.attest(
        registry, chosen, settings.data_basedir, out, raw_root=raw_root, settings=settings, workers=workers,
        log=lambda line: print(line, file=sys.stderr), progress_interval=settings.progress_interval,
        bar_stream=terminal_stream(),
    )  # fmt: skip
    if not found.subsets:
        raise PreprocessError(f"no built image subset under {settings.data_basedir}: nothing to attest")
    print(f"{out}: {sum(found.counts.values())} images of {len(found.subsets)} subsets, tree {found.tree}", file=report)
    return found


def print_comparison(theirs: Path, mine: Path, as_json: bool = False, limit: int = 20) -> int:
    """The comparison of two fingerprint files, as text (`limit` paths per kind) or JSON; 1 when they differ."""
    found, headers = fingerprintcompare.compare(Path(theirs), Path(mine))
    if as_json:
        print(json.dumps(fingerprintcompare.comparison_json(found, headers), indent=2))
    else:
        print(fingerprintcompare.comparison_text(found, headers, limit))
    return 1 if fingerprintcompare.differs(found) else 0
