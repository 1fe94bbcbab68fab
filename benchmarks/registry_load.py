"""What loading the registry costs a process (every CLI command and every Snakemake job pays it once): the wall
seconds of a fresh interpreter that imports the loader and loads the shipped registry, the median of N runs,
against the same process stopping after the import (the difference is reading and checking the YAML files).

    .venv/bin/python benchmarks/registry_load.py [--runs 15] [--tree DIR]

--tree names another checkout's folder holding `preprocess/` (e.g. `git archive main preprocess | tar -x -C
DIR`), whose package is imported instead of this one: the same measurement before and after a change to the
registry's files.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import timed

IMPORT = "import preprocess.registry.loader as loader; print(loader.__file__)"
LOAD = IMPORT + "; r = loader.load_registry(extras=False); print(len(r.sources), len(r.subsets))"


def median_seconds(snippet: str, runs: int) -> float:
    return statistics.median(timed([sys.executable, "-c", snippet])[0] for _ in range(runs))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--tree", type=Path, help="a folder holding another checkout's preprocess/")
    args = parser.parse_args()
    if args.tree:  # PYTHONPATH comes before the editable install's finder
        os.environ["PYTHONPATH"] = str(args.tree.resolve())
    os.environ.pop("MEDHEB_EXTRA_REGISTRY", None)
    os.chdir(Path(args.tree or Path(__file__).resolve().parents[1]))
    _, shown = timed([sys.executable, "-c", LOAD])
    print(f"loader: {shown.split()[0]}; {shown.split()[1]} sources, {shown.split()[2]} subsets")
    imported, loaded = median_seconds(IMPORT, args.runs), median_seconds(LOAD, args.runs)
    print(
        f"median of {args.runs} fresh processes: import {imported:.3f} s, import + load {loaded:.3f} s, "
        f"load alone {loaded - imported:.3f} s"
    )


if __name__ == "__main__":
    main()
