"""Real-size fakes: the demo's trees, names and side files, with N items per source at the upstream's real
dimensions, dtypes, bit depths, compression and file organisation (benchmarks/item_costs.py measures the
conversions on them; docs/benchmarks.md lists each size and where it comes from).

The demo is written first (every source present, the literal release tree); then each source whose dataset folder's
fakes.py has a `real_size` writer (preprocess/demo/folders.py) has its raw folder written again with N real-size
items through the demo's own helpers (DICOM, NIfTI, NRRD, npz, parquet and zip writers), and the subsets whose
outputs the release's records name get task JSONs naming those items. Pixel content comes from
preprocess/demo/fields.py (smooth fields plus noise, seeded), so compressed sizes are realistic. Big: a few GB at
--items 20; made at run time, never committed.
"""

from __future__ import annotations

import inspect
import json
import shutil
from pathlib import Path

import yaml

from preprocess.demo import folders
from preprocess.demo.files import put
from preprocess.demo.real_npz import write_variant_configs
from preprocess.formats import textparse
from preprocess.rawdata.register import observed_files
from preprocess.registry import layout
from preprocess.registry.loader import load_registry

# source id -> the fakes.py module of its dataset folder, shipped then extra, for those with a real-size writer
FAKES = folders.real_size_fakes()
WRITERS = {source_id: module.real_size for source_id, module in FAKES.items()}


def write_real(
    directory: Path, items: int, sources=None, seed: int = 0, full_counts: bool = False, counts: dict | None = None
) -> Path:
    """Write the demo into DIRECTORY, then `items` real-size items of each source (all of WRITERS, or
    `sources`; `counts` gives some sources another number, or for a source with sizes {variant: number}) over
    the demo's copy; the overrides and the record-driven task JSONs follow the new items. A source with
    variants is written at each, and DIRECTORY/variants/SOURCE-VARIANT/config.yaml builds the other choices."""
    from preprocess.demo import _write

    directory = Path(directory).resolve()
    if directory.exists() and any(directory.iterdir()):
        raise FileExistsError(f"{directory} is not empty; real-size fakes are written into a new folder")
    chosen = list(WRITERS) if sources is None else list(sources)
    unknown = sorted(set(chosen) - set(WRITERS))
    if unknown:
        raise ValueError(f"no real-size writer for {', '.join(unknown)}; choose among {', '.join(WRITERS)}")
    directory.mkdir(parents=True, exist_ok=True)
    _write(directory)
    registry = load_registry()
    raw_root, data_basedir = directory / "raw", directory / "DATA_BASEDIR"
    overrides = textparse.read_yaml(directory / "registry-overrides.yaml")
    for source_id in chosen:  # before any is written: MedMNIST 2D and 3D share one folder
        shutil.rmtree(layout.raw_dir(raw_root, registry.source(source_id)), ignore_errors=True)
    for source_id in chosen:
        source = registry.source(source_id)
        base = layout.raw_dir(raw_root, source)
        module = FAKES[source_id]
        takes = inspect.signature(module.real_size).parameters
        extra = {"full_counts": full_counts} if "full_counts" in takes else {}
        # the seed offset of its fakes.py: one of its own per source, whichever others are written (MIMIC-CXR-JPG
        # and Chest ImaGenome share the run's); REAL_ITEMS_OF: a source whose items are another's
        count = (counts or {}).get(getattr(module, "REAL_ITEMS_OF", source_id), items)
        for task_file, records in module.real_size(base, count, seed + module.REAL_SEED, **extra).items():
            if task_file.endswith(".jsonl"):  # Train_Data: one record a line
                put(data_basedir / task_file, "".join(json.dumps(record) + "\n" for record in records))
            else:
                put(data_basedir / task_file, json.dumps(records, indent=1))
        overrides["sources"][source_id] = {"files": observed_files(source, raw_root)[0]}
    (directory / "registry-overrides.yaml").write_text(
        "# Real-size fakes: their own counts and MD5s.\n" + yaml.safe_dump(overrides, sort_keys=True), encoding="utf-8"
    )
    (directory / "config.yaml").write_text(
        yaml.safe_dump(
            {
                "raw_root": str(raw_root),
                "data_basedir": str(data_basedir),
                "registry_overrides": str(directory / "registry-overrides.yaml"),
                "subsets": "all",
            },
        ),
        encoding="utf-8",
    )
    write_variant_configs(directory, chosen)
    return directory
