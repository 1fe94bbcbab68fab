"""The real item of every source the real-size fakes write (preprocess/demo/real.py): what it is and where the
figure comes from, each given as `SIZE` by its dataset folder's fakes.py. docs/benchmarks.md shows this table;
costs.yaml entries name the item they were measured on."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Size:
    """One source's real item: what it is, and where the figure comes from."""

    item: str
    basis: str


def __getattr__(name: str):
    """SIZES, the `SIZE` of each dataset folder's fakes.py with a real-size writer (shipped, then extra), read
    when asked: those modules import Size from here."""
    if name == "SIZES":
        from preprocess.demo import folders

        return {source_id: module.SIZE for source_id, module in folders.real_size_fakes().items()}
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
